import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findMount, mountsUnder, readMountInfo } from '../src/mount/mountinfo.js';
import { deviceMountPath } from '../src/node/volumemanager/operations/paths.js';
import {
  claimPod,
  createPod,
  DRIVER,
  NODE,
  staticClaim,
  startEnv,
  until,
  waitRunning,
  type Env,
} from './volumemanager-kit.js';
import { startProxy, type Proxy } from './volumemanager-proxy.js';

const HOOKS = pathToFileURL(fileURLToPath(new URL('./csi-registration.ts-hooks.mjs', import.meta.url))).href;
const CHILD = fileURLToPath(new URL('./volumemanager.child.ts', import.meta.url));
const notRoot = process.getuid?.() !== 0;

describe.skipIf(notRoot)('volume manager killed with SIGKILL (root: real mounts, separate process)', () => {
  let env: Env;
  let proxy: Proxy;
  const children: ChildProcess[] = [];

  const startChild = async (): Promise<ChildProcess> => {
    const proc = spawn(
      process.execPath,
      [
        '--import',
        `data:text/javascript,import{register}from"node:module";register(${JSON.stringify(HOOKS)});`,
        CHILD,
        env.api.kubeconfigPath,
        NODE,
        env.rootDir,
        DRIVER,
        proxy.driver.endpoint,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, STOWAGE_LOG_LEVEL: 'warn' } },
    );
    children.push(proc);
    let err = '';
    await new Promise<void>((resolve, reject) => {
      proc.stderr!.on('data', (b: Buffer) => {
        err += b.toString();
        if (err.includes('volume manager started')) resolve();
      });
      proc.once('exit', (code) => reject(new Error(`child exited ${code}: ${err}`)));
    });
    return proc;
  };
  const kill = async (p: ChildProcess): Promise<void> => {
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGKILL');
    await exited;
  };

  beforeAll(async () => {
    env = await startEnv();
    proxy = await startProxy({ socket: path.join(env.dir, 'proxy.sock'), upstream: env.socket });
  });
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) await kill(c);
    await proxy?.stop();
    await env?.close();
  });

  it('killed mid-publish and mid-unpublish → converges with no stale mount, no double publish, no lost data', async () => {
    const { handle } = await staticClaim(env, 'k1');
    const staging = deviceMountPath(env.rootDir, DRIVER, handle);

    // 1. SIGKILL while NodePublishVolume is in flight; the driver finishes it after the agent is gone.
    let release!: () => void;
    proxy.controls.publishGate = new Promise<void>((r) => (release = r));
    const arrived = new Promise<void>((r) => (proxy.controls.onPublish = r));
    let child = await startChild();
    const created = await createPod(env, claimPod('k1', [{ volume: 'data', claim: 'k1' }]));
    await arrived;
    await kill(child);
    release();
    proxy.controls.publishGate = undefined;
    proxy.controls.onPublish = undefined;
    const target = path.join(
      env.rootDir,
      'pods',
      created.metadata!.uid!,
      'volumes',
      'kubernetes.io~csi',
      'pv-k1',
      'mount',
    );
    await until('driver finished the publish', async () => (await findMount(target)) !== undefined);

    child = await startChild();
    const { hostPaths } = await waitRunning(env, 'k1');
    expect(hostPaths['data']).toBe(target);
    let table = await readMountInfo();
    expect(table.filter((m) => m.mountPoint === target)).toHaveLength(1);
    expect(table.filter((m) => m.mountPoint === staging)).toHaveLength(1);
    writeFileSync(path.join(target, 'precious'), 'kept');

    // 2. SIGKILL while NodeUnpublishVolume is in flight (pod being deleted).
    let releaseU!: () => void;
    proxy.controls.unpublishGate = new Promise<void>((r) => (releaseU = r));
    const arrivedU = new Promise<void>((r) => (proxy.controls.onUnpublish = r));
    await env.client.resource('Pod').delete('k1', { namespace: 'default' });
    await arrivedU;
    await kill(child);
    releaseU();
    proxy.controls.unpublishGate = undefined;
    proxy.controls.onUnpublish = undefined;

    child = await startChild();
    await until(
      'pod finally deleted',
      async () =>
        !(await env.client.resource('Pod').list({ namespace: 'default' })).items.some((p) => p.metadata?.name === 'k1'),
    );
    await until('unpublished and unstaged', async () => (await mountsUnder(env.rootDir)).length === 0);

    // 3. No data lost: a new pod on the claim sees the file.
    await createPod(env, claimPod('k2', [{ volume: 'data', claim: 'k1' }]));
    const second = await waitRunning(env, 'k2');
    expect(readFileSync(path.join(second.hostPaths['data']!, 'precious'), 'utf8')).toBe('kept');
    table = await readMountInfo();
    expect(table.filter((m) => m.mountPoint === second.hostPaths['data'])).toHaveLength(1);
    await env.client.resource('Pod').delete('k2', { namespace: 'default' });
    await until(
      'k2 torn down',
      async () =>
        (await mountsUnder(env.rootDir)).length === 0 &&
        !(await env.client.resource('Pod').list({ namespace: 'default' })).items.length,
    );
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }, 60_000);

  it('killed mid-update of a configMap volume → after restart the new content, one timestamped dir, no leftovers', async () => {
    await env.client
      .resource('ConfigMap')
      .create({ metadata: { name: 'live', namespace: 'default' }, data: { k: 'v1' } });
    let child = await startChild();
    const created = await createPod(env, {
      metadata: { name: 'cmk', namespace: 'default' },
      spec: {
        nodeName: NODE,
        containers: [{ name: 'c', image: 'x', volumeMounts: [{ name: 'cfg', mountPath: '/cfg' }] }],
        volumes: [{ name: 'cfg', configMap: { name: 'live' } }],
      },
    });
    const { hostPaths } = await waitRunning(env, 'cmk');
    const dir = hostPaths['cfg']!;
    expect(readFileSync(path.join(dir, 'k'), 'utf8')).toBe('v1');

    // The update races the kill; then what a kill between writing the new directory and the
    // ..data rename leaves behind is laid down too, so the restart always has an interrupted write to finish.
    await env.client.resource('ConfigMap').patch('live', 'merge', { data: { k: 'v2' } }, { namespace: 'default' });
    await kill(child);
    mkdirSync(path.join(dir, '..2026_01_01_00_00_00.half'));
    writeFileSync(path.join(dir, '..2026_01_01_00_00_00.half', 'k'), 'half');
    symlinkSync('..2026_01_01_00_00_00.half', path.join(dir, '..data_tmp'));

    child = await startChild();
    const stamped = (): string[] => readdirSync(dir).filter((n) => n.startsWith('..') && n !== '..data');
    await until(
      'new content, leftovers gone',
      () => readFileSync(path.join(dir, 'k'), 'utf8') === 'v2' && stamped().length === 1,
    );
    expect(readlinkSync(path.join(dir, '..data'))).toBe(stamped()[0]);
    await env.client.resource('ConfigMap').patch('live', 'merge', { data: { k: 'v3' } }, { namespace: 'default' });
    await until('later updates still applied', () => readFileSync(path.join(dir, 'k'), 'utf8') === 'v3');

    await env.client.resource('Pod').delete('cmk', { namespace: 'default' });
    await until(
      'pod dir removed',
      async () =>
        !existsSync(path.join(env.rootDir, 'pods', created.metadata!.uid!)) &&
        (await mountsUnder(env.rootDir)).length === 0,
    );
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }, 60_000);
});
