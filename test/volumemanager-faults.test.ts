import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CsiClient } from '../src/csi/client.js';
import { listLoopDevices } from '../src/mount/loop.js';
import { findMount, mountsUnder, readMountInfo } from '../src/mount/mountinfo.js';
import { deviceMountPath } from '../src/node/volumemanager/operations/paths.js';
import { startVolumeManager, type VolumeManager } from '../src/node/volumemanager/volume-manager.js';
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
import { startProxy, type Proxy } from './volumemanager-proxy.js';

const notRoot = process.getuid?.() !== 0;

describe.skipIf(notRoot)('volume manager: faults and restarts (root: real mounts)', () => {
  let env: Env;
  let proxy: Proxy;
  let vm: VolumeManager | undefined;
  const start = async (): Promise<VolumeManager> =>
    startVolumeManager({
      client: env.client,
      nodeName: NODE,
      rootDir: env.rootDir,
      drivers: { endpoint: (d) => (d === DRIVER ? proxy.driver.endpoint : undefined) },
      signal: new AbortController().signal,
      backoffCapMs: 2000,
    });

  beforeAll(async () => {
    env = await startEnv();
    proxy = await startProxy({ socket: path.join(env.dir, 'proxy.sock'), upstream: env.socket });
  });
  afterAll(async () => {
    await vm?.stop();
    await proxy?.stop();
    await env?.close();
  });

  it('a driver failing NodePublish a few times → FailedMount events, backoff, then Running', async () => {
    vm = await start();
    proxy.controls.publishFailures = 3;
    proxy.controls.publishAt.length = 0;
    await staticClaim(env, 'f1');
    await createPod(env, claimPod('f1', [{ volume: 'data', claim: 'f1' }]));
    await waitRunning(env, 'f1');
    expect(proxy.controls.publishAt).toHaveLength(4);
    const gaps = proxy.controls.publishAt.slice(1).map((t, i) => t - proxy.controls.publishAt[i]!);
    // Backoff lower bounds (500 ms, 1 s, 2 s cap): retries are never earlier than the schedule.
    gaps.forEach((g, i) => expect(g).toBeGreaterThanOrEqual(Math.min(500 * 2 ** i, 2000) - 20));
    const ev = await until('FailedMount event', async () =>
      (await events(env, 'f1')).find((e) => e.reason === 'FailedMount'),
    );
    expect(ev.type).toBe('Warning');
    expect(ev.message).toContain('MountVolume.SetUp failed for volume "pv-f1"');
    expect(ev.message).toContain('injected publish failure');
    await deletePodAndWait(env, 'f1');
    await until('unmounted', async () => (await mountsUnder(env.rootDir)).length === 0);
  }, 30_000);

  it('stopped mid-publish and restarted → converges: one mount, Running, data intact', async () => {
    vm ??= await start();
    const { handle } = await staticClaim(env, 'r1');
    let release!: () => void;
    proxy.controls.publishGate = new Promise<void>((r) => (release = r));
    const arrived = new Promise<void>((r) => (proxy.controls.onPublish = r));
    const created = await createPod(env, claimPod('r1', [{ volume: 'data', claim: 'r1' }]));
    await arrived;
    await vm.stop(); // the publish in flight is cancelled on our side; the driver still finishes it
    vm = undefined;
    release();
    proxy.controls.publishGate = undefined;
    proxy.controls.onPublish = undefined;
    const target = path.join(
      env.rootDir,
      'pods',
      created.metadata!.uid!,
      'volumes',
      'kubernetes.io~csi',
      'pv-r1',
      'mount',
    );
    await until('driver finished the publish', async () => (await findMount(target)) !== undefined);

    vm = await start();
    const { hostPaths } = await waitRunning(env, 'r1');
    expect(hostPaths['data']).toBe(target);
    const table = await readMountInfo();
    expect(table.filter((m) => m.mountPoint === target)).toHaveLength(1);
    expect(table.filter((m) => m.mountPoint === deviceMountPath(env.rootDir, DRIVER, handle))).toHaveLength(1);
    writeFileSync(path.join(target, 'f'), 'data');

    // Restart while Running: nothing is unmounted or published twice.
    await vm.stop();
    vm = await start();
    await until('populated', () => vm!.populatedOnce());
    await until('reconciled', async () => {
      await vm!.idle();
      return vm!.asw.mountedPods().every((m) => m.state === 'Mounted') && vm!.asw.mountedPods().length === 1;
    });
    const again = await readMountInfo();
    expect(again.filter((m) => m.mountPoint === target)).toHaveLength(1);
    expect(readFileSync(path.join(target, 'f'), 'utf8')).toBe('data');
    expect((await env.client.resource('Pod').get('r1', { namespace: 'default' })).status?.phase).toBe('Running');

    // Deleted while the agent is down → torn down after restart.
    await vm.stop();
    vm = undefined;
    await env.client.resource('Pod').delete('r1', { namespace: 'default' });
    vm = await start();
    await until(
      'pod gone',
      async () =>
        !(await env.client.resource('Pod').list({ namespace: 'default' })).items.some((p) => p.metadata?.name === 'r1'),
    );
    await until('unmounted', async () => (await mountsUnder(env.rootDir)).length === 0);
    await until('pod dir removed', () => !existsSync(path.join(env.rootDir, 'pods', created.metadata!.uid!)));
  }, 40_000);

  it('a pod deleted while the agent was down, with staging left behind → unstaged after restart', async () => {
    vm ??= await start();
    const { handle } = await staticClaim(env, 'r2');
    await createPod(env, claimPod('r2', [{ volume: 'data', claim: 'r2' }]));
    await waitRunning(env, 'r2');
    await vm.stop();
    vm = undefined;
    await env.client.resource('Pod').delete('r2', { namespace: 'default', gracePeriodSeconds: 0 }); // gone at once
    vm = await start();
    await until(
      'unmounted and staging dir removed',
      async () =>
        (await mountsUnder(env.rootDir)).length === 0 &&
        !existsSync(path.dirname(deviceMountPath(env.rootDir, DRIVER, handle))),
    );
  }, 30_000);

  it.each([
    { kind: 'filesystem', name: 'g1', block: false },
    { kind: 'block', name: 'g2', block: true },
  ])(
    '$kind: NodeUnstageVolume done but its reply lost, then the volume deleted before the retry → NOT_FOUND ends the unstage: directories and vol_data.json removed',
    async ({ name, block }) => {
      vm ??= await start();
      const { handle } = await staticClaim(env, name, { block });
      const pod = claimPod(name, block ? [] : [{ volume: 'data', claim: name }]);
      if (block) {
        pod.spec!.containers[0]!.volumeDevices = [{ name: 'dev', devicePath: '/dev/xvda' }];
        pod.spec!.volumes = [{ name: 'dev', persistentVolumeClaim: { claimName: name } }];
      }
      await createPod(env, pod);
      await waitRunning(env, name);
      proxy.controls.unstageFaults.push({ kind: 'errorAfter', code: grpc.status.UNAVAILABLE });
      let arrivals = 0;
      let release!: () => void;
      const retried = new Promise<void>((r) => {
        proxy.controls.onUnstage = () => {
          if (++arrivals !== 2) return;
          proxy.controls.unstageGate = new Promise<void>((g) => (release = g));
          r();
        };
      });
      await deletePodAndWait(env, name);
      await retried; // the first unstage acted and "failed"; the retry waits while the volume goes
      const driver = new CsiClient({ endpoint: env.socket });
      try {
        await driver.deleteVolume({ volumeId: handle, secrets: {} });
      } finally {
        driver.close();
      }
      proxy.controls.unstageGate = undefined;
      proxy.controls.onUnstage = undefined;
      release();
      const left = block
        ? path.join(env.rootDir, 'plugins', 'kubernetes.io', 'csi', 'volumeDevices', `pv-${name}`)
        : path.dirname(deviceMountPath(env.rootDir, DRIVER, handle));
      await until(
        'staging dir and vol_data.json removed',
        async () => (await mountsUnder(env.rootDir)).length === 0 && !existsSync(left),
      );
    },
    30_000,
  );

  it('unbound claim, missing configMap and unsupported source → Warning events, pod stays Pending (ContainerCreating)', async () => {
    vm ??= await start();
    await createPod(env, { ...claimPod('u1', [{ volume: 'data', claim: 'missing-claim' }]) });
    await createPod(env, {
      metadata: { name: 'u2', namespace: 'default' },
      spec: {
        nodeName: NODE,
        containers: [{ name: 'c', image: 'x' }],
        volumes: [
          { name: 'cfg', configMap: { name: 'x' } },
          { name: 'git', gitRepo: { repository: 'r' } },
        ],
      },
    });
    const e1 = await until('u1 event', async () => (await events(env, 'u1')).find((e) => e.reason === 'FailedMount'));
    expect(e1.message).toContain('missing-claim');
    await until('u2 events', async () => {
      const msgs = (await events(env, 'u2')).filter((e) => e.reason === 'FailedMount').map((e) => e.message);
      return (
        msgs.includes('MountVolume.SetUp failed for volume "cfg" : configmap "x" not found') &&
        msgs.some((m) => m.includes('unsupported source (gitRepo)'))
      );
    });
    expect((await env.client.resource('Pod').get('u1', { namespace: 'default' })).status?.phase).not.toBe('Running');
    const u2 = await until('u2 ContainerCreating', async () => {
      const p = await env.client.resource('Pod').get('u2', { namespace: 'default' });
      return p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'ContainerCreating' ? p : undefined;
    });
    expect(u2.status?.phase).toBe('Pending');
    await deletePodAndWait(env, 'u1');
    await deletePodAndWait(env, 'u2');
  });

  it('block volume survives a restart (one bind, one lock loop) and is released after deletion while down', async () => {
    vm ??= await start();
    await staticClaim(env, 'blk', { block: true });
    const pod = claimPod('b1', []);
    pod.spec!.containers[0]!.volumeDevices = [{ name: 'dev', devicePath: '/dev/xvda' }];
    pod.spec!.volumes = [{ name: 'dev', persistentVolumeClaim: { claimName: 'blk' } }];
    const created = await createPod(env, pod);
    await waitRunning(env, 'b1');
    const globalMap = path.join(
      env.rootDir,
      'plugins',
      'kubernetes.io',
      'csi',
      'volumeDevices',
      'pv-blk',
      'dev',
      created.metadata!.uid!,
    );
    await vm.stop();
    vm = await start();
    await until('reconciled', async () => {
      await vm!.idle();
      return vm!.asw.mountedPods().length === 1 && vm!.asw.mountedPods().every((m) => m.state === 'Mounted');
    });
    expect((await readMountInfo()).filter((m) => m.mountPoint === globalMap)).toHaveLength(1);
    expect((await listLoopDevices()).filter((l) => l.backingFile === globalMap)).toHaveLength(1);
    await vm.stop();
    vm = undefined;
    await env.client.resource('Pod').delete('b1', { namespace: 'default' });
    vm = await start();
    await until(
      'pod gone',
      async () =>
        !(await env.client.resource('Pod').list({ namespace: 'default' })).items.some((p) => p.metadata?.name === 'b1'),
    );
    await until(
      'unmapped, unstaged, loops released',
      async () =>
        (await mountsUnder(env.rootDir)).length === 0 &&
        !(await listLoopDevices()).some((l) => l.backingFile.startsWith(env.dir)),
    );
  }, 30_000);
});
