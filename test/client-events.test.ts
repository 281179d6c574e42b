import type { Event } from 'kubernetes-types/core/v1.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../src/cli/testing.test-kit.js';
import { newEventRecorder } from '../src/client/events.js';
import { FakeClock } from '../src/client/fake-clock.test-kit.js';
import { loadKubeconfig } from '../src/client/kubeconfig.js';
import { RestClient } from '../src/client/rest.js';

let srv: TestApiServer;
let client: RestClient;

beforeAll(async () => {
  srv = await startTestApiServer();
  client = new RestClient(await loadKubeconfig(srv.kubeconfigPath));
  await client.resource('Namespace').create({ metadata: { name: 'ev' } });
});
afterAll(async () => {
  client?.close();
  await srv?.close();
});

// Only our own events: controllers in the server may record events about the same objects.
const about = (events: Event[], name: string): Event[] =>
  events.filter(
    (e) =>
      e.involvedObject.name === name &&
      (e.source?.component === 'client-events-test' || e.source?.component === 'test'),
  );

describe('event recorder against the API server', () => {
  it('the same event twice is one Event with count 2 and a later lastTimestamp', async () => {
    const clock = new FakeClock(Date.parse('2026-02-01T10:00:00Z'));
    const rec = newEventRecorder({ client, component: 'client-events-test', clock });
    const pv = await client.resource('PersistentVolume').create({
      metadata: { name: 'ev-pv' },
      spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/ev' } },
    });
    rec.event(pv, 'Warning', 'VolumeFailedRecycle', 'no recycler plugin matched');
    await rec.flush();
    await clock.advance(5_000);
    rec.event(pv, 'Warning', 'VolumeFailedRecycle', 'no recycler plugin matched');
    await rec.flush();
    rec.event(pv, 'Normal', 'Other', 'a different reason');
    await rec.close();

    const events = about((await client.resource('Event').list({ namespace: 'default' })).items, 'ev-pv');
    expect(events).toHaveLength(2);
    const e = events.find((x) => x.reason === 'VolumeFailedRecycle');
    expect(e).toMatchObject({
      type: 'Warning',
      message: 'no recycler plugin matched',
      count: 2,
      firstTimestamp: '2026-02-01T10:00:00Z',
      lastTimestamp: '2026-02-01T10:00:05Z',
      source: { component: 'client-events-test' },
      reportingComponent: 'client-events-test',
      involvedObject: { kind: 'PersistentVolume', name: 'ev-pv', uid: pv.metadata?.uid, apiVersion: 'v1' },
    });
    expect(e?.metadata?.name).toMatch(/^ev-pv\.[0-9a-f]+$/);
  });

  it('events about a namespaced object go to its namespace', async () => {
    const rec = newEventRecorder({ client, component: 'test', host: 'node-a' });
    const cm = await client.resource('ConfigMap').create({ metadata: { name: 'ev-cm', namespace: 'ev' } });
    rec.event(cm, 'Normal', 'Seen', 'hello');
    await rec.close();
    const events = about((await client.resource('Event').list({ namespace: 'ev' })).items, 'ev-cm');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      source: { component: 'test', host: 'node-a' },
      reportingInstance: 'node-a',
      count: 1,
    });
  });

  it('a failed write is logged, never thrown to the caller', async () => {
    const rec = newEventRecorder({ client, component: 'test', maxTries: 1 });
    // namespace does not exist → the server refuses; the recorder must swallow it
    expect(() =>
      rec.event(
        { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'x', namespace: 'no-such-ns' } },
        'Normal',
        'R',
        'm',
      ),
    ).not.toThrow();
    await expect(rec.close()).resolves.toBeUndefined();
  });
});
