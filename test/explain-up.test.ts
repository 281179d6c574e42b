/**
 * `stowage why` and the CSI trace through `stowage up`: a claim followed from kubectl apply to its
 * mount through the calls every component made, the CSI histograms on /metrics, and the reasons of
 * a claim and a pod that cannot proceed.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, built, hasKubectl, isRoot } from './helpers/env.js';
import { kubectlIn } from './helpers/kubectl.js';
import { mountsUnder } from './helpers/mounts.js';
import { startUp } from './helpers/up.js';

const MANIFEST = `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: fast
provisioner: hostpath.csi.stowage.io
volumeBindingMode: Immediate
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: fast
  resources: { requests: { storage: 1Gi } }
---
apiVersion: v1
kind: Pod
metadata:
  name: app
spec:
  containers: [{ name: app, image: busybox, volumeMounts: [{ name: data, mountPath: /data }] }]
  volumes: [{ name: data, persistentVolumeClaim: { claimName: data } }]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: stuck
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: missing
  resources: { requests: { storage: 1Gi } }
---
apiVersion: v1
kind: Pod
metadata:
  name: waiting
spec:
  containers: [{ name: app, image: busybox, volumeMounts: [{ name: data, mountPath: /data }] }]
  volumes: [{ name: data, persistentVolumeClaim: { claimName: stuck } }]
`;

describe.skipIf(!isRoot || !hasKubectl || !built)('why and the CSI trace through stowage up', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('traces a claim to its mount and explains what is stuck', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'stowage-why-'));
    dirs.push(dataDir);
    const { child, exit } = await startUp(dataDir, 'why', ['--enable-attach']);
    try {
      const { kubectl, json, env } = kubectlIn(() => dataDir, 60_000);
      const why = async (...args: string[]): Promise<string> =>
        (await promisify(execFile)(BIN, ['why', ...args], { env: env(), timeout: 60_000 })).stdout;
      await expect
        .poll(async () => (await json('get', 'csinode', 'why').catch(() => ({}))).spec?.drivers?.length ?? 0, {
          timeout: 20_000,
        })
        .toBe(1);
      const file = join(dataDir, 'app.yaml');
      writeFileSync(file, MANIFEST);
      await kubectl('apply', '-f', file);
      await expect
        .poll(async () => (await json('get', 'pod', 'app')).status?.phase, { timeout: 30_000 })
        .toBe('Running');

      // Every component's calls for the claim, in order, with who made them.
      const X = '/apis/explain.stowage.io/v1alpha1';
      const calls = JSON.parse(await kubectl('get', '--raw', `${X}/csicalls?claim=data&namespace=default`));
      const seen = calls.items.map((c: { method: string; caller: string; code: string }) => [
        c.method.split('/')[2],
        c.caller,
        c.code,
      ]);
      expect(seen).toEqual(
        expect.arrayContaining([
          ['CreateVolume', 'csi-provisioner', 'OK'],
          ['ControllerPublishVolume', 'csi-attacher', 'OK'],
          ['NodeStageVolume', 'kubelet', 'OK'],
          ['NodePublishVolume', 'kubelet', 'OK'],
        ]),
      );
      const publish = calls.items.find((c: { method: string }) => c.method.endsWith('/NodePublishVolume'));
      expect(publish.object).toEqual({ kind: 'Pod', namespace: 'default', name: 'app' });
      const byPod = JSON.parse(await kubectl('get', '--raw', `${X}/csicalls?pod=app&namespace=default`));
      expect(byPod.items.length).toBeGreaterThanOrEqual(4);

      const metrics = await kubectl('get', '--raw', '/metrics');
      expect(metrics).toContain(
        'csi_sidecar_operations_seconds_count{driver_name="hostpath.csi.stowage.io",method_name="/csi.v1.Controller/CreateVolume",grpc_status_code="OK"} 1',
      );
      expect(metrics).toMatch(
        /csi_operations_seconds_count\{driver_name="hostpath.csi.stowage.io",method_name="\/csi.v1.Node\/NodePublishVolume",grpc_status_code="OK",migrated="false"\} [1-9]/,
      );

      expect(await why('pvc/data')).toMatch(
        /^pvc\/data in namespace default is Bound: bound to volume pvc-\S+ \(1Gi\)\.$/m,
      );
      const withCalls = await why('pvc/data', '--calls');
      expect(withCalls).toContain('CSI calls (hostpath.csi.stowage.io):');
      expect(withCalls).toMatch(/^ {2}\S+Z +\d+ms csi-provisioner +CreateVolume OK$/m);
      expect(withCalls).toMatch(/^ {2}\S+Z +\d+ms kubelet +NodePublishVolume OK$/m);
      expect(await why('pod/app')).toMatch(/^pod\/app in namespace default is Running: running on node why\.$/m);
      expect(await why('pvc/stuck')).toContain(
        'pvc/stuck in namespace default is Pending: storageclass.storage.k8s.io "missing" not found.',
      );
      const podWhy = await why('pod/waiting');
      // The scheduler's own PreFilter refuses it first: the claim's class does not exist.
      expect(podWhy).toContain(
        'pod/waiting in namespace default is Pending: unschedulable: storageclass.storage.k8s.io "missing" not found.',
      );
      expect(podWhy).toContain('  - claim stuck: storageclass.storage.k8s.io "missing" not found');
      expect(podWhy).toContain('See also: stowage why pvc/stuck -n default');

      await kubectl('delete', 'pod', 'app', 'waiting', '--timeout=60s');
      await kubectl('delete', 'pvc', 'data', 'stuck', '--timeout=60s');
      await expect.poll(async () => (await json('get', 'pv')).items.length, { timeout: 30_000 }).toBe(0);
      const after = JSON.parse(
        await kubectl('get', '--raw', `${X}/csicalls?driver=hostpath.csi.stowage.io&failed=false`),
      );
      const methods = after.items.map((c: { method: string }) => c.method.split('/')[2]);
      expect(methods).toEqual(
        expect.arrayContaining([
          'NodeUnpublishVolume',
          'NodeUnstageVolume',
          'ControllerUnpublishVolume',
          'DeleteVolume',
        ]),
      );
    } finally {
      // On a failure, leave no mounts behind: the pods go first, so the node unmounts their volumes.
      await kubectlIn(() => dataDir, 60_000)
        .kubectl('delete', 'pod', '--all', '--timeout=60s')
        .catch(() => undefined);
      await expect.poll(() => mountsUnder(dataDir), { timeout: 30_000 }).toEqual([]);
      child.kill('SIGTERM');
      await exit;
    }
  }, 150_000);
});
