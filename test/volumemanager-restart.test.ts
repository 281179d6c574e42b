/**
 * Issue #24 item 3: a volume manager restarted while its pods run never tears anything of theirs
 * down, however slowly its sources answer. The API server is reached through a proxy that delays
 * the pod list and the claim/volume GETs (a node's credential reads them one by one) by seeded
 * random amounts, and the CSI driver registers only some time after the start. Every restart must
 * adopt the pod's mounts: no unmount or unstage operation is issued (counted in the kubelet's
 * storage_operation_duration_seconds, whatever its outcome) and no NodeUnpublish/NodeUnstage reaches
 * the driver. STOWAGE_RESTART_SEED replays a run; STOWAGE_RESTART_ROUNDS sets its length (50).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RestClient } from '../src/client/rest.js';
import { readMountInfo } from '../src/mount/mountinfo.js';
import { startVolumeManager, type VolumeManager } from '../src/node/volumemanager/volume-manager.js';
import { MetricsRegistry } from '../src/util/metrics.js';
import { seededRandom } from '../src/util/seeded-random.js';
import { startRecordingProxy, type RecordingProxy } from './helpers/recording-proxy.js';
import {
  claimPod,
  createPod,
  deletePodAndWait,
  DRIVER,
  NODE,
  staticClaim,
  startEnv,
  until,
  waitRunning,
  type Env,
} from './volumemanager-kit.js';
import { startProxy, type Proxy } from './volumemanager-proxy.js';

const notRoot = process.getuid?.() !== 0;
const SEED = Number(process.env['STOWAGE_RESTART_SEED'] ?? Date.now() % 100_000);
const ROUNDS = Number(process.env['STOWAGE_RESTART_ROUNDS'] ?? 50);
const TEARDOWN_OPS = ['volume_unmount', 'unmount_device', 'unmap_volume'];

describe.skipIf(notRoot)('volume manager restarted under slow sources (root: real mounts)', () => {
  let env: Env;
  let csiProxy: Proxy;
  let slow: RecordingProxy;
  let vm: VolumeManager | undefined;
  const random = seededRandom(SEED);
  let delays = { podList: 0, objects: 0 };

  beforeAll(async () => {
    env = await startEnv();
    csiProxy = await startProxy({ socket: path.join(env.dir, 'proxy.sock'), upstream: env.socket });
    slow = await startRecordingProxy(env.api, {
      delayMs: (method, p) => {
        if (method !== 'GET') return 0;
        if (p.startsWith('/api/v1/pods?') && !p.includes('watch=true')) return delays.podList;
        if (/\/persistentvolumeclaims\/|\/persistentvolumes\//.test(p)) return delays.objects;
        return 0;
      },
    });
  });
  afterAll(async () => {
    await vm?.stop();
    await slow?.close();
    await csiProxy?.stop();
    await env?.close();
  });

  const teardowns = (m: MetricsRegistry): string[] =>
    m
      .render()
      .split('\n')
      .filter((l) => l.startsWith('storage_operation_duration_seconds_count'))
      .filter((l) => TEARDOWN_OPS.some((op) => l.includes(`operation_name="${op}"`)));

  it(`${ROUNDS} restarts in a row adopt a running pod's volume (seed ${SEED})`, async () => {
    vm = await startVolumeManager({
      client: env.client,
      nodeName: NODE,
      rootDir: env.rootDir,
      drivers: { endpoint: (d) => (d === DRIVER ? csiProxy.driver.endpoint : undefined) },
      signal: new AbortController().signal,
    });
    await staticClaim(env, 'live');
    await createPod(env, claimPod('live', [{ volume: 'data', claim: 'live' }]));
    const { hostPaths } = await waitRunning(env, 'live');
    const target = hostPaths['data'] ?? '';
    writeFileSync(path.join(target, 'f'), 'kept');
    const client = new RestClient({ server: slow.url, token: env.api.token });

    for (let round = 0; round < ROUNDS; round++) {
      await vm.stop();
      delays = { podList: Math.floor(random() * 1500), objects: Math.floor(random() * 800) };
      const driverAfterMs = Math.floor(random() * 1000);
      const startedAt = Date.now();
      const calls = csiProxy.calls.length;
      const metrics = new MetricsRegistry();
      vm = await startVolumeManager({
        client,
        nodeName: NODE,
        rootDir: env.rootDir,
        // The driver re-registers some time after the agent starts, as on a real restart.
        drivers: {
          endpoint: (d) =>
            d === DRIVER && Date.now() - startedAt >= driverAfterMs ? csiProxy.driver.endpoint : undefined,
        },
        signal: new AbortController().signal,
        nodeScopedReads: true,
        metrics,
      });
      const where = `(seed ${SEED}, round ${round}, delays ${JSON.stringify(delays)}, driver +${driverAfterMs} ms)`;
      await until(`populated ${where}`, () => vm!.populatedOnce());
      await until(
        `mount adopted and verified ${where}`,
        async () => {
          await vm!.idle();
          const m = vm!.asw.mountedPods();
          return m.length === 1 && m[0]?.state === 'Mounted';
        },
        30_000,
      );
      expect(teardowns(metrics), `teardown issued for a live pod ${where}`).toEqual([]);
      const driverCalls = csiProxy.calls.slice(calls);
      expect(
        driverCalls.filter((c) => /NodeUnpublish|NodeUnstage/.test(c)),
        where,
      ).toEqual([]);
      expect((await readMountInfo()).filter((m) => m.mountPoint === target)).toHaveLength(1);
      expect(readFileSync(path.join(target, 'f'), 'utf8')).toBe('kept');
    }

    delays = { podList: 0, objects: 0 };
    await deletePodAndWait(env, 'live');
    await until('torn down', async () => vm!.asw.attachedVolumes().length === 0);
  }, 900_000);
});
