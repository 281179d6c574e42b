/** Several API servers on one real etcd behave as one (issue 17, item 3), and survive an etcd restart. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../src/cli/testing.js';
import { openEtcdStore } from '../src/store/etcd.js';
import { EtcdClient } from '../src/store/etcd/client.js';
import { etcdMissing, startEtcd, type EtcdProcess } from '../src/store/etcd/etcd-process.test-kit.js';
import { api, watchUntil } from './helpers/http.js';

if (etcdMissing) console.warn(`multi-server etcd tests skipped: ${etcdMissing}`);

const cm = (name: string, v: string): Record<string, unknown> => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v } });
const CMS = '/api/v1/namespaces/default/configmaps';

describe.skipIf(etcdMissing !== undefined)('API servers on one etcd', () => {
  let etcd: EtcdProcess;
  let a: TestApiServer;
  let b: TestApiServer;
  beforeAll(async () => {
    etcd = await startEtcd();
    const openStore = () => openEtcdStore({ endpoints: [etcd.endpoint], watchRetryMs: 100 });
    a = await startTestApiServer({ controllers: false, openStore });
    b = await startTestApiServer({ controllers: false, openStore });
  }, 60_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await etcd?.stop();
  });

  it('a write through one server is seen, in order, by a watcher of the other', async () => {
    const start = (await api(b, 'GET', CMS)).body.metadata.resourceVersion;
    const seen = watchUntil(b, `${CMS}?watch=true&resourceVersion=${start}`, (evs) => evs.length >= 3, { timeoutMs: 20_000 });
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
    expect((await api(b, 'GET', `${CMS}/read-after-write`)).body.metadata.resourceVersion).toBe(again.metadata.resourceVersion);
    const other = (await api(a, 'POST', '/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'list-after-write' } })).body;
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

  it('a watch resumed on the other server from the last resourceVersion misses and repeats nothing', async () => {
    const start = (await api(a, 'GET', CMS)).body.metadata.resourceVersion;
    const writes = ['r1', 'r2', 'r3', 'r4'];
    const firstWatch = watchUntil(a, `${CMS}?watch=true&resourceVersion=${start}`, (evs) => evs.length >= 2, { timeoutMs: 20_000 });
    for (const n of writes) expect((await api(a, 'POST', CMS, cm(n, n))).status).toBe(201);
    const before = await firstWatch;
    const last = before[1].object.metadata.resourceVersion;
    const resumed = await watchUntil(b, `${CMS}?watch=true&resourceVersion=${last}`, (evs) => evs.length >= 2, { timeoutMs: 20_000 });
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

  it('recovers without a restart when etcd restarts from its data dir; /readyz is false meanwhile', async () => {
    expect((await api(a, 'GET', '/readyz')).status).toBe(200);
    await etcd.halt();
    await expect.poll(async () => (await api(a, 'GET', '/readyz')).status, { timeout: 20_000 }).toBe(500);
    await etcd.restart();
    await expect.poll(async () => (await api(a, 'GET', '/readyz')).status, { timeout: 20_000 }).toBe(200);
    const start = (await api(b, 'GET', CMS)).body.metadata.resourceVersion;
    const seen = watchUntil(b, `${CMS}?watch=true&resourceVersion=${start}`, (evs) => evs.length >= 1, { timeoutMs: 20_000 });
    expect((await api(a, 'POST', CMS, cm('after-restart', '1'))).status).toBe(201);
    expect((await seen).map((e) => [e.type, e.object.metadata.name])).toEqual([['ADDED', 'after-restart']]);
  }, 60_000);
});
