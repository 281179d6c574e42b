import { describe, expect, it } from 'vitest';
import { ctx, NOW, obj, texts } from './core.test-kit.js';
import { nodeResource as node } from './node.js';

const readyNode = (extra: Record<string, unknown> = {}) =>
  obj('Node', 'node-1', {
    spec: {},
    status: {
      conditions: [{ type: 'Ready', status: 'True' }],
      addresses: [
        { type: 'InternalIP', address: '10.0.0.5' },
        { type: 'Hostname', address: 'node-1' },
      ],
      nodeInfo: {
        kubeletVersion: 'v1.30.0',
        osImage: 'Debian 12',
        kernelVersion: '6.1.0',
        containerRuntimeVersion: '',
      },
    },
    ...extra,
  });

describe('node', () => {
  it('discovery shape', () => {
    expect(node).toMatchObject({ plural: 'nodes', shortNames: ['no'], namespaced: false, hasStatus: true });
  });

  it('columns and rows as kube prints them', () => {
    expect(node.columns.map((c) => [c.name, c.priority])).toEqual([
      ['Name', 0],
      ['Status', 0],
      ['Roles', 0],
      ['Age', 0],
      ['Version', 0],
      ['Internal-IP', 1],
      ['External-IP', 1],
      ['OS-Image', 1],
      ['Kernel-Version', 1],
      ['Container-Runtime', 1],
    ]);
    expect(node.row(readyNode(), NOW)).toEqual([
      'node-1',
      'Ready',
      '<none>',
      '5m',
      'v1.30.0',
      '10.0.0.5',
      '<none>',
      'Debian 12',
      '6.1.0',
      '<unknown>',
    ]);
  });

  it.each([
    ['no Ready condition', { status: {} }, {}, 'Unknown'],
    ['not ready', { status: { conditions: [{ type: 'Ready', status: 'False' }] } }, {}, 'NotReady'],
    ['cordoned', { spec: { unschedulable: true } }, {}, 'Ready,SchedulingDisabled'],
  ])('status: %s', (_n, extra, _labels, want) => {
    expect(node.row(readyNode(extra), NOW)[1]).toBe(want);
  });

  it('roles from labels, sorted', () => {
    const o = readyNode();
    o.metadata.labels = {
      'node-role.kubernetes.io/worker': '',
      'node-role.kubernetes.io/control-plane': '',
      'kubernetes.io/role': 'edge',
    };
    expect(node.row(o, NOW)[2]).toBe('control-plane,edge,worker');
  });

  it('spec.unschedulable selector', () => {
    expect(node.fieldSelectors['spec.unschedulable']?.(readyNode())).toBe('false');
    expect(node.fieldSelectors['spec.unschedulable']?.(readyNode({ spec: { unschedulable: true } }))).toBe('true');
  });

  it('keeps status on create, keeps it from old on update, spec on status update', () => {
    const o = readyNode();
    node.prepareForCreate(o, ctx());
    expect(o.status).toBeDefined();
    expect(node.validateCreate(o, ctx())).toEqual([]);
    const next = readyNode({ status: { conditions: [] }, spec: { unschedulable: true } });
    node.prepareForUpdate(next, o, ctx());
    expect(next.status).toEqual(o.status);
    expect(next.spec).toEqual({ unschedulable: true });
    const st = readyNode({ spec: { unschedulable: false }, status: { phase: 'x' } });
    node.prepareForStatusUpdate(st, o, ctx());
    expect(st.spec).toEqual({});
    expect(st.status).toEqual({ phase: 'x' });
  });

  it.each([
    [
      'bad taint effect',
      { taints: [{ key: 'k', effect: 'Sometimes' }] },
      'spec.taints[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
    ],
    ['taint without key', { taints: [{ effect: 'NoSchedule' }] }, 'spec.taints[0].key: Required value'],
  ])('validation: %s', (_n, spec, want) => {
    expect(texts(node.validateCreate(readyNode({ spec }), ctx()))).toEqual([want]);
  });

  it('providerID can be set once', () => {
    const old = readyNode({ spec: { providerID: 'a' } });
    const next = readyNode({ spec: { providerID: 'b' } });
    expect(texts(node.validateUpdate(next, old, ctx()))).toEqual([
      'spec.providerID: Forbidden: node updates may not change providerID except from "" to valid',
    ]);
    expect(node.validateUpdate(old, readyNode(), ctx())).toEqual([]);
  });

  it('patch meta of addresses', () => {
    expect(node.patchMeta(['status', 'addresses'])).toEqual({ strategy: 'merge', mergeKey: 'type' });
  });
});
