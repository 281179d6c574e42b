import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { BIN, ROOT, built } from './helpers/env.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../src/cli/testing.test-kit.js';
import { api } from './helpers/http.js';

const CONFORMANCE = resolve(ROOT, '..', 'shared', 'conformance', 'pv');

function pv(name: string, size: string, cls = ''): object {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name },
    spec: {
      capacity: { storage: size },
      accessModes: ['ReadWriteOnce'],
      storageClassName: cls,
      hostPath: { path: `/tmp/stowage-pvtest/${name}` },
    },
  };
}

function pvc(name: string, size: string, cls = ''): object {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } }, storageClassName: cls },
  };
}

describe('PV controller through the API server', () => {
  let s: TestApiServer;
  beforeAll(async () => {
    s = await startTestApiServer();
  });
  afterAll(async () => {
    await s?.close();
  });

  it('binds a claim to the smallest matching volume, both ways, with the bind annotations', async () => {
    await api(s, 'POST', '/api/v1/persistentvolumes', pv('it-big', '10Gi'));
    await api(s, 'POST', '/api/v1/persistentvolumes', pv('it-small', '2Gi'));
    // As in Kubernetes, a claim only sees volumes the controller has already observed.
    for (const n of ['it-big', 'it-small']) {
      await expect
        .poll(async () => (await api(s, 'GET', `/api/v1/persistentvolumes/${n}`)).body.status.phase, {
          timeout: 10_000,
        })
        .toBe('Available');
    }
    const c = (await api(s, 'POST', '/api/v1/namespaces/default/persistentvolumeclaims', pvc('it-claim', '1Gi'))).body;
    await expect
      .poll(
        async () =>
          (await api(s, 'GET', '/api/v1/namespaces/default/persistentvolumeclaims/it-claim')).body.status.phase,
        { timeout: 10_000 },
      )
      .toBe('Bound');
    const claim = (await api(s, 'GET', '/api/v1/namespaces/default/persistentvolumeclaims/it-claim')).body;
    expect(claim.spec.volumeName).toBe('it-small');
    expect(claim.metadata.annotations['pv.kubernetes.io/bind-completed']).toBe('yes');
    expect(claim.status.capacity.storage).toBe('2Gi');
    await expect
      .poll(async () => (await api(s, 'GET', '/api/v1/persistentvolumes/it-small')).body.status.phase, {
        timeout: 10_000,
      })
      .toBe('Bound');
    const vol = (await api(s, 'GET', '/api/v1/persistentvolumes/it-small')).body;
    expect(vol.spec.claimRef).toMatchObject({ namespace: 'default', name: 'it-claim', uid: c.metadata.uid });
    expect((await api(s, 'GET', '/api/v1/persistentvolumes/it-big')).body.status.phase).toBe('Available');
  });

  it('releases the volume when the claim goes (Retain), once pvc-protection lets the claim go', async () => {
    const del = await api(s, 'DELETE', '/api/v1/namespaces/default/persistentvolumeclaims/it-claim');
    expect(del.status).toBe(200);
    await expect
      .poll(async () => (await api(s, 'GET', '/api/v1/namespaces/default/persistentvolumeclaims/it-claim')).status, {
        timeout: 10_000,
      })
      .toBe(404);
    await expect
      .poll(async () => (await api(s, 'GET', '/api/v1/persistentvolumes/it-small')).body.status.phase, {
        timeout: 10_000,
      })
      .toBe('Released');
  });

  it('keeps a claim in use by a scheduled pod until the pod is gone (pvc-protection)', async () => {
    await api(s, 'POST', '/api/v1/namespaces/default/persistentvolumeclaims', pvc('used', '1Gi'));
    // Deleted after `used`, in use by nothing: once it is gone, pvc-protection has handled `used` too.
    await api(s, 'POST', '/api/v1/namespaces/default/persistentvolumeclaims', pvc('unused', '1Gi', 'unused'));
    await api(s, 'POST', '/api/v1/namespaces/default/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'user' },
      spec: {
        nodeName: 'nowhere',
        containers: [{ name: 'c', image: 'busybox' }],
        volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'used' } }],
      },
    });
    await api(s, 'DELETE', '/api/v1/namespaces/default/persistentvolumeclaims/used');
    await api(s, 'DELETE', '/api/v1/namespaces/default/persistentvolumeclaims/unused');
    await expect
      .poll(async () => (await api(s, 'GET', '/api/v1/namespaces/default/persistentvolumeclaims/unused')).status, {
        timeout: 10_000,
      })
      .toBe(404);
    // Still there while the pod exists (deleting it with grace 0 is what a node agent would do).
    const held = await api(s, 'GET', '/api/v1/namespaces/default/persistentvolumeclaims/used');
    expect(held.status).toBe(200);
    expect(held.body.metadata.finalizers).toContain('kubernetes.io/pvc-protection');
    await api(s, 'DELETE', '/api/v1/namespaces/default/pods/user?gracePeriodSeconds=0');
    await expect
      .poll(async () => (await api(s, 'GET', '/api/v1/namespaces/default/persistentvolumeclaims/used')).status, {
        timeout: 10_000,
      })
      .toBe(404);
  });

  it('releases pv-protection only when the volume is not Bound', async () => {
    await api(s, 'POST', '/api/v1/persistentvolumes', pv('prot', '1Gi', 'prot'));
    // Deleted after `prot`, never Bound: once it is gone, pv-protection has handled `prot` too.
    await api(s, 'POST', '/api/v1/persistentvolumes', pv('prot-unbound', '1Gi', 'prot-unbound'));
    await api(s, 'POST', '/api/v1/namespaces/default/persistentvolumeclaims', pvc('prot', '1Gi', 'prot'));
    await expect
      .poll(async () => (await api(s, 'GET', '/api/v1/persistentvolumes/prot')).body.status.phase, { timeout: 10_000 })
      .toBe('Bound');
    await api(s, 'DELETE', '/api/v1/persistentvolumes/prot');
    await api(s, 'DELETE', '/api/v1/persistentvolumes/prot-unbound');
    await expect
      .poll(async () => (await api(s, 'GET', '/api/v1/persistentvolumes/prot-unbound')).status, { timeout: 10_000 })
      .toBe(404);
    expect((await api(s, 'GET', '/api/v1/persistentvolumes/prot')).body.metadata.finalizers).toContain(
      'kubernetes.io/pv-protection',
    );
    await api(s, 'DELETE', '/api/v1/namespaces/default/persistentvolumeclaims/prot');
    await expect
      .poll(async () => (await api(s, 'GET', '/api/v1/persistentvolumes/prot')).status, { timeout: 15_000 })
      .toBe(404);
  });

  // Kubernetes syncs a waiting claim only every 15 s, so volumes created in one burst are all in its
  // view and FindMatchingVolume takes the one pre-bound to the claim. Stowage wakes the claim soon
  // after the first volume is Available: the outcome must still be the pre-bound volume, in any order.
  const ORDERS = {
    'unbound first, the claim UID read in between (as a client templating claimRef.uid does)': async (
      post: Post,
      uid: () => Promise<string>,
    ) => {
      await post('free', null);
      await post('pre', await uid());
    },
    'unbound first, the pre-bound one once the controller has made the unbound one Available': async (
      post: Post,
      uid: () => Promise<string>,
      phase: (s: 'free') => Promise<string>,
    ) => {
      const u = await uid();
      await post('free', null);
      await expect.poll(() => phase('free'), { timeout: 10_000, interval: 5 }).not.toBe('Pending');
      await post('pre', u);
    },
    'pre-bound first': async (post: Post, uid: () => Promise<string>) => {
      await post('pre', await uid());
      await post('free', null);
    },
    'both at once': async (post: Post, uid: () => Promise<string>) => {
      const u = await uid();
      await Promise.all([post('free', null), post('pre', u)]);
    },
  };
  type Post = (suffix: 'free' | 'pre', uid: string | null) => Promise<void>;
  for (const [order, createBurst] of Object.entries(ORDERS)) {
    it(`a waiting claim ends on the volume pre-bound to it when both are created in one burst: ${order}`, async () => {
      for (let i = 0; i < 5; i++) {
        const name = `burst-${Object.keys(ORDERS).indexOf(order)}-${i}`;
        const claimPath = `/api/v1/namespaces/default/persistentvolumeclaims/${name}`;
        // A class of its own (no StorageClass object): no other test's volume can match.
        await api(s, 'POST', '/api/v1/namespaces/default/persistentvolumeclaims', pvc(name, '1Gi', name));
        // The claim is waiting once the controller has found nothing for it and tried to provision.
        await expect
          .poll(
            async () =>
              (
                await api(s, 'GET', `/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3D${name}`)
              ).body.items.map((e: { reason: string }) => e.reason),
            { timeout: 10_000 },
          )
          .toContain('ProvisioningFailed');
        const post: Post = async (suffix, uid) => {
          const v = pv(`${name}-${suffix}`, '1Gi', name) as { spec: Record<string, unknown> };
          if (uid !== null)
            v.spec.claimRef = { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'default', name, uid };
          expect((await api(s, 'POST', '/api/v1/persistentvolumes', v)).status).toBe(201);
        };
        await createBurst(
          post,
          async () => (await api(s, 'GET', claimPath)).body.metadata.uid,
          async (suffix) =>
            (await api(s, 'GET', `/api/v1/persistentvolumes/${name}-${suffix}`)).body.status?.phase ?? 'Pending',
        );
        await expect
          .poll(async () => (await api(s, 'GET', claimPath)).body.status.phase, { timeout: 10_000 })
          .toBe('Bound');
        expect((await api(s, 'GET', claimPath)).body.spec.volumeName).toBe(`${name}-pre`);
        // The other volume is left (or given back) Available and unclaimed.
        await expect
          .poll(
            async () => {
              const free = (await api(s, 'GET', `/api/v1/persistentvolumes/${name}-free`)).body;
              return [free.status.phase, free.spec.claimRef ?? null];
            },
            { timeout: 10_000 },
          )
          .toEqual(['Available', null]);
      }
    }, 60_000);
  }

  it('exposes the PV collector metrics', async () => {
    const m = await api(s, 'GET', '/metrics');
    expect(m.text).toContain('pv_collector_total_pv_count');
    expect(m.text).toContain('workqueue_work_duration_seconds_bucket{name="claims"');
  });
});

describe.skipIf(!existsSync(join(CONFORMANCE, 'run.mjs')))('PV conformance sample (../shared/conformance/pv)', () => {
  it('passes every public scenario against the API server with its controllers', async () => {
    const s = await startTestApiServer();
    try {
      const r = await promisify(execFile)(
        process.execPath,
        [
          join(CONFORMANCE, 'run.mjs'),
          '--kubeconfig',
          s.kubeconfigPath,
          '--insecure',
          join(CONFORMANCE, 'scenarios', 'sample.json'),
        ],
        {
          timeout: 240_000,
        },
      ).catch((e: { stdout?: string; stderr?: string }) => ({ stdout: e.stdout ?? '', stderr: e.stderr ?? '' }));
      expect(r.stdout).toMatch(/^\d+ passed, 0 failed$/m);
    } finally {
      await s.close();
    }
  }, 300_000);
});

describe.skipIf(!built)('PV controller crash safety', () => {
  it('completes every bind after the controller is killed mid-way, never binding a volume twice', async () => {
    const s = await startTestApiServer({ controllers: false });
    const start = (): ChildProcess =>
      spawn(process.execPath, [BIN, 'controllers', '--kubeconfig', s.kubeconfigPath], { stdio: 'ignore' });
    let ctrl = start();
    try {
      const N = 60;
      for (let i = 0; i < N; i++)
        await api(s, 'POST', '/api/v1/persistentvolumes', pv(`crash-${i}`, `${1 + (i % 3)}Gi`, 'crash'));
      // As in Kubernetes (FindMatchingVolume skips volumes not yet Available), a claim arriving while
      // its exact-size volume is still Pending would take a bigger one, and the last claim of the
      // biggest size would rightly find nothing: let the controller make every volume Available first.
      await expect
        .poll(
          async () =>
            (await api(s, 'GET', '/api/v1/persistentvolumes')).body.items.filter(
              (v: { status: { phase: string } }) => v.status.phase === 'Available',
            ).length,
          {
            timeout: 20_000,
          },
        )
        .toBe(N);
      for (let i = 0; i < N; i++)
        await api(
          s,
          'POST',
          '/api/v1/namespaces/default/persistentvolumeclaims',
          pvc(`crash-${i}`, `${1 + (i % 3)}Gi`, 'crash'),
        );
      const countBoundPvs = async (): Promise<number> =>
        (await api(s, 'GET', '/api/v1/persistentvolumes')).body.items.filter(
          (v: { spec: { claimRef?: unknown } }) => v.spec.claimRef,
        ).length;
      // Kill while binds are in flight: some volumes have a claimRef, not all claims are Bound yet.
      await expect.poll(countBoundPvs, { timeout: 20_000, interval: 5 }).toBeGreaterThan(0);
      ctrl.kill('SIGKILL');
      await new Promise((r) => ctrl.once('exit', r));
      ctrl = start();
      await expect
        .poll(
          async () =>
            (await api(s, 'GET', '/api/v1/namespaces/default/persistentvolumeclaims')).body.items.filter(
              (c: { status: { phase: string } }) => c.status.phase === 'Bound',
            ).length,
          {
            timeout: 60_000,
          },
        )
        .toBe(N);
      const claims = (await api(s, 'GET', '/api/v1/namespaces/default/persistentvolumeclaims')).body.items;
      const vols = new Map<string, { spec: { claimRef?: { uid: string; name: string } }; status: { phase: string } }>(
        (await api(s, 'GET', '/api/v1/persistentvolumes')).body.items.map((v: { metadata: { name: string } }) => [
          v.metadata.name,
          v,
        ]),
      );
      const used = new Set<string>();
      for (const c of claims) {
        const v = vols.get(c.spec.volumeName)!;
        expect(used.has(c.spec.volumeName)).toBe(false);
        used.add(c.spec.volumeName);
        expect(v.spec.claimRef?.uid).toBe(c.metadata.uid);
        await expect
          .poll(async () => (await api(s, 'GET', `/api/v1/persistentvolumes/${c.spec.volumeName}`)).body.status.phase, {
            timeout: 20_000,
          })
          .toBe('Bound');
      }
      expect(used.size).toBe(N);
    } finally {
      ctrl.kill('SIGKILL');
      await s.close();
    }
  }, 120_000);
});
