import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountsUnder } from '../src/mount/mountinfo.js';
import { attachmentName } from '../src/node/volumemanager/operations/paths.js';
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

const notRoot = process.getuid?.() !== 0;

describe.skipIf(notRoot)('volume manager: attachRequired drivers wait for their VolumeAttachment', () => {
  let env: Env;
  let vm: VolumeManager;
  const abort = new AbortController();
  beforeAll(async () => {
    env = await startEnv({ attachRequired: true });
    vm = await startVolumeManager({
      client: env.client,
      nodeName: NODE,
      rootDir: env.rootDir,
      drivers: { endpoint: () => env.socket },
      signal: abort.signal,
      backoffCapMs: 1000,
    });
  });
  afterAll(async () => {
    await vm?.stop();
    await env?.close();
  });

  it('reports volumesInUse, waits (FailedAttachVolume) until status.attached, then mounts', async () => {
    const { handle, pv } = await staticClaim(env, 'a1');
    await createPod(env, claimPod('a1', [{ volume: 'data', claim: 'a1' }]));
    const unique = `kubernetes.io/csi/${DRIVER}^${handle}`;
    await until('volumesInUse reported', async () =>
      (await env.client.resource('Node').get(NODE)).status?.volumesInUse?.includes(unique),
    );
    const ev = await until('FailedAttachVolume', async () =>
      (await events(env, 'a1')).find((e) => e.reason === 'FailedAttachVolume'),
    );
    expect(ev.message).toContain(attachmentName(handle, DRIVER, NODE));
    expect((await mountsUnder(env.rootDir)).length).toBe(0);

    const name = attachmentName(handle, DRIVER, NODE);
    await env.client
      .resource('VolumeAttachment')
      .create({ metadata: { name }, spec: { attacher: DRIVER, nodeName: NODE, source: { persistentVolumeName: pv } } });
    await env.client.resource('VolumeAttachment').patchStatus(name, 'merge', { status: { attached: true } });
    await waitRunning(env, 'a1');
    await deletePodAndWait(env, 'a1');
    await until('unmounted', async () => (await mountsUnder(env.rootDir)).length === 0);
    await until(
      'volumesInUse cleared',
      async () => !(await env.client.resource('Node').get(NODE)).status?.volumesInUse?.length,
    );
  });
});
