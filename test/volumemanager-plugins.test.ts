import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import type { PersistentVolume, Pod } from 'kubernetes-types/core/v1.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachLoop, detachLoop } from '../src/mount/loop.js';
import { findMount, mountsUnder } from '../src/mount/mountinfo.js';
import { startVolumeManager, type VolumeManager } from '../src/node/volumemanager/volume-manager.js';
import {
  createPod,
  deletePodAndWait,
  DRIVER,
  events,
  NODE,
  startEnv,
  until,
  waitRunning,
  type Env,
} from './volumemanager-kit.js';

const notRoot = process.getuid?.() !== 0;
const Mi = 1024 * 1024;

/** A pod on the test node with one container mounting every volume (and the given subPath mounts). */
function pod(
  name: string,
  volumes: NonNullable<Pod['spec']>['volumes'],
  o: { subPaths?: Array<{ volume: string; subPath: string }>; labels?: Record<string, string>; memory?: string } = {},
): Pod {
  return {
    metadata: { name, namespace: 'default', ...(o.labels ? { labels: o.labels } : {}) },
    spec: {
      nodeName: NODE,
      containers: [
        {
          name: 'app',
          image: 'busybox',
          ...(o.memory ? { resources: { limits: { memory: o.memory } } } : {}),
          volumeMounts: [
            ...(volumes ?? []).map((v) => ({ name: v.name, mountPath: `/v/${v.name}` })),
            ...(o.subPaths ?? []).map((s, i) => ({ name: s.volume, mountPath: `/sub/${i}`, subPath: s.subPath })),
          ],
        },
      ],
      volumes,
    },
  };
}

const timestampDirs = (dir: string): string[] => readdirSync(dir).filter((n) => /^\.\.\d{4}_/.test(n));

describe.skipIf(notRoot)('volume plugins (root: real mounts)', () => {
  let env: Env;
  let vm: VolumeManager;
  const abort = new AbortController();

  beforeAll(async () => {
    env = await startEnv();
    // The built-in driver's CSIDriver as `stowage up` creates it: both lifecycle modes (immutable, so replaced).
    await env.client.resource('CSIDriver').delete(DRIVER);
    await env.client.resource('CSIDriver').create({
      metadata: { name: DRIVER },
      spec: { attachRequired: false, podInfoOnMount: true, volumeLifecycleModes: ['Persistent', 'Ephemeral'] },
    });
    vm = await startVolumeManager({
      client: env.client,
      nodeName: NODE,
      rootDir: env.rootDir,
      drivers: { endpoint: (d) => (d === DRIVER ? env.socket : undefined) },
      signal: abort.signal,
      backoffCapMs: 1000,
    });
  });
  afterAll(async () => {
    await vm?.stop();
    await env?.close();
  });

  it('the documentation task: hostPath PV + claim + pod → bound, Running, the host directory at the volume path', async () => {
    const hostDir = path.join(env.dir, 'mnt-data');
    mkdirSync(hostDir);
    writeFileSync(path.join(hostDir, 'index.html'), 'Hello from Kubernetes storage');
    await env.client.resource('PersistentVolume').create({
      metadata: { name: 'task-pv-volume', labels: { type: 'local' } },
      spec: {
        storageClassName: 'manual',
        capacity: { storage: '10Gi' },
        accessModes: ['ReadWriteOnce'],
        hostPath: { path: hostDir },
      },
    });
    await env.client.resource('PersistentVolumeClaim').create({
      metadata: { name: 'task-pv-claim', namespace: 'default' },
      spec: { storageClassName: 'manual', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '3Gi' } } },
    });
    await until(
      'claim bound',
      async () =>
        (await env.client.resource('PersistentVolumeClaim').get('task-pv-claim', { namespace: 'default' })).status
          ?.phase === 'Bound',
    );
    await createPod(
      env,
      pod('task-pv-pod', [{ name: 'task-pv-storage', persistentVolumeClaim: { claimName: 'task-pv-claim' } }]),
    );
    const { hostPaths } = await waitRunning(env, 'task-pv-pod');
    expect(hostPaths['task-pv-storage']).toBe(hostDir);
    await deletePodAndWait(env, 'task-pv-pod');
    expect(readFileSync(path.join(hostDir, 'index.html'), 'utf8')).toBe('Hello from Kubernetes storage');
  });

  it('hostPath type mismatch → FailedMount naming it, repeated; ContainerCreating meanwhile; no type → created like the runtime does', async () => {
    const file = path.join(env.dir, 'a-file');
    writeFileSync(file, 'x');
    await createPod(env, pod('hp-bad', [{ name: 'h', hostPath: { path: file, type: 'Directory' } }]));
    const want = `MountVolume.SetUp failed for volume "h" : hostPath type check failed: ${file} is not a directory`;
    await until('FailedMount repeated', async () => {
      const list = await env.client.resource('Event').list({ namespace: 'default' });
      return list.items.some(
        (e) =>
          e.involvedObject.name === 'hp-bad' && e.reason === 'FailedMount' && e.message === want && (e.count ?? 1) >= 2,
      );
    });
    const p = await until('hp-bad shows ContainerCreating', async () => {
      const got = await env.client.resource('Pod').get('hp-bad', { namespace: 'default' });
      return got.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'ContainerCreating' ? got : undefined;
    });
    expect(p.status?.phase).toBe('Pending');
    await deletePodAndWait(env, 'hp-bad');

    // No type: nothing checked; a missing path is created as the container runtime would.
    const missing = path.join(env.dir, 'made', 'by', 'runtime');
    await createPod(env, pod('hp-none', [{ name: 'h', hostPath: { path: missing } }]));
    const { hostPaths } = await waitRunning(env, 'hp-none');
    expect(hostPaths['h']).toBe(missing);
    expect(statSync(missing).isDirectory()).toBe(true);
    await deletePodAndWait(env, 'hp-none');
  });

  it('a local PV bound by node affinity (WaitForFirstConsumer): scheduled to its node, bind-mounted at the pod volume dir, unmounted with the pod, data kept', async () => {
    const disk = path.join(env.dir, 'disk1');
    mkdirSync(disk);
    writeFileSync(path.join(disk, 'kept'), 'on disk');
    await env.client.resource('StorageClass').create({
      metadata: { name: 'local-storage' },
      provisioner: 'kubernetes.io/no-provisioner',
      volumeBindingMode: 'WaitForFirstConsumer',
    });
    const localPv = (name: string, node: string, p: string): PersistentVolume => ({
      metadata: { name },
      spec: {
        storageClassName: 'local-storage',
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteOnce'],
        local: { path: p },
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] },
            ],
          },
        },
      },
    });
    await env.client.resource('PersistentVolume').create(localPv('local-elsewhere', 'another-node', '/mnt/disks/x'));
    await env.client.resource('PersistentVolume').create(localPv('local-pv', NODE, disk));
    await env.client.resource('PersistentVolumeClaim').create({
      metadata: { name: 'local-claim', namespace: 'default' },
      spec: {
        storageClassName: 'local-storage',
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '1Gi' } },
      },
    });
    // The test node has no agent heartbeat (not-ready taint) and no hostname label of its own.
    await env.client
      .resource('Node')
      .patch(NODE, 'merge', { metadata: { labels: { 'kubernetes.io/hostname': NODE } } });
    const unscheduled = pod('local-pod', [{ name: 'data', persistentVolumeClaim: { claimName: 'local-claim' } }]);
    delete unscheduled.spec!.nodeName;
    unscheduled.spec!.tolerations = [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists' }];
    const created = await createPod(env, unscheduled);
    const { hostPaths, pod: running } = await waitRunning(env, 'local-pod');
    expect(running.spec?.nodeName).toBe(NODE);
    expect(
      (await env.client.resource('PersistentVolumeClaim').get('local-claim', { namespace: 'default' })).spec
        ?.volumeName,
    ).toBe('local-pv');
    expect(hostPaths['data']).toBe(
      path.join(env.rootDir, 'pods', created.metadata!.uid!, 'volumes', 'kubernetes.io~local-volume', 'local-pv'),
    );
    expect(await findMount(hostPaths['data']!)).toBeDefined();
    expect(readFileSync(path.join(hostPaths['data']!, 'kept'), 'utf8')).toBe('on disk');
    await deletePodAndWait(env, 'local-pod');
    expect(await mountsUnder(env.rootDir)).toEqual([]);
    expect(readFileSync(path.join(disk, 'kept'), 'utf8')).toBe('on disk');
  });

  it('a local block PV: the pod gets a symlink to the device in its volumeDevices, removed with the pod', async () => {
    const file = path.join(env.dir, 'disk2.img');
    writeFileSync(file, Buffer.alloc(0));
    truncateSync(file, 4 * Mi);
    const dev = await attachLoop(file);
    try {
      await env.client.resource('PersistentVolume').create({
        metadata: { name: 'local-block' },
        spec: {
          storageClassName: '',
          volumeMode: 'Block',
          capacity: { storage: '4Mi' },
          accessModes: ['ReadWriteOnce'],
          local: { path: dev },
          nodeAffinity: {
            required: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [NODE] }] },
              ],
            },
          },
        },
      });
      await env.client.resource('PersistentVolumeClaim').create({
        metadata: { name: 'block-claim', namespace: 'default' },
        spec: {
          storageClassName: '',
          volumeName: 'local-block',
          volumeMode: 'Block',
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: '4Mi' } },
        },
      });
      await until(
        'block claim bound',
        async () =>
          (await env.client.resource('PersistentVolumeClaim').get('block-claim', { namespace: 'default' })).status
            ?.phase === 'Bound',
      );
      const created = await createPod(env, {
        metadata: { name: 'block-pod', namespace: 'default' },
        spec: {
          nodeName: NODE,
          containers: [{ name: 'app', image: 'busybox', volumeDevices: [{ name: 'raw', devicePath: '/dev/xvda' }] }],
          volumes: [{ name: 'raw', persistentVolumeClaim: { claimName: 'block-claim' } }],
        },
      });
      const { hostPaths } = await waitRunning(env, 'block-pod');
      const link = path.join(
        env.rootDir,
        'pods',
        created.metadata!.uid!,
        'volumeDevices',
        'kubernetes.io~local-volume',
        'local-block',
      );
      expect(hostPaths['raw']).toBe(link);
      expect(readlinkSync(link)).toBe(dev);
      await deletePodAndWait(env, 'block-pod');
      await until('pod dir removed', () => !existsSync(path.join(env.rootDir, 'pods', created.metadata!.uid!)));
    } finally {
      await detachLoop(dev);
    }
  });

  it('configMap and secret volumes: contents, modes, live updates by ..data swap; a subPath keeps the old file', async () => {
    await env.client
      .resource('ConfigMap')
      .create({ metadata: { name: 'app-config', namespace: 'default' }, data: { 'app.conf': 'v1', other: 'o' } });
    await env.client.resource('Secret').create({
      metadata: { name: 'app-secret', namespace: 'default' },
      data: { password: Buffer.from('p1').toString('base64') },
    });
    const created = await createPod(
      env,
      pod(
        'cm-pod',
        [
          {
            name: 'cfg',
            configMap: {
              name: 'app-config',
              items: [
                { key: 'app.conf', path: 'conf/app.conf' },
                { key: 'other', path: 'other', mode: 0o600 },
              ],
            },
          },
          { name: 'sec', secret: { secretName: 'app-secret', defaultMode: 0o400 } },
        ],
        { subPaths: [{ volume: 'cfg', subPath: 'conf/app.conf' }] },
      ),
    );
    const { hostPaths } = await waitRunning(env, 'cm-pod');
    const cfg = hostPaths['cfg']!;
    const sec = hostPaths['sec']!;
    expect(cfg).toBe(
      path.join(env.rootDir, 'pods', created.metadata!.uid!, 'volumes', 'kubernetes.io~configmap', 'cfg'),
    );
    expect(readFileSync(path.join(cfg, 'conf', 'app.conf'), 'utf8')).toBe('v1');
    expect(readlinkSync(path.join(cfg, 'conf'))).toBe('..data/conf');
    expect(statSync(path.join(cfg, 'other')).mode & 0o777).toBe(0o600);
    expect(statSync(path.join(cfg, 'conf', 'app.conf')).mode & 0o777).toBe(0o644);
    expect(await findMount(cfg)).toBeUndefined(); // configMap: a plain directory
    expect((await findMount(sec))?.fsType).toBe('tmpfs'); // secret: never on disk
    expect(readFileSync(path.join(sec, 'password'), 'utf8')).toBe('p1');
    expect(statSync(path.join(sec, 'password')).mode & 0o777).toBe(0o400);
    const sub = path.join(env.rootDir, 'pods', created.metadata!.uid!, 'volume-subpaths', 'cfg', 'app', '2');
    expect(readFileSync(sub, 'utf8')).toBe('v1');
    const [before] = timestampDirs(cfg);

    await env.client
      .resource('ConfigMap')
      .patch('app-config', 'merge', { data: { 'app.conf': 'v2' } }, { namespace: 'default' });
    await env.client
      .resource('Secret')
      .patch(
        'app-secret',
        'merge',
        { data: { password: Buffer.from('p2').toString('base64') } },
        { namespace: 'default' },
      );
    await until('configMap update visible', () => readFileSync(path.join(cfg, 'conf', 'app.conf'), 'utf8') === 'v2');
    await until('secret update visible', () => readFileSync(path.join(sec, 'password'), 'utf8') === 'p2');
    expect(timestampDirs(cfg)).toHaveLength(1);
    expect(timestampDirs(cfg)[0]).not.toBe(before);
    expect(readFileSync(sub, 'utf8')).toBe('v1'); // subPath mounts do not get updates (as Kubernetes)

    await deletePodAndWait(env, 'cm-pod');
    await until('all unmounted', async () => (await mountsUnder(env.rootDir)).length === 0);
    await until('pod dir removed', () => !existsSync(path.join(env.rootDir, 'pods', created.metadata!.uid!)));
  });

  it('downwardAPI labels: written on a tmpfs, updated when the labels change', async () => {
    await createPod(
      env,
      pod(
        'dapi',
        [
          {
            name: 'info',
            downwardAPI: {
              items: [
                { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
                { path: 'name', fieldRef: { fieldPath: 'metadata.name' } },
              ],
            },
          },
        ],
        { labels: { zone: 'a' } },
      ),
    );
    const { hostPaths } = await waitRunning(env, 'dapi');
    const dir = hostPaths['info']!;
    expect(readFileSync(path.join(dir, 'labels'), 'utf8')).toBe('zone="a"');
    expect(readFileSync(path.join(dir, 'name'), 'utf8')).toBe('dapi');
    await env.client
      .resource('Pod')
      .patch('dapi', 'merge', { metadata: { labels: { zone: 'b', tier: 'web' } } }, { namespace: 'default' });
    await until('labels updated', () => readFileSync(path.join(dir, 'labels'), 'utf8') === 'tier="web"\nzone="b"');
    await deletePodAndWait(env, 'dapi');
    await until('all unmounted', async () => (await mountsUnder(env.rootDir)).length === 0);
  });

  it('emptyDir medium Memory: a tmpfs of sizeLimit (1777) refusing writes past it (ENOSPC); subPath works; removed with the pod', async () => {
    const created = await createPod(
      env,
      pod('mem', [{ name: 'cache', emptyDir: { medium: 'Memory', sizeLimit: '1Mi' } }], {
        subPaths: [{ volume: 'cache', subPath: 'sub' }],
        memory: '64Mi',
      }),
    );
    const { hostPaths } = await waitRunning(env, 'mem');
    const dir = hostPaths['cache']!;
    const m = await findMount(dir);
    expect(m?.fsType).toBe('tmpfs');
    expect(m?.superOptions.join(',')).toMatch(/size=1024k/);
    expect(statSync(dir).mode & 0o7777).toBe(0o1777);
    expect(() => writeFileSync(path.join(dir, 'big'), Buffer.alloc(2 * Mi))).toThrow(/ENOSPC/);
    rmSync(path.join(dir, 'big'));
    const sub = path.join(env.rootDir, 'pods', created.metadata!.uid!, 'volume-subpaths', 'cache', 'app', '1');
    expect(await findMount(sub)).toBeDefined();
    writeFileSync(path.join(sub, 'f'), 'through subPath');
    expect(readFileSync(path.join(dir, 'sub', 'f'), 'utf8')).toBe('through subPath');
    await deletePodAndWait(env, 'mem');
    await until('tmpfs and subPath unmounted', async () => (await mountsUnder(env.rootDir)).length === 0);
    await until('pod dir removed', () => !existsSync(path.join(env.rootDir, 'pods', created.metadata!.uid!)));
  });

  it('inline CSI volume: published without staging, ephemeral context, deleted with the pod; a driver without the mode is refused', async () => {
    const created = await createPod(
      env,
      pod('inline', [{ name: 'scratch', csi: { driver: DRIVER, volumeAttributes: { size: '1Mi' } } }]),
    );
    const { hostPaths } = await waitRunning(env, 'inline');
    const target = hostPaths['scratch']!;
    expect(target).toBe(
      path.join(env.rootDir, 'pods', created.metadata!.uid!, 'volumes', 'kubernetes.io~csi', 'scratch', 'mount'),
    );
    expect(await findMount(target)).toBeDefined();
    expect(JSON.parse(readFileSync(path.join(path.dirname(target), 'vol_data.json'), 'utf8'))).toMatchObject({
      volumeLifecycleMode: 'Ephemeral',
      volumeHandle: expect.stringMatching(/^csi-[0-9a-f]{64}$/),
    });
    writeFileSync(path.join(target, 'x'), 'y');
    expect((await mountsUnder(env.rootDir)).filter((x) => x.mountPoint.includes('globalmount'))).toEqual([]);
    await deletePodAndWait(env, 'inline');
    await until('unpublished', async () => (await mountsUnder(env.rootDir)).length === 0);
    await until('driver deleted the ephemeral volume', () =>
      Object.keys(env.driver.driver.volumes).every((id) => !id.startsWith('csi-')),
    );

    await createPod(env, pod('inline-bad', [{ name: 'e', csi: { driver: 'other.csi.example' } }]));
    const ev = await until('refusal', async () =>
      (await events(env, 'inline-bad')).find((e) => e.reason === 'FailedMount'),
    );
    expect(ev.message).toBe(
      'MountVolume.SetUp failed for volume "e" : volume mode "Ephemeral" not supported by driver other.csi.example (no CSIDriver object)',
    );
    await deletePodAndWait(env, 'inline-bad');
  });
});
