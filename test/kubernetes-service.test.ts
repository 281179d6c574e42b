/**
 * The `default/kubernetes` Service every API server maintains (kube-apiserver's kubernetes-service
 * controller with the lease endpoint reconciler): two API servers on one store, each publishing its
 * advertise address; a stopped one leaves at once, a dead one when its lease expires.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Endpoints, Service } from 'kubernetes-types/core/v1.js';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadKubeconfig, RestClient } from '../src/client/index.js';
import { startControlPlane, type ControlPlane } from '../src/cli/controlplane.js';
import { MASTER_LEASES_PREFIX, newStoreMasterLeases } from '../src/api/kubernetesservice/masterleases.js';
import { openSqliteStore } from '../src/store/sqlite.js';
import { openEtcdStore } from '../src/store/etcd.js';
import { toEtcdKey } from '../src/store/etcd/keys.js';
import { etcdMissing, startEtcd, type EtcdProcess } from '../src/store/etcd/etcd-process.test-kit.js';
import type { Store } from '../src/store/store.js';
import { hasKubectl } from './helpers/env.js';

const A = '192.0.2.10';
const B = '192.0.2.11';
// Short reconciler interval and lease TTL (kube-apiserver: 10 s / 15 s) so that expiry is quick.
const endpointReconciler = { intervalMs: 300, ttlMs: 1_000 };
const WAIT = { timeout: 20_000, interval: 100 };

describe('the default/kubernetes Service', () => {
  let store: Store;
  const dirs: string[] = [];
  let a: ControlPlane;
  let client: RestClient;
  const planes: ControlPlane[] = [];

  const start = async (advertiseAddress: string): Promise<ControlPlane> => {
    const dataDir = mkdtempSync(join(tmpdir(), 'stowage-kubesvc-'));
    dirs.push(dataDir);
    const p = await startControlPlane({
      store,
      dataDir,
      address: '127.0.0.1',
      port: 0,
      controllers: false,
      advertiseAddress,
      endpointReconciler,
    });
    planes.push(p);
    return p;
  };
  const ns = { namespace: 'default' };
  const service = (): Promise<Service> => client.resource('Service').get('kubernetes', ns);
  const addresses = async (): Promise<{ ep: string[]; slice: string[] }> => {
    const ep: Endpoints = await client.resource('Endpoints').get('kubernetes', ns);
    const slice: EndpointSlice = await client.resource('EndpointSlice').get('kubernetes', ns);
    return {
      ep: (ep.subsets ?? []).flatMap((s) => (s.addresses ?? []).map((x) => x.ip)),
      slice: slice.endpoints.flatMap((e) => e.addresses),
    };
  };

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stowage-kubesvc-db-'));
    dirs.push(dir);
    store = openSqliteStore({ path: join(dir, 'stowage.db') });
    a = await start(A);
    client = a.client;
  });
  afterAll(async () => {
    for (const p of planes.reverse()) await p.close().catch(() => undefined);
    await store?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('exists as in a cluster: ClusterIP 10.96.0.1, https 443 → the secure port, endpoints = the advertise address', async () => {
    await vi.waitFor(async () => expect((await addresses()).slice).toEqual([A]), WAIT);
    const svc = await service();
    expect(svc.metadata?.labels).toEqual({ component: 'apiserver', provider: 'kubernetes' });
    expect(svc.spec).toMatchObject({
      type: 'ClusterIP',
      clusterIP: '10.96.0.1',
      clusterIPs: ['10.96.0.1'],
      sessionAffinity: 'None',
      ports: [{ name: 'https', protocol: 'TCP', port: 443, targetPort: a.api.port }],
    });
    expect(svc.spec?.selector).toBeUndefined();
    const ep: Endpoints = await client.resource('Endpoints').get('kubernetes', ns);
    expect(ep.metadata?.labels).toEqual({ 'endpointslice.kubernetes.io/skip-mirror': 'true' });
    expect(ep.subsets).toEqual([
      { addresses: [{ ip: A }], ports: [{ name: 'https', port: a.api.port, protocol: 'TCP' }] },
    ]);
    const slice: EndpointSlice = await client.resource('EndpointSlice').get('kubernetes', ns);
    expect(slice.metadata?.labels).toEqual({ 'kubernetes.io/service-name': 'kubernetes' });
    expect(slice).toMatchObject({
      addressType: 'IPv4',
      endpoints: [{ addresses: [A], conditions: { ready: true } }],
      ports: [{ name: 'https', port: a.api.port, protocol: 'TCP' }],
    });
  });

  it('an idle reconciler rewrites nothing (no resourceVersion churn)', async () => {
    const before = (await client.resource('Endpoints').get('kubernetes', ns)).metadata?.resourceVersion;
    const sliceBefore = (await client.resource('EndpointSlice').get('kubernetes', ns)).metadata?.resourceVersion;
    // Several reconciler intervals: a positive signal that they ran is the master lease renewed meanwhile.
    const lease = async (): Promise<number | undefined> =>
      (await store.get(`${MASTER_LEASES_PREFIX}${A}`))?.modRevision;
    const l0 = await lease();
    await vi.waitFor(async () => expect(await lease()).toBeGreaterThan(l0 ?? 0), WAIT);
    const l1 = await lease();
    await vi.waitFor(async () => expect(await lease()).toBeGreaterThan(l1 ?? 0), WAIT);
    expect((await client.resource('Endpoints').get('kubernetes', ns)).metadata?.resourceVersion).toBe(before);
    expect((await client.resource('EndpointSlice').get('kubernetes', ns)).metadata?.resourceVersion).toBe(sliceBefore);
  });

  it.skipIf(!hasKubectl)("kubectl get svc kubernetes -o wide reads like a cluster's", async () => {
    const { stdout } = await promisify(execFile)(
      'kubectl',
      ['--kubeconfig', a.kubeconfigPath, 'get', 'svc', 'kubernetes', '-o', 'wide'],
      { timeout: 30_000 },
    );
    const [header, row, ...rest] = stdout.trim().split('\n');
    expect(header!.split(/\s+/)).toEqual(['NAME', 'TYPE', 'CLUSTER-IP', 'EXTERNAL-IP', 'PORT(S)', 'AGE', 'SELECTOR']);
    const cells = row!.split(/\s+/);
    expect([...cells.slice(0, 5), cells[6]]).toEqual([
      'kubernetes',
      'ClusterIP',
      '10.96.0.1',
      '<none>',
      '443/TCP',
      '<none>',
    ]);
    expect(rest).toEqual([]);
  });

  it('deleted, it comes back (Service, Endpoints and slice alike)', async () => {
    const uid = (await service()).metadata?.uid;
    await client.resource('Service').delete('kubernetes', ns);
    await client.resource('Endpoints').delete('kubernetes', ns);
    await client.resource('EndpointSlice').delete('kubernetes', ns);
    await vi.waitFor(async () => {
      const svc = await service();
      expect(svc.metadata?.uid).not.toBe(uid);
      expect(svc.spec?.clusterIP).toBe('10.96.0.1');
      expect(await addresses()).toEqual({ ep: [A], slice: [A] });
    }, WAIT);
  });

  it('a failure never stops the loop: while its ClusterIP is taken the lease is still renewed, and the Service comes back once it is free', async () => {
    await client.resource('Service').delete('kubernetes', ns);
    // Squatting its address: creating the kubernetes Service now fails (Invalid), round after round.
    await vi.waitFor(async () => {
      await client.resource('Service').create(
        {
          metadata: { name: 'squatter', namespace: 'default' },
          spec: { clusterIP: '10.96.0.1', ports: [{ port: 80 }] },
        },
        ns,
      );
    }, WAIT);
    const lease = async (): Promise<number> => (await store.get(`${MASTER_LEASES_PREFIX}${A}`))?.modRevision ?? 0;
    const l0 = await lease();
    await vi.waitFor(async () => expect(await lease()).toBeGreaterThan(l0), WAIT);
    const l1 = await lease();
    await vi.waitFor(async () => expect(await lease()).toBeGreaterThan(l1), WAIT);
    await client.resource('Service').delete('squatter', ns);
    await vi.waitFor(async () => expect((await service()).spec?.clusterIP).toBe('10.96.0.1'), WAIT);
  });

  it('a second API server on the same store joins; stopped, it leaves at once; a dead one drops out when its lease expires', async () => {
    const b = await start(B);
    await vi.waitFor(async () => expect(await addresses()).toEqual({ ep: [A, B], slice: [A, B] }), WAIT);
    await b.close();
    planes.splice(planes.indexOf(b), 1);
    await vi.waitFor(async () => expect(await addresses()).toEqual({ ep: [A], slice: [A] }), WAIT);

    // A server that died: its lease was written once and is never renewed nor removed.
    await newStoreMasterLeases({ store, ttlMs: endpointReconciler.ttlMs, clock: { now: () => Date.now() } }).update(
      '192.0.2.99',
    );
    await vi.waitFor(async () => expect((await addresses()).ep).toEqual([A, '192.0.2.99']), WAIT);
    await vi.waitFor(async () => expect(await addresses()).toEqual({ ep: [A], slice: [A] }), WAIT);
  });

  it("a Service asking for no particular ClusterIP never gets the kubernetes Service's address", async () => {
    const c = new RestClient(await loadKubeconfig(a.kubeconfigPath));
    try {
      const svc = await c
        .resource('Service')
        .create({ metadata: { name: 'web', namespace: 'default' }, spec: { ports: [{ port: 80 }] } }, ns);
      expect(svc.spec?.clusterIP).not.toBe('10.96.0.1');
      await expect(
        c.resource('Service').create(
          {
            metadata: { name: 'taken', namespace: 'default' },
            spec: { clusterIP: '10.96.0.1', ports: [{ port: 80 }] },
          },
          ns,
        ),
      ).rejects.toThrow(/already allocated/);
    } finally {
      c.close();
    }
  });
});

describe.skipIf(etcdMissing !== undefined)('the default/kubernetes Service on etcd', () => {
  let etcd: EtcdProcess;
  const stores: Store[] = [];
  const planes: ControlPlane[] = [];
  const dirs: string[] = [];
  beforeAll(async () => {
    etcd = await startEtcd();
  }, 30_000);
  afterAll(async () => {
    for (const p of planes) await p.close().catch(() => undefined);
    for (const s of stores) await s.close();
    await etcd?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('two API servers, each on its own etcd client: both listed, leases at <prefix>/masterleases/<ip>, every other object left alone', async () => {
    for (const ip of [A, B]) {
      const store = await openEtcdStore({ endpoints: [etcd.endpoint] });
      stores.push(store);
      const dataDir = mkdtempSync(join(tmpdir(), 'stowage-kubesvc-etcd-'));
      dirs.push(dataDir);
      planes.push(
        await startControlPlane({
          store,
          dataDir,
          address: '127.0.0.1',
          port: 0,
          controllers: false,
          advertiseAddress: ip,
          endpointReconciler,
        }),
      );
    }
    const client = planes[0]!.client;
    await vi.waitFor(async () => {
      const slice: EndpointSlice = await client.resource('EndpointSlice').get('kubernetes', { namespace: 'default' });
      expect(slice.endpoints.flatMap((e) => e.addresses)).toEqual([A, B]);
    }, WAIT);
    // Several lease sweeps later the namespaces are all still there.
    const leaseKeys = async (): Promise<string[]> =>
      (await stores[0]!.list(MASTER_LEASES_PREFIX)).items.map((kv) => kv.key);
    expect(await leaseKeys()).toEqual([`${MASTER_LEASES_PREFIX}${A}`, `${MASTER_LEASES_PREFIX}${B}`]);
    expect((await client.resource('Namespace').list()).items.map((n) => n.metadata?.name).sort()).toEqual([
      'default',
      'kube-node-lease',
      'kube-public',
      'kube-system',
    ]);
    expect(toEtcdKey('/registry', `${MASTER_LEASES_PREFIX}${A}`)).toBe(`/registry/masterleases/${A}`);
  });
});
