import { describe, expect, it } from 'vitest';
import { ctx, NOW, obj, texts } from './core.test-kit.js';
import { eventResource as ev } from './event.js';

const event = (rest: Record<string, unknown> = {}, namespace = 'default') =>
  obj(
    'Event',
    'pvc1.17c',
    {
      involvedObject: {
        kind: 'PersistentVolumeClaim',
        namespace: 'default',
        name: 'pvc1',
        uid: 'u1',
        apiVersion: 'v1',
        resourceVersion: '7',
      },
      reason: 'ProvisioningSucceeded',
      message: 'Successfully provisioned volume pv-1 \n',
      type: 'Normal',
      source: { component: 'persistentvolume-controller' },
      firstTimestamp: '2024-05-01T11:50:00Z',
      lastTimestamp: '2024-05-01T11:58:00Z',
      count: 2,
      ...rest,
    },
    namespace,
  );

describe('event', () => {
  it('discovery shape', () => {
    expect(ev).toMatchObject({ plural: 'events', shortNames: ['ev'], namespaced: true, hasStatus: false });
  });

  it('columns and row', () => {
    expect(ev.columns.map((c) => [c.name, c.priority])).toEqual([
      ['Last Seen', 0],
      ['Type', 0],
      ['Reason', 0],
      ['Object', 0],
      ['Subobject', 1],
      ['Source', 1],
      ['Message', 0],
      ['First Seen', 1],
      ['Count', 1],
      ['Name', 1],
    ]);
    expect(ev.row(event(), NOW)).toEqual([
      '2m',
      'Normal',
      'ProvisioningSucceeded',
      'persistentvolumeclaim/pvc1',
      '',
      'persistentvolume-controller',
      'Successfully provisioned volume pv-1',
      '10m',
      2,
      'pvc1.17c',
    ]);
  });

  it.each([
    ['no lastTimestamp → first', { lastTimestamp: undefined }, '10m', 2],
    [
      'new-API event: eventTime, no count',
      {
        firstTimestamp: undefined,
        lastTimestamp: undefined,
        count: undefined,
        eventTime: '2024-05-01T11:59:00.000000Z',
      },
      '60s',
      1,
    ],
    ['series', { series: { count: 5, lastObservedTime: '2024-05-01T11:59:30.000000Z' } }, '30s', 5],
  ])('times: %s', (_n, rest, last, count) => {
    const row = ev.row(event(rest), NOW);
    expect([row[0], row[8]]).toEqual([last, count]);
  });

  it('source falls back to reportingComponent and adds the host', () => {
    expect(ev.row(event({ source: { component: 'kubelet', host: 'node-1' } }), NOW)[5]).toBe('kubelet, node-1');
    expect(ev.row(event({ source: {}, reportingComponent: 'x-ctrl' }), NOW)[5]).toBe('x-ctrl');
  });

  it('field selectors kubectl describe uses', () => {
    const e = event();
    const f = ev.fieldSelectors;
    expect(Object.keys(f).sort()).toEqual([
      'involvedObject.apiVersion',
      'involvedObject.fieldPath',
      'involvedObject.kind',
      'involvedObject.name',
      'involvedObject.namespace',
      'involvedObject.resourceVersion',
      'involvedObject.uid',
      'reason',
      'reportingComponent',
      'source',
      'type',
    ]);
    expect([
      f['involvedObject.kind']?.(e),
      f['involvedObject.uid']?.(e),
      f.source?.(e),
      f.type?.(e),
      f['involvedObject.fieldPath']?.(e),
    ]).toEqual(['PersistentVolumeClaim', 'u1', 'persistentvolume-controller', 'Normal', '']);
  });

  it.each([
    ['valid', event(), []],
    ['cluster-scoped object in default', event({ involvedObject: { kind: 'PersistentVolume', name: 'pv1' } }), []],
    [
      'namespace mismatch',
      event({}, 'other'),
      ['involvedObject.namespace: Invalid value: "default": does not match event.namespace'],
    ],
    [
      'cluster-scoped object elsewhere',
      event({ involvedObject: { kind: 'Node', name: 'n' } }, 'kube-system'),
      ['involvedObject.namespace: Invalid value: "": does not match event.namespace'],
    ],
    ['no involvedObject, default namespace', event({ involvedObject: undefined }), []],
    [
      'no involvedObject elsewhere',
      event({ involvedObject: undefined }, 'ns1'),
      ['involvedObject.namespace: Invalid value: "": does not match event.namespace'],
    ],
    [
      'any old-style name',
      (() => {
        const e = event();
        e.metadata.name = 'Pod.Name_With.CAPS';
        return e;
      })(),
      [],
    ],
    [
      'a name with a slash',
      (() => {
        const e = event();
        e.metadata.name = 'a/b';
        return e;
      })(),
      ['metadata.name: Invalid value: "a/b": may not contain \'/\''],
    ],
    [
      'new-style event without reporting fields',
      event({ eventTime: '2024-05-01T11:59:00.000000Z', reason: '' }),
      [
        'reportingComponent: Required value',
        'reportingInstance: Required value',
        'action: Required value',
        'reason: Required value',
      ],
    ],
    [
      'new-style event, complete',
      event({
        eventTime: '2024-05-01T11:59:00.000000Z',
        reportingComponent: 'stowage.io/pv-controller',
        reportingInstance: 'host-1',
        action: 'Provision',
      }),
      [],
    ],
  ])('validation: %s', (_n, e, want) => {
    ev.prepareForCreate(e, ctx());
    expect(texts(ev.validateCreate(e, ctx()))).toEqual(want);
  });

  it('does not default timestamps', () => {
    const e = event({ firstTimestamp: undefined, lastTimestamp: undefined });
    ev.prepareForCreate(e, ctx());
    expect(e.firstTimestamp).toBeUndefined();
    expect(e.lastTimestamp).toBeUndefined();
  });
});
