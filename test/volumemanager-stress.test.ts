/**
 * Issue #24 item 2: claims and pods created and deleted at random short intervals against the real
 * volume manager and the built-in hostpath driver (NodeStage delayed at random through the fault
 * proxy, so that pods go away while their volume is being staged). After every round nothing may
 * stay staged or published and the driver's DeleteVolume must succeed (a forgotten staging keeps it
 * at FAILED_PRECONDITION). Seeded: STOWAGE_STRESS_SEED replays a run, STOWAGE_STRESS_ROUNDS sets
 * its length (default 50 rounds in a row).
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountsUnder } from '../src/mount/mountinfo.js';
import { startVolumeManager, type VolumeManager } from '../src/node/volumemanager/volume-manager.js';
import { seededRandom } from '../src/util/seeded-random.js';
import { NotFoundError } from '../src/util/errors.js';
import { claimPod, createPod, DRIVER, NODE, staticClaim, startEnv, until, type Env } from './volumemanager-kit.js';
import { startProxy, type Proxy } from './volumemanager-proxy.js';

const notRoot = process.getuid?.() !== 0;
const SEED = Number(process.env['STOWAGE_STRESS_SEED'] ?? Date.now() % 100_000);
const ROUNDS = Number(process.env['STOWAGE_STRESS_ROUNDS'] ?? 50);
const PODS_PER_ROUND = 2;

describe.skipIf(notRoot)('volume manager stress: pods deleted while their volumes stage (root)', () => {
  let env: Env;
  let proxy: Proxy;
  let vm: VolumeManager;

  beforeAll(async () => {
    env = await startEnv();
    proxy = await startProxy({ socket: path.join(env.dir, 'proxy.sock'), upstream: env.socket });
    vm = await startVolumeManager({
      client: env.client,
      nodeName: NODE,
      rootDir: env.rootDir,
      drivers: { endpoint: (d) => (d === DRIVER ? proxy.driver.endpoint : undefined) },
      signal: new AbortController().signal,
      backoffCapMs: 1000,
    });
  });
  afterAll(async () => {
    await vm?.stop();
    await proxy?.stop();
    await env?.close();
  });

  const podGone = async (name: string): Promise<boolean> => {
    try {
      await env.client.resource('Pod').get(name, { namespace: 'default' });
      return false;
    } catch (e) {
      return e instanceof NotFoundError;
    }
  };

  it(`${ROUNDS} rounds in a row converge to nothing staged (seed ${SEED})`, async () => {
    const random = seededRandom(SEED);
    proxy.controls.stageDelayMs = () => Math.floor(random() * 300);
    for (let round = 0; round < ROUNDS; round++) {
      const names = Array.from({ length: PODS_PER_ROUND }, (_, i) => `s${round}-${i}`);
      const handles = await Promise.all(
        names.map(async (name) => {
          const { handle } = await staticClaim(env, name);
          await createPod(env, claimPod(name, [{ volume: 'data', claim: name }]));
          // Deleted at a random moment: before staging, during it, or once published.
          const ms = Math.floor(random() * 600);
          await new Promise((r) => setTimeout(r, ms)); // the fault under test is the timing itself
          await env.client.resource('Pod').delete(name, { namespace: 'default' });
          return handle;
        }),
      );
      for (const name of names) await until(`pod ${name} gone (seed ${SEED}, round ${round})`, () => podGone(name));
      await until(
        `nothing staged or published (seed ${SEED}, round ${round})`,
        async () => vm.asw.attachedVolumes().length === 0 && (await mountsUnder(env.rootDir)).length === 0,
      );
      // The driver refuses DeleteVolume (FAILED_PRECONDITION) while the volume is staged anywhere.
      for (const h of handles) await env.csi.deleteVolume({ volumeId: h });
    }
    expect(vm.asw.mountedPods()).toEqual([]);
  }, 600_000);
});
