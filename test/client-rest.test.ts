import { rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { PersistentVolume } from 'kubernetes-types/core/v1.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../src/cli/testing.test-kit.js';
import { loadKubeconfig } from '../src/client/kubeconfig.js';
import { RestClient } from '../src/client/rest.js';
import { retryOnConflict } from '../src/client/retry.js';
import {
  AlreadyExistsError,
  ConflictError,
  ExpiredError,
  InvalidError,
  NotFoundError,
  TimeoutError,
  UnauthorizedError,
  UnavailableError,
} from '../src/util/errors.js';

const pv = (name: string, labels: Record<string, string> = {}): PersistentVolume => ({
  metadata: { name, labels },
  spec: {
    capacity: { storage: '1Gi' },
    accessModes: ['ReadWriteOnce'],
    hostPath: { path: `/tmp/${name}` },
    storageClassName: 'slow',
  },
});

let srv: TestApiServer;
let client: RestClient;

beforeAll(async () => {
  srv = await startTestApiServer();
  client = new RestClient(await loadKubeconfig(srv.kubeconfigPath));
});
afterAll(async () => {
  client?.close();
  await srv?.close();
});

describe('REST client against the API server', () => {
  it('loads the kubeconfig: server, CA and token', async () => {
    const cfg = await loadKubeconfig(srv.kubeconfigPath);
    expect(cfg.server).toBe(srv.baseUrl);
    expect(cfg.token).toBe(srv.token);
    expect(cfg.caPem?.trim()).toBe(srv.caPem.trim());
  });

  it('create, get, update, conflict on a stale resourceVersion, AlreadyExists, NotFound', async () => {
    // ConfigMaps: no controller writes to them, so the only concurrent writer is this test.
    await client.resource('Namespace').create({ metadata: { name: 'rest-crud' } });
    const cms = client.resource('ConfigMap');
    const created = await cms.create({ metadata: { name: 'cm1', namespace: 'rest-crud' }, data: { a: '1' } });
    expect(created.kind).toBe('ConfigMap');
    expect(created.metadata?.uid).toBeTruthy();
    await expect(cms.create({ metadata: { name: 'cm1', namespace: 'rest-crud' } })).rejects.toBeInstanceOf(
      AlreadyExistsError,
    );
    const got = await cms.get('cm1', { namespace: 'rest-crud' });
    expect(got.data).toEqual({ a: '1' });
    const updated = await cms.update({ ...got, data: { a: '2' } });
    expect(updated.data).toEqual({ a: '2' });
    expect(updated.metadata?.resourceVersion).not.toBe(got.metadata?.resourceVersion);
    await expect(cms.update({ ...got, data: { a: '3' } })).rejects.toBeInstanceOf(ConflictError);
    await expect(client.resource('PersistentVolume').get('no-such-pv')).rejects.toBeInstanceOf(NotFoundError);
    // cluster-scoped create
    const p = await client.resource('PersistentVolume').create(pv('rest-pv1'));
    expect(p.spec?.capacity?.storage).toBe('1Gi');
  });

  it('422 Invalid names the field in its causes', async () => {
    const bad: PersistentVolume = {
      metadata: { name: 'rest-bad' },
      spec: { accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/x' } },
    };
    const err = await client
      .resource('PersistentVolume')
      .create(bad)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidError);
    expect((err as InvalidError).causes.map((c) => c.field)).toContain('spec.capacity');
  });

  it('patches: merge, json and strategic, on the object and on status', async () => {
    const pvs = client.resource('PersistentVolume');
    await pvs.create(pv('rest-patch'));
    const m = await pvs.patch('rest-patch', 'merge', { metadata: { annotations: { a: '1' } } });
    expect(m.metadata?.annotations?.a).toBe('1');
    const j = await pvs.patch('rest-patch', 'json', [{ op: 'replace', path: '/spec/storageClassName', value: 'fast' }]);
    expect(j.spec?.storageClassName).toBe('fast');
    const s = await pvs.patch('rest-patch', 'strategic', { metadata: { labels: { s: 'y' } } });
    expect(s.metadata?.labels?.s).toBe('y');
    const st = await pvs.patchStatus('rest-patch', 'merge', { status: { phase: 'Released' } });
    expect(st.status?.phase).toBe('Released');
    // Controllers may write the PV between our read and write: re-read on conflict.
    const us = await retryOnConflict(async () => {
      const cur = await pvs.get('rest-patch');
      return pvs.updateStatus({ ...cur, status: { phase: 'Failed', message: 'gone' } });
    });
    expect(us.status?.phase).toBe('Failed');
    // status writes do not change the spec
    expect(us.spec?.storageClassName).toBe('fast');
  });

  it('namespaced kinds: the object namespace is used; list by namespace', async () => {
    await client.resource('Namespace').create({ metadata: { name: 'rest-ns' } });
    const cms = client.resource('ConfigMap');
    await cms.create({ metadata: { name: 'c1', namespace: 'rest-ns' }, data: { k: 'v' } });
    const got = await cms.get('c1', { namespace: 'rest-ns' });
    expect(got.data).toEqual({ k: 'v' });
    const list = await cms.list({ namespace: 'rest-ns' });
    expect(list.items.map((c) => c.metadata?.name)).toEqual(['c1']);
    await expect(cms.get('c1', { namespace: 'default' })).rejects.toBeInstanceOf(NotFoundError);
  });

  it('lists with a label selector and in pages', async () => {
    const pvs = client.resource('PersistentVolume');
    for (let i = 0; i < 5; i++) await pvs.create(pv(`rest-page-${i}`, { group: 'paged' }));
    const sel = await pvs.list({ labelSelector: 'group=paged' });
    expect(sel.items).toHaveLength(5);
    const names: string[] = [];
    let cont: string | undefined;
    let pages = 0;
    do {
      const page = await pvs.list({ labelSelector: 'group=paged', limit: 2, continue: cont });
      names.push(...page.items.map((p) => p.metadata?.name ?? ''));
      cont = page.metadata.continue || undefined;
      pages++;
    } while (cont);
    expect(pages).toBe(3);
    expect(names.sort()).toEqual([0, 1, 2, 3, 4].map((i) => `rest-page-${i}`));
  });

  it('delete: preconditions, and deleteCollection by label', async () => {
    const pvs = client.resource('PersistentVolume');
    const p = await pvs.create(pv('rest-del', { group: 'del' }));
    await expect(pvs.delete('rest-del', { preconditions: { uid: 'not-the-uid' } })).rejects.toBeInstanceOf(
      ConflictError,
    );
    await pvs.delete('rest-del', { preconditions: { uid: p.metadata?.uid } });
    // pv-protection may keep it around with a deletionTimestamp; either way it is going
    const after = await pvs.get('rest-del').catch((e: unknown) => e);
    if (!(after instanceof NotFoundError)) expect((after as PersistentVolume).metadata?.deletionTimestamp).toBeTruthy();
    await pvs.create(pv('rest-dc-1', { group: 'dc' }));
    await pvs.create(pv('rest-dc-2', { group: 'dc' }));
    await pvs.deleteCollection({ labelSelector: 'group=dc' });
    const left = await pvs.list({ labelSelector: 'group=dc' });
    for (const item of left.items) expect(item.metadata?.deletionTimestamp).toBeTruthy();
  });

  it('watch streams ADDED, MODIFIED and DELETED from a resourceVersion', async () => {
    const cms = client.resource('ConfigMap');
    const list = await cms.list({ namespace: 'rest-ns' });
    const ctl = new AbortController();
    const seen: string[] = [];
    const done = (async () => {
      for await (const ev of cms.watch({
        namespace: 'rest-ns',
        resourceVersion: list.metadata.resourceVersion,
        signal: ctl.signal,
      })) {
        if (ev.type === 'ERROR') throw ev.error;
        seen.push(`${ev.type} ${ev.object.metadata?.name}`);
        if (ev.type === 'DELETED') ctl.abort();
      }
    })();
    await cms.create({ metadata: { name: 'w1', namespace: 'rest-ns' } });
    await cms.patch('w1', 'merge', { data: { x: '1' } }, { namespace: 'rest-ns' });
    await cms.delete('w1', { namespace: 'rest-ns' });
    await done;
    expect(seen).toEqual(['ADDED w1', 'MODIFIED w1', 'DELETED w1']);
  });

  it('open watches do not take the request pool: more watches than maxSockets, and writes and their events still flow', async () => {
    // An informer per kind (the garbage collector's) once filled a 32-socket pool, and every
    // ordinary request queued behind the watches for ever.
    const small = new RestClient({ ...(await loadKubeconfig(srv.kubeconfigPath)), maxSockets: 2, timeoutMs: 10_000 });
    const cms = small.resource('ConfigMap');
    const ctl = new AbortController();
    try {
      const rv = (await cms.list({ namespace: 'rest-ns' })).metadata.resourceVersion;
      const firstAdded = Array.from({ length: 4 }, async () => {
        for await (const ev of cms.watch({ namespace: 'rest-ns', resourceVersion: rv, signal: ctl.signal })) {
          if (ev.type === 'ERROR') throw ev.error;
          if (ev.type === 'ADDED') return ev.object.metadata?.name;
        }
        return undefined;
      });
      await cms.create({ metadata: { name: 'pool1', namespace: 'rest-ns' } });
      expect(await Promise.all(firstAdded)).toEqual(['pool1', 'pool1', 'pool1', 'pool1']);
      expect((await cms.get('pool1', { namespace: 'rest-ns' })).metadata?.name).toBe('pool1');
      await cms.delete('pool1', { namespace: 'rest-ns' });
    } finally {
      ctl.abort();
      small.close();
    }
  });

  it('a watch from a resourceVersion older than the history ends in ExpiredError', async () => {
    // A restarted server's watch history starts at the current revision (as kube-apiserver's
    // watch cache does): resuming from before it is 410 Expired.
    const first = await startTestApiServer({ keepData: true });
    const c1 = new RestClient(await loadKubeconfig(first.kubeconfigPath));
    const old = (await c1.resource('PersistentVolume').list()).metadata.resourceVersion;
    await c1.resource('PersistentVolume').create(pv('rest-expire'));
    c1.close();
    await first.close();
    const second = await startTestApiServer({ dataDir: first.dataDir });
    const c2 = new RestClient(await loadKubeconfig(second.kubeconfigPath));
    try {
      const outcome = await (async () => {
        try {
          for await (const ev of c2.resource('PersistentVolume').watch({ resourceVersion: old })) {
            if (ev.type === 'ERROR') return ev.error;
          }
          return undefined;
        } catch (e) {
          return e;
        }
      })();
      expect(outcome).toBeInstanceOf(ExpiredError);
    } finally {
      c2.close();
      await second.close();
      rmSync(first.dataDir, { recursive: true, force: true });
    }
  });

  it('a wrong token is Unauthorized', async () => {
    const cfg = await loadKubeconfig(srv.kubeconfigPath);
    const bad = new RestClient({ ...cfg, token: 'wrong' });
    await expect(bad.resource('Namespace').list()).rejects.toBeInstanceOf(UnauthorizedError);
    bad.close();
  });
});

describe('REST client transport failures', () => {
  let silent: Server;
  let port = 0;
  const sockets = new Set<Socket>();
  beforeAll(async () => {
    // Accepts connections and never answers.
    silent = createServer((s) => void sockets.add(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    port = (silent.address() as AddressInfo).port;
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => silent.close(() => r()));
  });

  it('a server that never answers → TimeoutError (retryable)', async () => {
    const c = new RestClient({ server: `http://127.0.0.1:${port}`, token: 't', timeoutMs: 200 });
    const err = await c
      .resource('Node')
      .list()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as TimeoutError).retryable).toBe(true);
    c.close();
  });

  it('connection refused → UnavailableError (retryable)', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const closedPort = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const c = new RestClient({ server: `https://127.0.0.1:${closedPort}`, token: 't' });
    const err = await c
      .resource('Node')
      .get('n')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnavailableError);
    c.close();
  });
});
