/**
 * Node identities end to end: `stowage up --address` runs its node agent as system:node:<name>
 * (provision, mount, Running, delete all pass the Node authorizer and NodeRestriction);
 * `stowage kubeconfig node` hands out a node's own kubeconfig, with which `stowage node` joins and
 * kubectl is told the truth (can-i) and kube's 403 messages.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, built, hasKubectl, isRoot } from './helpers/env.js';
import { issueClientCertificate, kubeconfigYaml } from '../src/api/tls.js';
import { loadKubeconfig } from '../src/client/kubeconfig.js';
import { RestClient } from '../src/client/rest.js';
import { whoAmI } from '../src/client/whoami.js';
import { api, type Target } from './helpers/http.js';
import { startUp, type RunningUp } from './helpers/up.js';
import { unmountUnder } from './helpers/runtime.js';

const run = promisify(execFile);
if (!built || !isRoot) console.warn('node identity tests skipped: they need root and a build (npm test builds)');
if (!hasKubectl) console.warn('node identity kubectl checks skipped: kubectl is not on PATH');

// A second loopback address: the serving certificate must name it for kubectl and the node to connect.
const ADDRESS = '127.0.0.2';

describe.skipIf(!built || !isRoot)('node identities', () => {
  let dir: string;
  let up: RunningUp;
  let t: Target;
  let joined: ChildProcess | undefined;
  const kc = (node: string): string => join(dir, `${node}.kubeconfig`);
  const kubectl = async (
    kubeconfig: string,
    ...args: string[]
  ): Promise<{ stdout: string; stderr: string; code: number }> => {
    try {
      const r = await run('kubectl', ['--kubeconfig', kubeconfig, ...args], { timeout: 30_000 });
      return { stdout: r.stdout, stderr: r.stderr, code: 0 };
    } catch (e) {
      const err = e as { stdout?: string; stderr?: string; code?: number };
      return { stdout: err.stdout ?? '', stderr: err.stderr ?? '', code: typeof err.code === 'number' ? err.code : 1 };
    }
  };
  const tokenOf = (path: string): string => /token: (\S+)/.exec(readFileSync(path, 'utf8'))![1]!;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'stowage-nodeid-'));
    up = await startUp(join(dir, 'data'), 'n1', ['--address', ADDRESS]);
    t = up.target;
    for (const node of ['n1', 'n2']) {
      const r = await run(process.execPath, [BIN, 'kubeconfig', 'node', node, '--kubeconfig', up.kubeconfigPath]);
      writeFileSync(kc(node), r.stdout, { mode: 0o600 });
    }
  }, 60_000);

  afterAll(async () => {
    if (joined?.exitCode === null) {
      joined.kill('SIGTERM');
      await new Promise((r) => joined!.once('exit', r));
    }
    if (up) {
      up.child.kill('SIGTERM');
      await up.exit;
    }
    if (dir) {
      await unmountUnder(dir);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('up serves on --address and writes the kubeconfig for it; a node kubeconfig carries the node token, never the admin one', () => {
    expect(t.baseUrl).toMatch(new RegExp(`^https://${ADDRESS.replace(/\./g, '\\.')}:\\d+$`));
    expect(readFileSync(up.kubeconfigPath, 'utf8')).toContain(`server: ${t.baseUrl}`);
    const n1 = readFileSync(kc('n1'), 'utf8');
    expect(n1).toContain(`server: ${t.baseUrl}`);
    expect(n1).toContain('- name: system:node:n1');
    expect(tokenOf(kc('n1'))).not.toBe(t.token);
    expect(tokenOf(kc('n1'))).toMatch(/^n1\./);
  });

  it("up's own node agent, as system:node:n1, provisions, mounts, runs and finishes a pod with a claim, a secret and a configmap", async () => {
    const ns = 'default';
    await api(t, 'POST', `/api/v1/namespaces/${ns}/secrets`, { metadata: { name: 's1' }, stringData: { k: 'v' } });
    await api(t, 'POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'cm1' }, data: { a: 'b' } });
    await api(t, 'POST', `/api/v1/namespaces/${ns}/persistentvolumeclaims`, {
      metadata: { name: 'c1' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } } },
    });
    const pod = await api(t, 'POST', `/api/v1/namespaces/${ns}/pods`, {
      metadata: { name: 'p1' },
      spec: {
        containers: [{ name: 'c', image: 'busybox', envFrom: [{ configMapRef: { name: 'cm1' } }] }],
        volumes: [
          { name: 'data', persistentVolumeClaim: { claimName: 'c1' } },
          { name: 'sec', secret: { secretName: 's1' } },
        ],
      },
    });
    expect(pod.status).toBe(201);
    await expect
      .poll(async () => (await api(t, 'GET', `/api/v1/namespaces/${ns}/pods/p1`)).body?.status?.phase, {
        timeout: 30_000,
      })
      .toBe('Running');
    const node = (await api(t, 'GET', '/api/v1/nodes/n1')).body;
    expect(node.status.conditions.find((c: { type: string }) => c.type === 'Ready')?.status).toBe('True');
    expect((await api(t, 'GET', '/apis/storage.k8s.io/v1/csinodes/n1')).body?.spec?.drivers?.length).toBe(1);

    // With its pod there, the node may read its claim; another node may not.
    const asNode = (node: string, path: string) => api(t, 'GET', path, undefined, { token: tokenOf(kc(node)) });
    expect((await asNode('n1', `/api/v1/namespaces/${ns}/persistentvolumeclaims/c1`)).status).toBe(200);
    expect((await asNode('n2', `/api/v1/namespaces/${ns}/persistentvolumeclaims/c1`)).body?.message).toBe(
      `persistentvolumeclaims "c1" is forbidden: User "system:node:n2" cannot get resource "persistentvolumeclaims" in API group "" in the namespace "default": no relationship found between node 'n2' and this object`,
    );

    expect((await api(t, 'DELETE', `/api/v1/namespaces/${ns}/pods/p1`)).status).toBe(200);
    await expect
      .poll(async () => (await api(t, 'GET', `/api/v1/namespaces/${ns}/pods/p1`)).status, { timeout: 30_000 })
      .toBe(404);
    expect((await api(t, 'DELETE', `/api/v1/namespaces/${ns}/persistentvolumeclaims/c1`)).status).toBe(200);
    await expect
      .poll(async () => (await api(t, 'GET', '/api/v1/persistentvolumes')).body?.items?.length, { timeout: 30_000 })
      .toBe(0);
    // Everything the node agent wrote was allowed: no refusal was answered to it.
    const metrics = (await api(t, 'GET', '/metrics', undefined, { accept: 'text/plain' })).text;
    expect(
      metrics.split('\n').filter((l) => l.startsWith('apiserver_request_total') && l.includes('code="403"')),
    ).toEqual([expect.stringContaining('resource="persistentvolumeclaims"')]);
  }, 90_000);

  it('stowage node joins with the node kubeconfig from another process, as that node', async () => {
    joined = spawn(
      process.execPath,
      [BIN, 'node', '--kubeconfig', kc('n2'), '--node-name', 'n2', '--root-dir', join(dir, 'n2')],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    await expect
      .poll(
        async () =>
          (await api(t, 'GET', '/api/v1/nodes/n2')).body?.status?.conditions?.find(
            (c: { type: string }) => c.type === 'Ready',
          )?.status,
        { timeout: 30_000 },
      )
      .toBe('True');
    // The Lease is written by its own loop, which may come after the first status.
    await expect
      .poll(
        async () =>
          (await api(t, 'GET', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n2')).body?.spec
            ?.holderIdentity,
        { timeout: 30_000 },
      )
      .toBe('n2');
    // A node credential joins only as its own node.
    const wrong = await run(process.execPath, [
      BIN,
      'node',
      '--kubeconfig',
      kc('n2'),
      '--node-name',
      'n3',
      '--root-dir',
      join(dir, 'n3'),
    ]).catch((e: { code: number; stderr: string }) => e);
    expect(wrong).toMatchObject({ code: 1, stderr: "stowage: the credential is system:node:n2's, not node n3's\n" });
  }, 60_000);

  it("Stowage's components write under Kubernetes' field managers: kubelet, kube-controller-manager, kube-scheduler, csi-provisioner, csi-resizer", async () => {
    const ns = 'default';
    type Entry = {
      manager: string;
      operation: string;
      subresource?: string;
      fieldsV1: { 'f:spec'?: Record<string, unknown> };
    };
    const entries = async (path: string): Promise<Entry[]> =>
      (await api(t, 'GET', path)).body?.metadata?.managedFields ?? [];
    const managers = async (path: string): Promise<string[]> =>
      [...new Set((await entries(path)).map((e) => e.manager))].sort();
    await api(t, 'POST', `/api/v1/namespaces/${ns}/persistentvolumeclaims`, {
      metadata: { name: 'mf' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } } },
    });
    expect(
      (
        await api(t, 'POST', `/api/v1/namespaces/${ns}/pods`, {
          metadata: { name: 'mf' },
          spec: {
            containers: [{ name: 'c', image: 'busybox' }],
            volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'mf' } }],
          },
        })
      ).status,
    ).toBe(201);
    await expect
      .poll(async () => (await api(t, 'GET', `/api/v1/namespaces/${ns}/pods/mf`)).body?.status?.phase, {
        timeout: 30_000,
      })
      .toBe('Running');
    const pvName: string = (await api(t, 'GET', `/api/v1/namespaces/${ns}/persistentvolumeclaims/mf`)).body.spec
      .volumeName;
    const pvPath = `/api/v1/persistentvolumes/${pvName}`;
    // Growing the claim brings the resizer in (the default class allows expansion).
    expect(
      (
        await api(
          t,
          'PATCH',
          `/api/v1/namespaces/${ns}/persistentvolumeclaims/mf`,
          { spec: { resources: { requests: { storage: '2Mi' } } } },
          { contentType: 'application/merge-patch+json' },
        )
      ).status,
    ).toBe(200);
    await expect
      .poll(async () => (await api(t, 'GET', pvPath)).body?.spec?.capacity?.storage, { timeout: 30_000 })
      .toBe('2Mi');

    // The provisioner created the PV (its spec.csi is csi-provisioner's), the binder wrote its status, the resizer its capacity.
    const pv = await entries(pvPath);
    expect(pv.find((e) => e.fieldsV1['f:spec']?.['f:csi'] !== undefined)).toMatchObject({
      manager: 'csi-provisioner',
      operation: 'Update',
    });
    const storageOwners = pv.filter(
      (e) => (e.fieldsV1['f:spec']?.['f:capacity'] as Record<string, unknown> | undefined)?.['f:storage'] !== undefined,
    );
    expect(storageOwners.map((e) => `${e.manager}/${e.operation}`)).toEqual(['csi-resizer/Update']);
    expect(await managers(pvPath)).toEqual(['csi-provisioner', 'csi-resizer', 'kube-controller-manager']);
    // The claim: the test's own write (its User-Agent), then the scheduler's selected node, the binder, the resizer, the kubelet's expansion.
    const claimManagers = await managers(`/api/v1/namespaces/${ns}/persistentvolumeclaims/mf`);
    expect(claimManagers).toEqual(expect.arrayContaining(['kube-controller-manager', 'kube-scheduler', 'csi-resizer']));
    expect(claimManagers.filter((m) => m.startsWith('stowage'))).toEqual([]);
    // Pod status and both Nodes (up's own agent and the `stowage node` process) are the kubelet's.
    expect(await entries(`/api/v1/namespaces/${ns}/pods/mf`)).toContainEqual(
      expect.objectContaining({ manager: 'kubelet', operation: 'Update', subresource: 'status' }),
    );
    for (const node of ['n1', 'n2']) expect(await managers(`/api/v1/nodes/${node}`)).toEqual(['kubelet']);
    expect(await managers('/apis/storage.k8s.io/v1/csinodes/n1')).toEqual(['kubelet']);

    expect((await api(t, 'DELETE', `/api/v1/namespaces/${ns}/pods/mf`)).status).toBe(200);
    await expect
      .poll(async () => (await api(t, 'GET', `/api/v1/namespaces/${ns}/pods/mf`)).status, { timeout: 30_000 })
      .toBe(404);
    expect((await api(t, 'DELETE', `/api/v1/namespaces/${ns}/persistentvolumeclaims/mf`)).status).toBe(200);
    await expect.poll(async () => (await api(t, 'GET', pvPath)).status, { timeout: 30_000 }).toBe(404);
  }, 120_000);

  it.skipIf(!hasKubectl)(
    'kubectl with the node kubeconfig: whoami, can-i tells the truth, refusals in kube words',
    async () => {
      expect((await kubectl(kc('n1'), 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}')).stdout).toBe(
        'system:node:n1',
      );
      const can = async (...args: string[]): Promise<string> =>
        (await kubectl(kc('n1'), 'auth', 'can-i', ...args)).stdout.trim();
      expect(await can('get', 'nodes/n1')).toBe('yes');
      expect(await can('get', 'nodes/n2')).toBe("no - node 'n1' cannot read 'n2', only its own Node object");
      expect(await can('update', 'leases/n1', '-n', 'kube-node-lease')).toBe('yes');
      expect(await can('update', 'leases/n2', '-n', 'kube-node-lease')).toBe(
        'no - can only access node lease with the same name as the requesting node',
      );
      expect(await can('create', 'events')).toBe('yes');
      expect(await can('get', 'secrets/s1')).toBe("no - no relationship found between node 'n1' and this object");
      expect(await can('delete', 'pods')).toBe('yes'); // narrowed by NodeRestriction, which can-i does not run (as in kube)

      const create = await kubectl(kc('n1'), 'create', 'configmap', 'x');
      expect(create.stderr.trim()).toBe(
        'error: failed to create configmap: configmaps is forbidden: User "system:node:n1" cannot create resource "configmaps" in API group "" in the namespace "default": can only read resources of this type',
      );
      const label = await kubectl(kc('n1'), 'label', 'node', 'n1', 'node-role.kubernetes.io/control-plane=');
      expect(label.stderr.trim()).toBe(
        'Error from server (Forbidden): nodes "n1" is forbidden: is not allowed to modify labels: node-role.kubernetes.io/control-plane',
      );
      expect((await kubectl(kc('n1'), 'label', 'node', 'n1', 'kubelet.kubernetes.io/tier=a')).code).toBe(0);
      // Another node's Node: kube's NodeRestriction message.
      const cross = await api(
        t,
        'PATCH',
        '/api/v1/nodes/n1',
        { metadata: { labels: { x: 'y' } } },
        { token: tokenOf(kc('n2')), contentType: 'application/merge-patch+json' },
      );
      expect(cross.status).toBe(403);
      expect(cross.body.message).toBe('nodes "n1" is forbidden: node "n2" is not allowed to modify node "n1"');
    },
    60_000,
  );

  it('client certificates signed by the cluster CA authenticate as CN in the groups of O (x509, as kube-apiserver)', async () => {
    const pki = join(dir, 'data', 'pki');
    const ca = { cert: readFileSync(join(pki, 'ca.crt'), 'utf8'), key: readFileSync(join(pki, 'ca.key'), 'utf8') };
    const nodeCert = issueClientCertificate(ca.cert, ca.key, {
      commonName: 'system:node:n1',
      organizations: ['system:nodes'],
    });
    const path = join(dir, 'n1-x509.kubeconfig');
    writeFileSync(
      path,
      kubeconfigYaml({ server: t.baseUrl, caCertPem: t.caPem, clientCert: nodeCert, user: 'system:node:n1' }),
      { mode: 0o600 },
    );
    const client = new RestClient(await loadKubeconfig(path));
    try {
      // Two requests: the second may ride a resumed TLS session and must still be the certificate's user.
      for (let i = 0; i < 2; i++)
        expect(await whoAmI(client)).toEqual({
          username: 'system:node:n1',
          groups: ['system:nodes', 'system:authenticated'],
        });
    } finally {
      client.close();
    }
    if (hasKubectl)
      expect((await kubectl(path, 'auth', 'can-i', 'get', 'nodes/n2')).stdout.trim()).toBe(
        "no - node 'n1' cannot read 'n2', only its own Node object",
      );
    // A certificate the cluster CA did not sign (here: signed by the node's own) is nobody.
    const foreign = issueClientCertificate(nodeCert.certPem, nodeCert.keyPem, {
      commonName: 'system:node:n1',
      organizations: ['system:nodes'],
    });
    const fpath = join(dir, 'foreign.kubeconfig');
    writeFileSync(fpath, kubeconfigYaml({ server: t.baseUrl, caCertPem: t.caPem, clientCert: foreign }), {
      mode: 0o600,
    });
    const fclient = new RestClient(await loadKubeconfig(fpath));
    try {
      await expect(whoAmI(fclient)).rejects.toThrow(/Unauthorized/);
    } finally {
      fclient.close();
    }
  });
});
