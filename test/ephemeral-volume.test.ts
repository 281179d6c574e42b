/**
 * A generic ephemeral volume through `stowage up` and kubectl, from pod creation to the claim's
 * deletion after the pod is deleted: the default StorageClass `standard` serves the class-less
 * template, the ephemeral-volume controller creates `<pod>-<volume>` controlled by the pod, it is
 * provisioned, bound and mounted like any claim, and the garbage collector deletes it with the
 * pod. A claim of that name the pod does not control is refused with an event naming it.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { built, hasKubectl, isRoot } from './helpers/env.js';
import { mountsUnder } from './helpers/mounts.js';
import { startUp } from './helpers/up.js';

if (!isRoot || !hasKubectl || !built)
  console.warn(
    'ephemeral-volume tests skipped: they need root (real mounts), kubectl on PATH and a build (npm test builds)',
  );

const podYaml = (name: string, nodeName?: string): string => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
spec:${nodeName ? `\n  nodeName: ${nodeName}` : ''}
  containers:
  - name: app
    image: busybox
    volumeMounts:
    - name: scratch
      mountPath: /scratch
  volumes:
  - name: scratch
    ephemeral:
      volumeClaimTemplate:
        metadata:
          labels:
            type: scratch
        spec:
          accessModes: [ReadWriteOnce]
          resources:
            requests:
              storage: 64Mi
`;

const foreignClaimYaml = (name: string): string => `apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: ${name}
spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: 64Mi
`;

describe.skipIf(!isRoot || !hasKubectl || !built)('generic ephemeral volume through stowage up', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('claim created for the pod, provisioned by the default class, mounted, and deleted with the pod', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'stowage-ephemeral-'));
    dirs.push(dataDir);
    const { child, exit, kubeconfigPath } = await startUp(dataDir, 'e2e');
    try {
      const env = { ...process.env, KUBECONFIG: kubeconfigPath, HOME: dataDir };
      const kubectl = async (...args: string[]): Promise<string> =>
        (await promisify(execFile)('kubectl', args, { env, timeout: 60_000 })).stdout;
      const json = async (...args: string[]): Promise<any> => JSON.parse(await kubectl(...args, '-o', 'json'));
      await expect
        .poll(async () => (await json('get', 'csinode', 'e2e').catch(() => ({}))).spec?.drivers?.length ?? 0, {
          timeout: 20_000,
        })
        .toBe(1);

      // The default class stowage up ships.
      const sc = await json('get', 'storageclass', 'standard');
      expect(sc.metadata.annotations['storageclass.kubernetes.io/is-default-class']).toBe('true');
      expect(sc).toMatchObject({
        provisioner: 'hostpath.csi.stowage.io',
        volumeBindingMode: 'WaitForFirstConsumer',
        reclaimPolicy: 'Delete',
      });

      writeFileSync(join(dataDir, 'app.yaml'), podYaml('app'));
      await kubectl('apply', '-f', join(dataDir, 'app.yaml'));
      await expect
        .poll(async () => (await json('get', 'pod', 'app')).status?.phase, { timeout: 30_000 })
        .toBe('Running');
      const pod = await json('get', 'pod', 'app');
      const claim = await json('get', 'pvc', 'app-scratch');
      expect(claim.metadata.ownerReferences).toEqual([
        {
          apiVersion: 'v1',
          kind: 'Pod',
          name: 'app',
          uid: pod.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
      expect(claim.metadata.labels).toEqual({ type: 'scratch' });
      expect(claim.spec.storageClassName).toBe('standard');
      expect(claim.status.phase).toBe('Bound');
      const pvName = claim.spec.volumeName as string;
      const hostPath = JSON.parse(pod.metadata.annotations['volumes.stowage.io/host-paths']).scratch as string;
      expect(mountsUnder(hostPath)).toContain(hostPath);

      // A claim of the ephemeral name that the pod does not control is refused, never used.
      writeFileSync(join(dataDir, 'foreign.yaml'), foreignClaimYaml('thief-scratch'));
      await kubectl('apply', '-f', join(dataDir, 'foreign.yaml'));
      writeFileSync(join(dataDir, 'thief.yaml'), podYaml('thief'));
      await kubectl('apply', '-f', join(dataDir, 'thief.yaml'));
      const refusal = 'PVC default/thief-scratch was not created for pod default/thief (pod is not owner)';
      await expect
        .poll(
          async () =>
            (await json('get', 'events', '--field-selector', 'involvedObject.name=thief')).items.map(
              (e: { reason: string; message: string }) => `${e.reason}: ${e.message}`,
            ),
          { timeout: 20_000 },
        )
        .toContain(`FailedBinding: ephemeral volume scratch: ${refusal}`);
      // The scheduler refuses to place it, naming the claim.
      await expect
        .poll(
          async () =>
            (await json('get', 'events', '--field-selector', 'involvedObject.name=thief,reason=FailedScheduling')).items
              .map((e: { message: string }) => e.message)
              .join('\n'),
          { timeout: 20_000 },
        )
        .toContain(refusal);
      expect((await json('get', 'pod', 'thief')).spec.nodeName).toBeUndefined();
      expect((await json('get', 'pvc', 'thief-scratch')).metadata.ownerReferences).toBeUndefined();
      await kubectl('delete', 'pod', 'thief', '--timeout=60s');
      await kubectl('delete', 'pvc', 'thief-scratch', '--timeout=60s');
      // Placed on the node without the scheduler: the node agent refuses the claim too, naming it.
      writeFileSync(join(dataDir, 'foreign2.yaml'), foreignClaimYaml('intruder-scratch'));
      await kubectl('apply', '-f', join(dataDir, 'foreign2.yaml'));
      writeFileSync(join(dataDir, 'intruder.yaml'), podYaml('intruder', 'e2e'));
      await kubectl('apply', '-f', join(dataDir, 'intruder.yaml'));
      await expect
        .poll(
          async () =>
            (await json('get', 'events', '--field-selector', 'involvedObject.name=intruder,reason=FailedMount')).items
              .map((e: { message: string }) => e.message)
              .join('\n'),
          { timeout: 20_000 },
        )
        .toContain('PVC default/intruder-scratch was not created for pod default/intruder (pod is not owner)');
      expect((await json('get', 'pod', 'intruder')).status?.phase).not.toBe('Running');
      await kubectl('delete', 'pod', 'intruder', '--timeout=60s');
      await kubectl('delete', 'pvc', 'intruder-scratch', '--timeout=60s');

      // Deleting the pod deletes its claim (garbage collector), then the volume (reclaim Delete).
      await kubectl('delete', 'pod', 'app', '--timeout=60s');
      expect(mountsUnder(hostPath)).toEqual([]);
      await expect
        .poll(
          async () => (await json('get', 'pvc')).items.map((c: { metadata: { name: string } }) => c.metadata.name),
          { timeout: 30_000 },
        )
        .toEqual([]);
      await expect
        .poll(async () => (await json('get', 'pv')).items.map((v: { metadata: { name: string } }) => v.metadata.name), {
          timeout: 30_000,
        })
        .not.toContain(pvName);

      // Foreground: the pod object stays until its claim (blockOwnerDeletion) is gone.
      writeFileSync(join(dataDir, 'fg.yaml'), podYaml('fg'));
      await kubectl('apply', '-f', join(dataDir, 'fg.yaml'));
      await expect
        .poll(async () => (await json('get', 'pod', 'fg')).status?.phase, { timeout: 30_000 })
        .toBe('Running');
      const fgPv = (await json('get', 'pvc', 'fg-scratch')).spec.volumeName as string;
      await kubectl('delete', 'pod', 'fg', '--cascade=foreground', '--timeout=60s');
      expect(
        (await json('get', 'pvc')).items.map((c: { metadata: { name: string } }) => c.metadata.name),
      ).not.toContain('fg-scratch');
      await expect
        .poll(async () => (await json('get', 'pv')).items.map((v: { metadata: { name: string } }) => v.metadata.name), {
          timeout: 30_000,
        })
        .not.toContain(fgPv);

      await expect.poll(() => mountsUnder(dataDir), { timeout: 30_000 }).toEqual([]);
      const volumesDir = join(dataDir, 'csi-hostpath', 'volumes');
      await expect.poll(() => (existsSync(volumesDir) ? readdirSync(volumesDir) : []), { timeout: 30_000 }).toEqual([]);
    } finally {
      child.kill('SIGTERM');
      await exit;
    }
    expect(mountsUnder(dataDir)).toEqual([]);
  }, 150_000);
});
