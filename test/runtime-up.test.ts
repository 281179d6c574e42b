/**
 * `stowage up` and its container runtime: an embedded containerd when containerd and runc are on
 * PATH (reported on the Node), and, without one, pods that say their containers do not run.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { built, isRoot } from './helpers/env.js';
import { api, type Target } from './helpers/http.js';
import { startUp, type RunningUp } from './helpers/up.js';
import { runtimeTestsMissing, stopLeftoverContainerd, unmountUnder } from './helpers/runtime.js';

const missing = runtimeTestsMissing();
if (!built || !isRoot) console.warn('stowage up runtime tests skipped: they need root and a build (npm test builds)');
if (missing.length > 0)
  console.warn(`stowage up embedded containerd test skipped: missing ${missing.join(', ')} (.ci/run installs them)`);

const up = (dataDir: string, extra: string[] = []): Promise<RunningUp> =>
  startUp(dataDir, 'rtnode', ['--no-hostpath', ...extra], { runtime: true, stderr: 'inherit' });

const runtimeCondition = async (t: Target): Promise<unknown> =>
  ((await api(t, 'GET', '/api/v1/nodes/rtnode')).body?.status?.conditions ?? []).find(
    (c: { type: string }) => c.type === 'ContainerRuntimeUnavailable',
  );

describe.skipIf(!built || !isRoot)('stowage up and the container runtime', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) {
      await stopLeftoverContainerd(join(d, 'containerd'));
      await unmountUnder(d);
      rmSync(d, { recursive: true, force: true });
    }
  });
  const tmp = (): string => {
    const d = mkdtempSync(join(tmpdir(), 'stowage-up-rt-'));
    dirs.push(d);
    return d;
  };

  it.skipIf(missing.length > 0)(
    'starts an embedded containerd under the data dir, reports it on the Node, and stops it on SIGTERM',
    async () => {
      const dataDir = tmp();
      const a = await up(dataDir, ['--pod-infra-container-image', '127.0.0.1:1/pause:none']);
      const pidFile = join(dataDir, 'containerd', 'containerd.pid');
      try {
        await expect
          .poll(() => runtimeCondition(a.target), { timeout: 15_000 })
          .toMatchObject({ status: 'False', reason: 'ContainerRuntimeConnected' });
        const node = (await api(a.target, 'GET', '/api/v1/nodes/rtnode')).body;
        expect(node.status.nodeInfo.containerRuntimeVersion).toMatch(/^containerd:\/\/\S+/);
        expect(existsSync(join(dataDir, 'containerd', 'containerd.sock'))).toBe(true);
        expect(readFileSync(join(dataDir, 'containerd', 'config.toml'), 'utf8')).toContain(
          'restrict_oom_score_adj = true',
        );
      } finally {
        a.child.kill('SIGTERM');
      }
      const pid = Number(readFileSync(pidFile, 'utf8'));
      expect(await a.exit).toBe(0);
      expect(existsSync(pidFile)).toBe(false);
      expect(existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z')).toBe(false);
    },
    60_000,
  );

  it('without a runtime, says so: a node condition and a Warning event on each pod it marks Running', async () => {
    const a = await up(tmp(), ['--no-container-runtime']);
    try {
      await expect
        .poll(() => runtimeCondition(a.target), { timeout: 15_000 })
        .toMatchObject({ status: 'True', reason: 'NoContainerRuntime' });
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p1' },
        spec: { nodeName: 'rtnode', containers: [{ name: 'c', image: 'busybox' }] },
      };
      expect((await api(a.target, 'POST', '/api/v1/namespaces/default/pods', pod)).status).toBe(201);
      await expect
        .poll(
          async () =>
            ((await api(a.target, 'GET', '/api/v1/namespaces/default/events')).body?.items ?? []).find(
              (e: { reason: string }) => e.reason === 'ContainersNotRun',
            ),
          { timeout: 15_000 },
        )
        .toMatchObject({
          type: 'Warning',
          involvedObject: { kind: 'Pod', name: 'p1' },
          message: expect.stringContaining('containers do not run'),
        });
    } finally {
      a.child.kill('SIGTERM');
    }
    expect(await a.exit).toBe(0);
  }, 60_000);
});
