/**
 * Mount propagation on the embedded containerd, as CSI node plugins rely on it: the node agent's
 * root dir is a shared mount, a privileged container's Bidirectional mount of a directory under it
 * sees its own mounts reach the host, and another container with HostToContainer sees them too.
 * Also what node plugins ask besides: a privileged container sees the host's devices, a hostPID
 * one the host's processes.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readMountInfo } from '../src/mount/mountinfo.js';
import { built } from './helpers/env.js';
import { api, type Target } from './helpers/http.js';
import { runtimeTestsMissing } from './helpers/runtime.js';
import { startRuntimeCluster, type RuntimeCluster } from './helpers/runtime-up.js';

const missing = [...runtimeTestsMissing(), ...(built ? [] : ['a build (npm test builds)'])];
if (missing.length > 0) console.warn(`mount propagation tests skipped: missing ${missing.join(', ')}`);

const NODE = 'propnode';
const NS = '/api/v1/namespaces/default';

describe.skipIf(missing.length > 0)('mount propagation through containerd', () => {
  let c: RuntimeCluster | undefined;
  let t: Target;
  let shared = '';
  let root = '';

  beforeAll(async () => {
    // The kubelet's layout under a root dir of the test's choosing (`/var/lib/kubelet` on a real host).
    c = await startRuntimeCluster('stowage-propagation-', NODE, {
      hostpath: false,
      flags: (dir) => ['--root-dir', join(dir, 'kubelet')],
    });
    t = c.t;
    root = join(c.dir, 'kubelet');
    shared = join(root, 'plugins', 'propagation');
  }, 180_000);

  afterAll(async () => {
    // A Bidirectional mount outlives its container unless the container undoes it: make sure.
    for (const m of (await readMountInfo()).filter((e) => e.mountPoint.startsWith(shared)).reverse())
      execFileSync('umount', [m.mountPoint]);
    await c?.stop();
  }, 240_000);

  const pod = async (
    name: string,
    script: string,
    mount: Record<string, unknown>,
    privileged: boolean,
    spec: Record<string, unknown> = {},
  ) => {
    const body = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: {
        nodeName: NODE,
        restartPolicy: 'Never',
        terminationGracePeriodSeconds: 5,
        containers: [
          {
            name: 'c',
            image: c!.image,
            command: ['sh', '-c', script],
            securityContext: { privileged },
            volumeMounts: [{ name: 'shared', ...mount }],
          },
        ],
        volumes: [{ name: 'shared', hostPath: { path: shared, type: 'DirectoryOrCreate' } }],
        ...spec,
      },
    };
    return api(t, 'POST', `${NS}/pods`, body);
  };
  const phase = async (name: string): Promise<string | undefined> =>
    (await api(t, 'GET', `${NS}/pods/${name}`)).body?.status?.phase;

  it('refuses Bidirectional for an unprivileged container with kube’s message', async () => {
    const r = await pod('unprivileged', 'true', { mountPath: '/shared', mountPropagation: 'Bidirectional' }, false);
    expect(r.status).toBe(422);
    expect(r.text).toContain('Bidirectional mount propagation is available only to privileged containers');
  });

  it('a privileged Bidirectional mount reaches the host and a HostToContainer container', async () => {
    // The watcher starts first: only propagation can show it a mount made after it started.
    const watcher = await pod(
      'watcher',
      'until [ -f /view/sub/hello ]; do sleep 0.2; done; cat /view/sub/hello',
      { mountPath: '/view', mountPropagation: 'HostToContainer' },
      false,
    );
    expect(watcher.status, watcher.text).toBe(201);
    await expect.poll(() => phase('watcher'), { timeout: 90_000 }).toBe('Running');
    const maker = await pod(
      'maker',
      "mkdir -p /shared/sub && mount -t tmpfs tmpfs /shared/sub && echo hello > /shared/sub/hello && trap 'umount /shared/sub; exit 0' TERM; while true; do sleep 1; done",
      { mountPath: '/shared', mountPropagation: 'Bidirectional' },
      true,
    );
    expect(maker.status, maker.text).toBe(201);
    await expect
      .poll(async () => (await readMountInfo()).some((e) => e.mountPoint === join(shared, 'sub')), { timeout: 90_000 })
      .toBe(true);
    await expect.poll(() => phase('watcher'), { timeout: 60_000 }).toBe('Succeeded');
    // The container undoes its mount on SIGTERM: the host sees that too.
    expect((await api(t, 'DELETE', `${NS}/pods/maker`)).status).toBe(200);
    await expect
      .poll(async () => (await readMountInfo()).some((e) => e.mountPoint === join(shared, 'sub')), { timeout: 60_000 })
      .toBe(false);
  }, 240_000);

  it('a privileged container sees the host’s block devices; an unprivileged one does not; hostPID sees the host’s processes', async () => {
    const dev = readdirSync('/dev').find((d) => /^(loop\d+|vd[a-z]|sd[a-z]|nvme\d+n\d+)$/.test(d));
    expect(dev, 'a block device on this host').toBeDefined();
    const mount = { mountPath: '/shared' };
    expect((await pod('devices', `test -b /dev/${dev}`, mount, true)).status).toBe(201);
    expect((await pod('nodevices', `test ! -e /dev/${dev}`, mount, false)).status).toBe(201);
    const stowage = c!.up.child.pid;
    expect((await pod('hostpid', `test -d /proc/${stowage}`, mount, false, { hostPID: true })).status).toBe(201);
    expect((await pod('ownpid', `test ! -d /proc/${stowage}`, mount, false)).status).toBe(201);
    for (const name of ['devices', 'nodevices', 'hostpid', 'ownpid'])
      await expect.poll(() => phase(name), { timeout: 90_000 }).toBe('Succeeded');
  }, 240_000);

  it('a DaemonSet of node plugins as upstream drivers deploy them: privileged, the kubelet dirs, Bidirectional', async () => {
    const ds = {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'node-plugin' },
      spec: {
        selector: { matchLabels: { app: 'node-plugin' } },
        template: {
          metadata: { labels: { app: 'node-plugin' } },
          spec: {
            terminationGracePeriodSeconds: 1,
            containers: [
              {
                name: 'plugin',
                image: c!.image,
                command: ['sh', '-c', 'test -d /registration/ && test -d /pods && while true; do sleep 1; done'],
                securityContext: { privileged: true },
                volumeMounts: [
                  { name: 'registration', mountPath: '/registration' },
                  { name: 'pods', mountPath: '/pods', mountPropagation: 'Bidirectional' },
                  { name: 'plugins', mountPath: '/plugins', mountPropagation: 'Bidirectional' },
                ],
              },
            ],
            volumes: [
              { name: 'registration', hostPath: { path: join(root, 'plugins_registry'), type: 'Directory' } },
              { name: 'pods', hostPath: { path: join(root, 'pods'), type: 'Directory' } },
              { name: 'plugins', hostPath: { path: join(root, 'plugins'), type: 'Directory' } },
            ],
          },
        },
      },
    };
    const created = await api(t, 'POST', '/apis/apps/v1/namespaces/default/daemonsets', ds);
    expect(created.status, created.text).toBe(201);
    const status = async () =>
      (await api(t, 'GET', '/apis/apps/v1/namespaces/default/daemonsets/node-plugin')).body?.status ?? {};
    await expect.poll(async () => (await status()).numberAvailable, { timeout: 90_000 }).toBe(1);
    expect(await status()).toMatchObject({ desiredNumberScheduled: 1, numberReady: 1, updatedNumberScheduled: 1 });
    expect((await api(t, 'DELETE', '/apis/apps/v1/namespaces/default/daemonsets/node-plugin')).status).toBe(200);
    await expect
      .poll(async () => (await api(t, 'GET', `${NS}/pods?labelSelector=app%3Dnode-plugin`)).body?.items?.length, {
        timeout: 90_000,
      })
      .toBe(0);
  }, 240_000);
});
