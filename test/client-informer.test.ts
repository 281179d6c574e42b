import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ConfigMap, Pod } from 'kubernetes-types/core/v1.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startControlPlane } from '../src/cli/controlplane.js';
import { startTestApiServer, type TestApiServer } from '../src/cli/testing.test-kit.js';
import { FakeClock } from '../src/client/fake-clock.test-kit.js';
import { informerFor, isTombstone, type Tombstone } from '../src/client/informer.js';
import { loadKubeconfig } from '../src/client/kubeconfig.js';
import { RestClient } from '../src/client/rest.js';
import { openSqliteStore } from '../src/store/sqlite.js';

let srv: TestApiServer;
let client: RestClient;

beforeAll(async () => {
  srv = await startTestApiServer();
  client = new RestClient(await loadKubeconfig(srv.kubeconfigPath));
  await client.resource('Namespace').create({ metadata: { name: 'inf' } });
});
afterAll(async () => {
  client?.close();
  await srv?.close();
});

function recorder<T extends { metadata?: { name?: string; resourceVersion?: string } }>() {
  const log: string[] = [];
  return {
    log,
    handler: {
      onAdd: (o: T) => log.push(`add ${o.metadata?.name}`),
      onUpdate: (a: T, b: T) => log.push(`update ${b.metadata?.name}${a === b ? ' (resync)' : ''}`),
      onDelete: (o: T | Tombstone<T>) =>
        log.push(isTombstone(o) ? `tombstone ${o.obj.metadata?.name}` : `delete ${o.metadata?.name}`),
    },
  };
}

describe('informer against the API server', () => {
  it('sees adds, updates and deletes; the lister and an index follow', async () => {
    const cms = client.resource('ConfigMap');
    await cms.create({ metadata: { name: 'pre', namespace: 'inf', labels: { app: 'x' } } });
    const inf = informerFor(client, 'ConfigMap', { namespace: 'inf', watchTimeoutSeconds: () => 60 });
    inf.addIndexer('app', (c: ConfigMap) => (c.metadata?.labels?.app ? [c.metadata.labels.app] : []));
    const r = recorder<ConfigMap>();
    inf.addEventHandler(r.handler);
    const ctl = new AbortController();
    const running = inf.run(ctl.signal);
    await inf.waitForSync();
    expect(r.log).toEqual(['add pre']);
    expect(inf.lister.get('inf', 'pre')?.kind).toBe('ConfigMap');

    await cms.create({ metadata: { name: 'c1', namespace: 'inf', labels: { app: 'y' } } });
    await cms.patch('c1', 'merge', { data: { k: 'v' } }, { namespace: 'inf' });
    await cms.delete('pre', { namespace: 'inf' });
    await vi.waitFor(() => expect(r.log).toEqual(['add pre', 'add c1', 'update c1', 'delete pre']), {
      timeout: 10_000,
    });
    expect(inf.lister.get('inf', 'c1')?.data).toEqual({ k: 'v' });
    expect(inf.lister.list('inf').map((c) => c.metadata?.name)).toEqual(['c1']);
    expect(inf.byIndex('app', 'y').map((c) => c.metadata?.name)).toEqual(['c1']);
    expect(inf.byIndex('app', 'x')).toEqual([]);
    ctl.abort();
    await running;
  });

  it('a field selector limits the informer to one node’s pods', async () => {
    const pods = client.resource('Pod');
    const pod = (name: string, nodeName: string): Pod => ({
      metadata: { name, namespace: 'inf' },
      spec: { nodeName, containers: [{ name: 'c', image: 'busybox' }] },
    });
    await pods.create(pod('on-n1', 'n1'));
    await pods.create(pod('on-n2', 'n2'));
    const inf = informerFor(client, 'Pod', { fieldSelector: 'spec.nodeName=n1' });
    const r = recorder<Pod>();
    inf.addEventHandler(r.handler);
    const ctl = new AbortController();
    const running = inf.run(ctl.signal);
    await inf.waitForSync();
    await pods.create(pod('on-n1-b', 'n1'));
    await pods.create(pod('on-n2-b', 'n2'));
    await vi.waitFor(() => expect(r.log).toEqual(['add on-n1', 'add on-n1-b']), { timeout: 10_000 });
    ctl.abort();
    await running;
    expect(
      inf.lister
        .list()
        .map((p) => p.metadata?.name)
        .sort(),
    ).toEqual(['on-n1', 'on-n1-b']);
  });

  it('resync re-delivers onUpdate(obj, obj) for every cached object', async () => {
    const clock = new FakeClock();
    const inf = informerFor(client, 'ConfigMap', { namespace: 'inf', clock, resyncMs: 30_000 });
    const r = recorder<ConfigMap>();
    inf.addEventHandler(r.handler);
    const ctl = new AbortController();
    const running = inf.run(ctl.signal);
    await inf.waitForSync();
    const n = inf.lister.list().length;
    expect(n).toBeGreaterThan(0);
    r.log.length = 0;
    await clock.advance(30_000);
    expect(r.log.filter((l) => l.endsWith('(resync)'))).toHaveLength(n);
    ctl.abort();
    await running;
  });
});

describe('informer across an API server restart', () => {
  it('resumes after the connection drops and relists on 410 (history lost), delivering a tombstone', async () => {
    const first = await startTestApiServer({ keepData: true });
    const dataDir = first.dataDir;
    const port = Number(new URL(first.baseUrl).port);
    const c1 = new RestClient(await loadKubeconfig(first.kubeconfigPath));
    let third: { close(): Promise<void> } | undefined;
    const ctl = new AbortController();
    let running: Promise<void> | undefined;
    try {
      await c1.resource('Namespace').create({ metadata: { name: 'rl' } });
      const cms = c1.resource('ConfigMap');
      await cms.create({ metadata: { name: 'keep', namespace: 'rl' } });
      await cms.create({ metadata: { name: 'gone', namespace: 'rl' } });
      const inf = informerFor(c1, 'ConfigMap', {
        namespace: 'rl',
        backoff: { initialMs: 50, factor: 2, capMs: 400 },
      });
      const r = recorder<ConfigMap>();
      inf.addEventHandler(r.handler);
      running = inf.run(ctl.signal);
      await inf.waitForSync();
      expect(r.log.sort()).toEqual(['add gone', 'add keep']);
      r.log.length = 0;
      await first.close();

      // While the informer cannot connect, another server on the same data changes things.
      const second = await startTestApiServer({ dataDir, keepData: true });
      const c2 = new RestClient(await loadKubeconfig(second.kubeconfigPath));
      await c2.resource('ConfigMap').delete('gone', { namespace: 'rl' });
      await c2.resource('ConfigMap').patch('keep', 'merge', { data: { v: '2' } }, { namespace: 'rl' });
      c2.close();
      await second.close();

      // Back on the original port: its watch history starts after the informer's resourceVersion.
      const store = openSqliteStore({ path: join(dataDir, 'stowage.db') });
      const plane = await startControlPlane({ store, dataDir, address: '127.0.0.1', port });
      third = { close: async () => (await plane.close(), await store.close()) };

      await vi.waitFor(() => expect(r.log.sort()).toEqual(['tombstone gone', 'update keep']), { timeout: 20_000 });
      expect(inf.lister.get('rl', 'keep')?.data).toEqual({ v: '2' });
      expect(inf.lister.get('rl', 'gone')).toBeUndefined();
    } finally {
      ctl.abort();
      await running;
      c1.close();
      await third?.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
