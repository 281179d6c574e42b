import type { PersistentVolume } from 'kubernetes-types/core/v1.js';
import type { CSINode, VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../../cli/testing.test-kit.js';
import { loadKubeconfig } from '../../client/kubeconfig.js';
import { RestClient } from '../../client/rest.js';
import { newLogger } from '../../util/log.js';
import type { CsiClient } from '../client.js';
import { newAttacher } from './attacher.js';
import type { SidecarContext } from './context.js';
import { attacherFinalizer } from './names.js';

const DRIVER = 'hostpath.csi.stowage.io';
const FIN = attacherFinalizer(DRIVER);
const pv: PersistentVolume = {
  metadata: { name: 'pv1' },
  spec: { accessModes: ['ReadWriteOnce'], csi: { driver: DRIVER, volumeHandle: 'vol-1' } },
};
const csiNode: CSINode = { metadata: { name: 'n1' }, spec: { drivers: [{ name: DRIVER, nodeID: 'n1' }] } };

/** An attacher whose informers answer from `cached` and whose driver fails every ControllerPublish. */
function failingAttacher(client: RestClient, cached: VolumeAttachment): ReturnType<typeof newAttacher> {
  const lister = <T>(items: Record<string, T>) => ({
    lister: { get: (n: string) => items[n], list: () => Object.values(items) },
  });
  const csi = { controllerPublishVolume: () => Promise.reject(new Error('DEADLINE_EXCEEDED: Deadline exceeded')) };
  // Only what attach reads is faked: the lister of each informer and the one CSI call.
  const ctx = {
    client,
    csi: csi as unknown as CsiClient,
    driver: DRIVER,
    controllerCaps: new Set(['PUBLISH_UNPUBLISH_VOLUME']),
    nodeOnlyExpansion: false,
    topologyAware: false,
    informers: {
      attachments: lister({ va1: cached }),
      volumes: lister({ pv1: pv }),
      csiNodes: lister({ n1: csiNode }),
    },
    log: newLogger('attacher-test'),
    csiTimeoutMs: 5_000,
  } as unknown as SidecarContext;
  return newAttacher(ctx);
}

describe('attacher: a failed ControllerPublish', () => {
  let srv: TestApiServer;
  let client: RestClient;
  beforeAll(async () => {
    srv = await startTestApiServer({ controllers: false });
    client = new RestClient(await loadKubeconfig(srv.kubeconfigPath));
  });
  afterAll(async () => {
    client?.close();
    await srv?.close();
  });

  const create = async (name: string): Promise<VolumeAttachment> =>
    client.resource('VolumeAttachment').create({
      metadata: { name, finalizers: [FIN] },
      spec: { attacher: DRIVER, nodeName: 'n1', source: { persistentVolumeName: 'pv1' } },
    });

  it('of an attachment already attached (a repeat on a stale cache) records attachError and leaves it attached', async () => {
    const stale = await create('va1');
    await client.resource('VolumeAttachment').patchStatus('va1', 'merge', { status: { attached: true } });
    // The cache has not seen attached=true yet: the attacher publishes again, and that call fails.
    await expect(failingAttacher(client, stale).reconcile('va:va1', new AbortController().signal)).rejects.toThrow(
      /DEADLINE_EXCEEDED/,
    );
    const after = await client.resource('VolumeAttachment').get('va1');
    expect(after.status?.attached).toBe(true);
    expect(after.status?.attachError?.message).toMatch(/DEADLINE_EXCEEDED/);
  });
});
