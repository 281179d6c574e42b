/** Several API servers on one real etcd behave as one (issue 17, item 3), and survive an etcd restart. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../src/cli/testing.test-kit.js';
import { openEtcdStore } from '../src/store/etcd.js';
import { EtcdClient } from '../src/store/etcd/client.js';
import { etcdMissing, startEtcd, type EtcdProcess } from '../src/store/etcd/etcd-process.test-kit.js';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { loadKubeconfig } from '../src/client/kubeconfig.js';
import { listerWatcherFor, type ListerWatcher } from '../src/client/reflector.js';
import { RestClient } from '../src/client/rest.js';
import { isTombstone, newInformer, objectOf } from '../src/client/informer.js';
import { api, watchUntil } from './helpers/http.js';

if (etcdMissing) console.warn(`multi-server etcd tests skipped: ${etcdMissing}`);

const cm = (name: string, v: string): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name },
  data: { v },
});
const CMS = '/api/v1/namespaces/default/configmaps';

describe.skipIf(etcdMissing !== undefined)('API servers on one etcd', () => {
  let etcd: EtcdProcess;
  let a: TestApiServer;
  let b: TestApiServer;
  /** A server keeping only 5 events of history per resource, so that a resume falls out of it quickly. */
  let short: TestApiServer;
  beforeAll(async () => {
    etcd = await startEtcd();
    const openStore = () => openEtcdStore({ endpoints: [etcd.endpoint], watchRetryMs: 100 });
    a = await startTestApiServer({ controllers: false, openStore });
    b = await startTestApiServer({ controllers: false, openStore });
    short = await startTestApiServer({ controllers: false, openStore, watchCacheHistory: 5 });
  }, 60_000);
  afterAll(async () => {
    await short?.close();
    await a?.close();
    await b?.close();
    await etcd?.stop();
  });

  it('a write through one server is seen, in order, by a watcher of the other', async () => {
    const start = (await api(b, 'GET', CMS)).body.metadata.resourceVersion;
    const seen = watchUntil(b, `${CMS}?watch=true&resourceVersion=${start}`, (evs) => evs.length >= 3, {
      timeoutMs: 20_000,
    });
    const created = (await api(a, 'POST', CMS, cm('order', '1'))).body;
    const updated = (await api(a, 'PUT', `${CMS}/order`, { ...created, data: { v: '2' } })).body;
    expect((await api(a, 'DELETE', `${CMS}/order`)).status).toBe(200);
    const evs = await seen;
    expect(evs.map((e) => [e.type, e.object.data.v])).toEqual([
      ['ADDED', '1'],
      ['MODIFIED', '2'],
      ['DELETED', '2'],
    ]);
    expect(evs[0].object.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    expect(evs[1].object.metadata.resourceVersion).toBe(updated.metadata.resourceVersion);
    // A GET or a list on the other server right after a write sees it (consistent reads, as kube-apiserver's).
    const again = (await api(a, 'POST', CMS, cm('read-after-write', 'x'))).body;
    expect((await api(b, 'GET', `${CMS}/read-after-write`)).body.metadata.resourceVersion).toBe(
      again.metadata.resourceVersion,
    );
    const other = (
      await api(a, 'POST', '/api/v1/namespaces/default/secrets', {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'list-after-write' },
      })
    ).body;
    const listed = (await api(b, 'GET', '/api/v1/namespaces/default/secrets')).body;
    expect(listed.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toContain('list-after-write');
    expect(Number(listed.metadata.resourceVersion)).toBeGreaterThanOrEqual(Number(other.metadata.resourceVersion));
  });

  it('two updates from the same resourceVersion through two servers: exactly one wins, the other is 409', async () => {
    const created = (await api(a, 'POST', CMS, cm('race', '0'))).body;
    const results = await Promise.all([
      api(a, 'PUT', `${CMS}/race`, { ...created, data: { v: 'a' } }),
      api(b, 'PUT', `${CMS}/race`, { ...created, data: { v: 'b' } }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    const winner = results.find((r) => r.status === 200)!.body;
    expect(results.find((r) => r.status === 409)!.body.reason).toBe('Conflict');
    expect((await api(b, 'GET', `${CMS}/race`)).body.data).toEqual(winner.data);
  });

  it("an update right after another server's write starts from a stale cache and still decides on the current object", async () => {
    expect((await api(a, 'POST', CMS, cm('fresh', '0'))).status).toBe(201);
    for (let i = 1; i <= 10; i++) {
      // b writes; a's watch cache may not have that event yet when a is asked to build on it.
      const viaB = (
        await api(
          b,
          'PATCH',
          `${CMS}/fresh`,
          { data: { [`b${i}`]: 'x' } },
          { contentType: 'application/merge-patch+json' },
        )
      ).body;
      const put = await api(a, 'PUT', `${CMS}/fresh`, { ...viaB, data: { ...viaB.data, v: String(i) } });
      expect(put.status).toBe(200); // its resourceVersion is current in etcd: no 409 from a stale cache
      const patched = await api(
        b,
        'PATCH',
        `${CMS}/fresh`,
        { data: { [`c${i}`]: 'y' } },
        { contentType: 'application/merge-patch+json' },
      );
      const viaA = await api(
        a,
        'PATCH',
        `${CMS}/fresh`,
        { data: { [`a${i}`]: 'z' } },
        { contentType: 'application/merge-patch+json' },
      );
      expect(viaA.status).toBe(200);
      // a's patch applied to the current object, not to what its cache held
      expect(viaA.body.data).toMatchObject({ v: String(i), [`b${i}`]: 'x', [`c${i}`]: 'y', [`a${i}`]: 'z' });
      expect(Number(viaA.body.metadata.resourceVersion)).toBeGreaterThan(Number(patched.body.metadata.resourceVersion));
    }
  });

  it('a watch resumed on the other server from the last resourceVersion misses and repeats nothing', async () => {
    const start = (await api(a, 'GET', CMS)).body.metadata.resourceVersion;
    const writes = ['r1', 'r2', 'r3', 'r4'];
    const firstWatch = watchUntil(a, `${CMS}?watch=true&resourceVersion=${start}`, (evs) => evs.length >= 2, {
      timeoutMs: 20_000,
    });
    for (const n of writes) expect((await api(a, 'POST', CMS, cm(n, n))).status).toBe(201);
    const before = await firstWatch;
    const last = before[1].object.metadata.resourceVersion;
    const resumed = await watchUntil(b, `${CMS}?watch=true&resourceVersion=${last}`, (evs) => evs.length >= 2, {
      timeoutMs: 20_000,
    });
    expect([...before, ...resumed].map((e) => e.object.metadata.name)).toEqual(writes);
  });

  it('a continue token from before an etcd compaction answers 410 Expired', async () => {
    for (const n of ['p1', 'p2', 'p3']) expect((await api(a, 'POST', CMS, cm(n, n))).status).toBe(201);
    const first = (await api(a, 'GET', `${CMS}?limit=1`)).body;
    expect(first.metadata.continue).toBeTruthy();
    const later = (await api(a, 'POST', CMS, cm('p4', 'p4'))).body;
    const client = new EtcdClient({ endpoints: [etcd.endpoint] });
    try {
      await client.compact(Number(later.metadata.resourceVersion));
    } finally {
      client.close();
    }
    const next = await api(a, 'GET', `${CMS}?limit=1&continue=${encodeURIComponent(first.metadata.continue)}`);
    expect(next.status).toBe(410);
    expect(next.body).toMatchObject({ kind: 'Status', reason: 'Expired', code: 410 });
    // A fresh list works, and so does a watch from its resourceVersion.
    expect((await api(a, 'GET', `${CMS}?limit=1`)).status).toBe(200);
  });

  it('an informer keeps watching across a compaction; resumed past the history after one, it gets 410 and relists without missing anything', async () => {
    const client = new RestClient(await loadKubeconfig(short.kubeconfigPath));
    const ns = 'informed';
    const cms = client.resource('ConfigMap');
    const etcdClient = new EtcdClient({ endpoints: [etcd.endpoint] });
    const ac = new AbortController();
    try {
      await client.resource('Namespace').create({ metadata: { name: ns } });
      const put = (name: string, v: string): Promise<ConfigMap> =>
        cms.create({ metadata: { name, namespace: ns }, data: { v } });
      const compactNow = async (): Promise<void> => {
        const rev = Number((await cms.list({ namespace: ns })).metadata.resourceVersion);
        await etcdClient.compact(rev);
      };
      for (const n of ['i1', 'i2', 'i3']) await put(n, '1');
      // The informer's list/watch, counted; new watches wait while `hold` is set.
      const inner = listerWatcherFor(cms, { namespace: ns });
      let lists = 0;
      let hold: Promise<void> | undefined;
      let watchesHeld = 0;
      const lw: ListerWatcher<ConfigMap> = {
        list: (o) => (lists++, inner.list(o)),
        watch: (o) =>
          (async function* () {
            if (hold) {
              watchesHeld++;
              await hold;
            }
            yield* inner.watch(o);
          })(),
      };
      const deleted: { name: string; fromRelist: boolean }[] = [];
      const informer = newInformer<ConfigMap>({
        lw,
        name: 'configmaps',
        watchTimeoutSeconds: () => 1,
        backoff: { initialMs: 50, factor: 2, capMs: 500 },
      });
      // A deletion learned from a relist arrives as a tombstone (client-go's DeletedFinalStateUnknown).
      informer.addEventHandler({
        onDelete: (o) => deleted.push({ name: objectOf(o).metadata?.name ?? '', fromRelist: isTombstone(o) }),
      });
      const names = (): string[] =>
        informer.lister
          .list(ns)
          .map((c) => c.metadata?.name ?? '')
          .sort();
      void informer.run(ac.signal);
      await informer.waitForSync(ac.signal);
      expect(names()).toEqual(['i1', 'i2', 'i3']);

      // A compaction under an open watch does not disturb it.
      await compactNow();
      await put('i4', '1');
      await expect.poll(names, { timeout: 10_000 }).toEqual(['i1', 'i2', 'i3', 'i4']);
      expect(lists).toBe(1);

      // Disconnected (its watch timed out and the next one is held): more than the history, and another compaction.
      let release!: () => void;
      hold = new Promise<void>((r) => (release = r));
      await expect.poll(() => watchesHeld, { timeout: 10_000 }).toBe(1);
      for (let i = 5; i <= 12; i++) await put(`i${i}`, '1');
      await cms.delete('i1', { namespace: ns });
      await cms.update({ ...(await cms.get('i2', { namespace: ns })), data: { v: '2' } });
      await compactNow();
      hold = undefined;
      release();

      // The resume is refused (410 Expired), the informer relists, and its cache is the server's.
      await expect.poll(() => lists, { timeout: 15_000 }).toBe(2);
      const want = ['i10', 'i11', 'i12', 'i2', 'i3', 'i4', 'i5', 'i6', 'i7', 'i8', 'i9'];
      await expect.poll(names, { timeout: 10_000 }).toEqual(want);
      expect(deleted).toEqual([{ name: 'i1', fromRelist: true }]);
      expect(informer.lister.get(ns, 'i2')?.data).toEqual({ v: '2' });
      // And it watches on from the relist.
      await put('i13', '1');
      await expect.poll(names, { timeout: 10_000 }).toEqual([...want.slice(0, 3), 'i13', ...want.slice(3)]);
    } finally {
      ac.abort();
      etcdClient.close();
      client.close();
    }
  }, 60_000);

  it('recovers without a restart when etcd restarts from its data dir; /readyz is false meanwhile', async () => {
    expect((await api(a, 'GET', '/readyz')).status).toBe(200);
    await etcd.halt();
    await expect.poll(async () => (await api(a, 'GET', '/readyz')).status, { timeout: 20_000 }).toBe(500);
    await etcd.restart();
    await expect.poll(async () => (await api(a, 'GET', '/readyz')).status, { timeout: 20_000 }).toBe(200);
    const start = (await api(b, 'GET', CMS)).body.metadata.resourceVersion;
    const seen = watchUntil(b, `${CMS}?watch=true&resourceVersion=${start}`, (evs) => evs.length >= 1, {
      timeoutMs: 20_000,
    });
    expect((await api(a, 'POST', CMS, cm('after-restart', '1'))).status).toBe(201);
    expect((await seen).map((e) => [e.type, e.object.metadata.name])).toEqual([['ADDED', 'after-restart']]);
  }, 60_000);
});
