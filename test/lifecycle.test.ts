/**
 * The whole lifecycle through `stowage up` with the built-in driver, driven by kubectl with the
 * YAML a Kubernetes user writes: StorageClass + claim + pod → provisioned, placed, (attached),
 * mounted, Running; data written; claim expanded; pod and claim deleted → unmounted, (detached),
 * CSI volume deleted, PV gone, nothing left on disk.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { built, hasKubectl, isRoot } from './helpers/env.js';
import { mountsUnder } from './helpers/mounts.js';
import { kubectlIn } from './helpers/kubectl.js';
import { startUp } from './helpers/up.js';
import { afterAll, describe, expect, it } from 'vitest';

if (!isRoot || !hasKubectl || !built)
  console.warn('lifecycle tests skipped: they need root (real mounts), kubectl on PATH and a build (npm test builds)');

const onPath = (program: string): boolean =>
  [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/sbin'].some((d) => d !== '' && existsSync(join(d, program)));
/**
 * The filesystem for the fsType variant: ext4, unless the kernel would refuse to grow it online
 * (its resize ioctl needs CAP_SYS_RESOURCE, bit 24, which sandboxes may drop); then XFS, which
 * grows with CAP_SYS_ADMIN. Undefined when neither can be made and grown here.
 */
const onlineFsType = ((): string | undefined => {
  const m = /^CapEff:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'utf8'));
  const capSysResource = m ? ((BigInt(`0x${m[1]}`) >> 24n) & 1n) === 1n : false;
  if (capSysResource && onPath('mkfs.ext4') && onPath('resize2fs')) return 'ext4';
  if (onPath('mkfs.xfs') && onPath('xfs_growfs')) return 'xfs';
  return undefined;
})();
if (!onlineFsType)
  console.warn(
    'lifecycle fsType variant skipped: needs mkfs.ext4 + resize2fs with CAP_SYS_RESOURCE, or mkfs.xfs + xfs_growfs',
  );

const GiB = 1024 * 1024 * 1024;

const manifest = (
  mode: 'Immediate' | 'WaitForFirstConsumer',
  parameters: Record<string, string> = {},
): string => `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: fast
provisioner: hostpath.csi.stowage.io
allowVolumeExpansion: true
volumeBindingMode: ${mode}
${
  Object.keys(parameters).length > 0
    ? `parameters:\n${Object.entries(parameters)
        .map(([k, v]) => `  ${k}: ${JSON.stringify(v)}`)
        .join('\n')}\n`
    : ''
}---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: fast
  resources:
    requests:
      storage: 1Gi
---
apiVersion: v1
kind: Pod
metadata:
  name: app
spec:
  containers:
  - name: app
    image: busybox
    volumeMounts:
    - name: data
      mountPath: /data
  volumes:
  - name: data
    persistentVolumeClaim:
      claimName: data
`;

/** Loop devices whose backing file is under `dir` (from sysfs, as losetup -a reads it). */
function loopsUnder(dir: string): string[] {
  return readdirSync('/sys/block')
    .filter((n) => /^loop\d+$/.test(n))
    .filter((n) => {
      try {
        return readFileSync(join('/sys/block', n, 'loop', 'backing_file'), 'utf8').startsWith(dir);
      } catch {
        return false;
      }
    });
}

const statfsTotal = (p: string): number => {
  const s = statfsSync(p);
  return s.blocks * s.bsize;
};

describe.skipIf(!isRoot || !hasKubectl || !built)('lifecycle through stowage up and kubectl', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  for (const variant of [
    { name: 'Immediate class, no attach', mode: 'Immediate' as const, attach: false, fsType: undefined },
    {
      name: 'WaitForFirstConsumer class, with attach',
      mode: 'WaitForFirstConsumer' as const,
      attach: true,
      fsType: undefined,
    },
    {
      name: `Immediate class with csi.storage.k8s.io/fstype ${onlineFsType ?? '(none available)'}: a real filesystem, grown online`,
      mode: 'Immediate' as const,
      attach: false,
      fsType: onlineFsType ?? 'none',
    },
  ]) {
    it.skipIf(variant.fsType === 'none')(
      variant.name,
      async () => {
        const dataDir = mkdtempSync(join(tmpdir(), 'stowage-e2e-'));
        dirs.push(dataDir);
        const { child, exit } = await startUp(dataDir, 'e2e', variant.attach ? ['--enable-attach'] : []);
        try {
          const { kubectl, json } = kubectlIn(() => dataDir, 60_000);
          // The node registers the driver first (as a kubelet with node-driver-registrar).
          await expect
            .poll(async () => (await json('get', 'csinode', 'e2e').catch(() => ({}))).spec?.drivers?.length ?? 0, {
              timeout: 20_000,
            })
            .toBe(1);
          const file = join(dataDir, 'app.yaml');
          writeFileSync(
            file,
            manifest(variant.mode, variant.fsType ? { 'csi.storage.k8s.io/fstype': variant.fsType } : {}),
          );
          await kubectl('apply', '-f', file);
          await expect
            .poll(async () => (await json('get', 'pod', 'app')).status?.phase, { timeout: 30_000 })
            .toBe('Running');
          const pod = await json('get', 'pod', 'app');
          expect(pod.spec.nodeName).toBe('e2e');
          // The node agent writes its InternalIP as the pod's hostIP, which describe shows beside the node.
          const internalIP = (await json('get', 'node', 'e2e')).status.addresses.find(
            (a: { type: string }) => a.type === 'InternalIP',
          ).address;
          expect({ hostIP: pod.status.hostIP, hostIPs: pod.status.hostIPs }).toEqual({
            hostIP: internalIP,
            hostIPs: [{ ip: internalIP }],
          });
          expect(await kubectl('describe', 'pod', 'app')).toMatch(
            new RegExp(`^Node:\\s+e2e/${internalIP.replaceAll('.', '\\.')}$`, 'm'),
          );
          const claim = await json('get', 'pvc', 'data');
          expect(claim.status.phase).toBe('Bound');
          const pv = await json('get', 'pv', claim.spec.volumeName);
          expect(pv.spec.csi.driver).toBe('hostpath.csi.stowage.io');
          expect(pv.metadata.annotations['pv.kubernetes.io/provisioned-by']).toBe('hostpath.csi.stowage.io');
          if (variant.attach) {
            const vas = await json('get', 'volumeattachments');
            expect(vas.items).toHaveLength(1);
            expect(vas.items[0].status.attached).toBe(true);
            expect(vas.items[0].spec).toMatchObject({
              attacher: 'hostpath.csi.stowage.io',
              nodeName: 'e2e',
              source: { persistentVolumeName: pv.metadata.name },
            });
          }
          // The volume is really mounted at the pod's path on the host; write through it.
          const hostPath = JSON.parse(pod.metadata.annotations['volumes.stowage.io/host-paths']).data as string;
          expect(mountsUnder(hostPath)).toContain(hostPath);
          writeFileSync(join(hostPath, 'hello.txt'), 'hello');
          if (variant.fsType) {
            // The pod's volume is the claim's own filesystem: its size, less the filesystem's overhead.
            expect(pv.spec.csi.fsType).toBe(variant.fsType);
            expect(readFileSync('/proc/self/mountinfo', 'utf8')).toContain(` - ${variant.fsType} /dev/loop`);
            expect(statfsTotal(hostPath)).toBeGreaterThan(0.8 * GiB);
            expect(statfsTotal(hostPath)).toBeLessThanOrEqual(GiB);
          }
          // Grow the claim: the sidecar expands the volume, the claim's capacity follows.
          await kubectl('patch', 'pvc', 'data', '-p', '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}');
          await expect
            .poll(async () => (await json('get', 'pvc', 'data')).status?.capacity?.storage, { timeout: 30_000 })
            .toBe('2Gi');
          if (variant.fsType) {
            // Online: the node grows the mounted filesystem under the running pod (asynchronously).
            await expect.poll(() => statfsTotal(hostPath), { timeout: 20_000 }).toBeGreaterThan(GiB);
            expect(readFileSync(join(hostPath, 'hello.txt'), 'utf8')).toBe('hello');
          }
          // Delete everything: unmounted, (detached), deleted in the driver, nothing left.
          await kubectl('delete', 'pod', 'app', '--timeout=60s');
          // The pod object goes once its own mounts are gone (the kubelet's PodResourcesAreReclaimed);
          // the device (staging) mount is torn down by the next reconciler passes, not before.
          expect(mountsUnder(hostPath)).toEqual([]);
          await expect.poll(() => mountsUnder(dataDir), { timeout: 30_000 }).toEqual([]);
          await kubectl('delete', 'pvc', 'data', '--timeout=60s');
          await expect.poll(async () => (await json('get', 'pv')).items.length, { timeout: 30_000 }).toBe(0);
          expect((await json('get', 'volumeattachments')).items).toHaveLength(0);
          const volumesDir = join(dataDir, 'csi-hostpath', 'volumes');
          expect(existsSync(volumesDir) ? readdirSync(volumesDir) : []).toEqual([]);
          expect(loopsUnder(dataDir)).toEqual([]);
        } finally {
          child.kill('SIGTERM');
          await exit;
        }
        expect(mountsUnder(dataDir)).toEqual([]);
      },
      150_000,
    );
  }
});
