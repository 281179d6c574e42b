import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listLoopDevices } from '../src/mount/loop.js';
import { findMount, mountsUnder } from '../src/mount/mountinfo.js';
import { deviceMountPath } from '../src/node/volumemanager/operations/paths.js';
import { startVolumeManager, type VolumeManager } from '../src/node/volumemanager/volume-manager.js';
import { MetricsRegistry } from '../src/util/metrics.js';
import {
  claimPod,
  createPod,
  deletePodAndWait,
  DRIVER,
  events,
  NODE,
  staticClaim,
  startEnv,
  until,
  waitRunning,
  type Env,
} from './volumemanager-kit.js';

const notRoot = process.getuid?.() !== 0;

describe.skipIf(notRoot)('volume manager with the hostpath driver (root: real mounts)', () => {
  let env: Env;
  let vm: VolumeManager;
  const metrics = new MetricsRegistry();
  const abort = new AbortController();

  beforeAll(async () => {
    env = await startEnv();
    vm = await startVolumeManager({
      client: env.client,
      nodeName: NODE,
      rootDir: env.rootDir,
      drivers: { endpoint: (d) => (d === DRIVER ? env.socket : undefined) },
      signal: abort.signal,
      metrics,
      backoffCapMs: 1000,
    });
  });
  afterAll(async () => {
    await vm?.stop();
    await env?.close();
  });

  it('claim → staged, published, Running → data survives the pod → claim released after the last pod', async () => {
    const { handle } = await staticClaim(env, 'c1');
    await createPod(env, claimPod('p1', [{ volume: 'data', claim: 'c1' }]));
    const { pod, hostPaths } = await waitRunning(env, 'p1');
    const conds = Object.fromEntries((pod.status?.conditions ?? []).map((c) => [c.type, c.status]));
    expect(conds).toMatchObject({ PodScheduled: 'True', Initialized: 'True', ContainersReady: 'True', Ready: 'True' });
    const target = hostPaths['data']!;
    expect(target).toBe(
      path.join(env.rootDir, 'pods', pod.metadata!.uid!, 'volumes', 'kubernetes.io~csi', 'pv-c1', 'mount'),
    );
    const staging = deviceMountPath(env.rootDir, DRIVER, handle);
    expect(await findMount(staging)).toBeDefined();
    expect(await findMount(target)).toBeDefined();
    expect(JSON.parse(readFileSync(path.join(path.dirname(target), 'vol_data.json'), 'utf8'))).toMatchObject({
      driverName: DRIVER,
      volumeHandle: handle,
      specVolID: 'pv-c1',
      nodeName: NODE,
    });
    writeFileSync(path.join(target, 'hello.txt'), 'kept');
    const node = await env.client.resource('Node').get(NODE);
    expect(node.status?.volumesInUse).toEqual([`kubernetes.io/csi/${DRIVER}^${handle}`]);
    expect(metrics.render()).toMatch(
      /volume_manager_total_volumes\{plugin_name="kubernetes.io\/csi:hostpath.csi.stowage.io",state="actual_state_of_world"\} 1/,
    );
    expect(metrics.render()).toMatch(
      /storage_operation_duration_seconds_count\{operation_name="volume_mount",volume_plugin="kubernetes.io\/csi:hostpath.csi.stowage.io",status="success"\} 1/,
    );

    await deletePodAndWait(env, 'p1');
    await until('everything unmounted', async () => (await mountsUnder(env.rootDir)).length === 0);
    await until('pod dir removed', () => !existsSync(path.join(env.rootDir, 'pods', pod.metadata!.uid!)));
    await until('staging dir removed', () => !existsSync(path.dirname(staging)));

    await createPod(env, claimPod('p2', [{ volume: 'data', claim: 'c1' }]));
    const second = await waitRunning(env, 'p2');
    expect(readFileSync(path.join(second.hostPaths['data']!, 'hello.txt'), 'utf8')).toBe('kept');

    // pvc-protection: the claim waits for its last pod, then goes once the node finally deletes it.
    await env.client.resource('PersistentVolumeClaim').delete('c1', { namespace: 'default' });
    const pending = await env.client.resource('PersistentVolumeClaim').get('c1', { namespace: 'default' });
    expect(pending.metadata?.finalizers).toContain('kubernetes.io/pvc-protection');
    await deletePodAndWait(env, 'p2');
    await until(
      'claim c1 released and deleted',
      async () =>
        !(await env.client.resource('PersistentVolumeClaim').list({ namespace: 'default' })).items.some(
          (c) => c.metadata?.name === 'c1',
        ),
    );
    await until('everything unmounted', async () => (await mountsUnder(env.rootDir)).length === 0);
  });

  it('two pods share a volume: staged once, published twice, unstaged after the last', async () => {
    const { handle } = await staticClaim(env, 'shared');
    await createPod(env, claimPod('s1', [{ volume: 'v', claim: 'shared' }]));
    await createPod(env, claimPod('s2', [{ volume: 'v', claim: 'shared' }]));
    const a = await waitRunning(env, 's1');
    const b = await waitRunning(env, 's2');
    const staging = deviceMountPath(env.rootDir, DRIVER, handle);
    const all = await mountsUnder(env.rootDir);
    expect(all.filter((m) => m.mountPoint === staging)).toHaveLength(1);
    expect(all.filter((m) => m.mountPoint === a.hostPaths['v'] || m.mountPoint === b.hostPaths['v'])).toHaveLength(2);
    writeFileSync(path.join(a.hostPaths['v']!, 'x'), 'from s1');
    expect(readFileSync(path.join(b.hostPaths['v']!, 'x'), 'utf8')).toBe('from s1');
    await deletePodAndWait(env, 's1');
    expect(await findMount(staging)).toBeDefined();
    expect(await findMount(b.hostPaths['v']!)).toBeDefined();
    await deletePodAndWait(env, 's2');
    await until('unstaged', async () => (await findMount(staging)) === undefined);
    expect(await mountsUnder(env.rootDir)).toEqual([]);
  });

  it('read-only claim source → a read-only publication', async () => {
    await staticClaim(env, 'ro');
    await createPod(env, claimPod('r1', [{ volume: 'v', claim: 'ro', readOnly: true }]));
    const { hostPaths } = await waitRunning(env, 'r1');
    expect((await findMount(hostPaths['v']!))?.mountOptions).toContain('ro');
    expect(() => writeFileSync(path.join(hostPaths['v']!, 'nope'), 'x')).toThrow(/EROFS|read-only/);
    await deletePodAndWait(env, 'r1');
    await until('everything unmounted', async () => (await mountsUnder(env.rootDir)).length === 0);
  });

  it('block volume: staged, published, bound into the global map with a descriptor-lock loop, pod symlink; all released', async () => {
    await staticClaim(env, 'blk', { block: true });
    const pod = claimPod('b1', []);
    pod.spec!.containers[0]!.volumeDevices = [{ name: 'dev', devicePath: '/dev/xvda' }];
    pod.spec!.volumes = [{ name: 'dev', persistentVolumeClaim: { claimName: 'blk' } }];
    const created = await createPod(env, pod);
    const { hostPaths } = await waitRunning(env, 'b1');
    const uid = created.metadata!.uid!;
    const link = path.join(env.rootDir, 'pods', uid, 'volumeDevices', 'kubernetes.io~csi', 'pv-blk');
    expect(hostPaths['dev']).toBe(link);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    const publish = path.join(
      env.rootDir,
      'plugins',
      'kubernetes.io',
      'csi',
      'volumeDevices',
      'publish',
      'pv-blk',
      uid,
    );
    expect(readlinkSync(link)).toBe(publish);
    expect(statSync(link).isBlockDevice()).toBe(true);
    const globalMap = path.join(env.rootDir, 'plugins', 'kubernetes.io', 'csi', 'volumeDevices', 'pv-blk', 'dev', uid);
    expect(await findMount(globalMap)).toBeDefined();
    expect((await listLoopDevices()).some((l) => l.backingFile === globalMap)).toBe(true);
    await deletePodAndWait(env, 'b1');
    await until(
      'unmapped and unstaged',
      async () =>
        (await mountsUnder(env.rootDir)).length === 0 &&
        !(await listLoopDevices()).some((l) => l.backingFile.startsWith(env.dir)),
    );
    await until(
      'block dirs removed',
      () => !existsSync(path.join(env.rootDir, 'plugins', 'kubernetes.io', 'csi', 'volumeDevices', 'pv-blk')),
    );
  });

  it('subPath: bind-mounted under volume-subpaths; a symlink escape fails with a clear event', async () => {
    const { handle } = await staticClaim(env, 'sp');
    // Prepare the volume's content through a first pod: a directory and an escaping symlink.
    await createPod(env, claimPod('sp0', [{ volume: 'v', claim: 'sp' }]));
    const first = await waitRunning(env, 'sp0');
    mkdirSync(path.join(first.hostPaths['v']!, 'app'));
    writeFileSync(path.join(first.hostPaths['v']!, 'app', 'cfg'), 'inside');
    symlinkSync('/etc', path.join(first.hostPaths['v']!, 'evil'));
    await deletePodAndWait(env, 'sp0');

    const good = await createPod(
      env,
      claimPod('sp1', [{ volume: 'v', claim: 'sp' }], { subPaths: [{ volume: 'v', subPath: 'app' }] }),
    );
    await waitRunning(env, 'sp1');
    const sub = path.join(env.rootDir, 'pods', good.metadata!.uid!, 'volume-subpaths', 'v', 'app', '1');
    expect(await findMount(sub)).toBeDefined();
    expect(readFileSync(path.join(sub, 'cfg'), 'utf8')).toBe('inside');
    await deletePodAndWait(env, 'sp1');
    await until('pod dir removed', () => !existsSync(path.join(env.rootDir, 'pods', good.metadata!.uid!)));

    await createPod(
      env,
      claimPod('sp2', [{ volume: 'v', claim: 'sp' }], { subPaths: [{ volume: 'v', subPath: 'evil' }] }),
    );
    const ev = await until('FailedMount for the escape', async () =>
      (await events(env, 'sp2')).find((e) => e.reason === 'FailedMount' && e.message.includes('symbolic link')),
    );
    expect(ev.message).toContain('MountVolume.SetUp failed for volume "pv-sp"');
    expect((await env.client.resource('Pod').get('sp2', { namespace: 'default' })).status?.phase).not.toBe('Running');
    expect((await mountsUnder(env.rootDir)).some((m) => m.mountPoint.includes('volume-subpaths'))).toBe(false);
    await deletePodAndWait(env, 'sp2');
    await until('unstaged', async () => (await findMount(deviceMountPath(env.rootDir, DRIVER, handle))) === undefined);
    expect(await mountsUnder(env.rootDir)).toEqual([]);
  });

  it('emptyDir and hostPath: set up without mounts, emptyDir removed with the pod', async () => {
    const hp = path.join(env.dir, 'host-data');
    const created = await createPod(env, {
      metadata: { name: 'e1', namespace: 'default' },
      spec: {
        nodeName: NODE,
        containers: [{ name: 'c', image: 'x' }],
        volumes: [
          { name: 'scratch', emptyDir: {} },
          { name: 'h', hostPath: { path: hp, type: 'DirectoryOrCreate' } },
        ],
      },
    });
    const { hostPaths } = await waitRunning(env, 'e1');
    expect(hostPaths['h']).toBe(hp);
    expect(hostPaths['scratch']).toBe(
      path.join(env.rootDir, 'pods', created.metadata!.uid!, 'volumes', 'kubernetes.io~empty-dir', 'scratch'),
    );
    writeFileSync(path.join(hostPaths['scratch']!, 'tmp'), 'x');
    writeFileSync(path.join(hp, 'keep'), 'x');
    await deletePodAndWait(env, 'e1');
    await until('pod dir removed', () => !existsSync(path.join(env.rootDir, 'pods', created.metadata!.uid!)));
    expect(readFileSync(path.join(hp, 'keep'), 'utf8')).toBe('x');
  });

  it('PV capacity grown past the claim status → NodeExpandVolume, claim status follows, VolumeResizeSuccessful', async () => {
    await staticClaim(env, 'grow', { bytes: 1 << 20 });
    await createPod(env, claimPod('g1', [{ volume: 'v', claim: 'grow' }]));
    await waitRunning(env, 'g1');
    await env.client
      .resource('PersistentVolume')
      .patch('pv-grow', 'merge', { spec: { capacity: { storage: String(2 << 20) } } });
    await until(
      'claim status capacity grown',
      async () =>
        (await env.client.resource('PersistentVolumeClaim').get('grow', { namespace: 'default' })).status?.capacity?.[
          'storage'
        ] === String(2 << 20),
    );
    const ev = await until('resize event', async () =>
      (await events(env, 'g1')).find((e) => e.reason === 'VolumeResizeSuccessful'),
    );
    expect(ev.message).toContain('pv-grow');
    await deletePodAndWait(env, 'g1');
    await until('unmounted', async () => (await mountsUnder(env.rootDir)).length === 0);
  });
});
