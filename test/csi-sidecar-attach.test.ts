import type { VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CsiClient } from '../src/csi/client.js';
import { ANN_VA_NODE_ID, attacherFinalizer } from '../src/csi/sidecar/names.js';
import {
  claim,
  DRIVER,
  eventsFor,
  eventually,
  NODE,
  quietLogger,
  startEnv,
  storageClass,
  type Env,
} from './csi-sidecar-kit.js';

const FIN = attacherFinalizer(DRIVER);

async function provision(env: Env, name: string): Promise<string> {
  const c = await env.client.resource('PersistentVolumeClaim').create(claim(name, 'sc', '1Mi'));
  const pvName = `pvc-${c.metadata!.uid!}`;
  await eventually(() => env.client.resource('PersistentVolume').get(pvName));
  return pvName;
}

function va(name: string, pvName: string, node = NODE): VolumeAttachment {
  return { metadata: { name }, spec: { attacher: DRIVER, nodeName: node, source: { persistentVolumeName: pvName } } };
}

/** Creates a VolumeAttachment and waits until the attacher reports it attached. */
async function createAttached(env: Env, name: string, pvName: string): Promise<VolumeAttachment> {
  const vas = env.client.resource('VolumeAttachment');
  await vas.create(va(name, pvName));
  return eventually(async () => {
    const got = await vas.get(name);
    expect(got.status?.attached).toBe(true);
    return got;
  });
}

async function publishedNodes(env: Env, volumeId: string): Promise<string[]> {
  const c = new CsiClient({ endpoint: env.socket, log: quietLogger() });
  try {
    const r = await c.listVolumes();
    return r.entries.find((e) => e.volume?.volumeId === volumeId)?.status?.publishedNodeIds ?? [];
  } finally {
    c.close();
  }
}

describe('attacher with a driver that publishes (enable-attach)', () => {
  let env: Env;
  let sidecar: ReturnType<Env['startSidecar']>;
  beforeAll(async () => {
    env = await startEnv({ enableAttach: true });
    sidecar = env.startSidecar();
    await env.client.resource('StorageClass').create(storageClass('sc'));
  });
  afterAll(async () => env?.close());

  it('attaches a VolumeAttachment, then detaches it on deletion', async () => {
    const pvName = await provision(env, 'a1');
    const vas = env.client.resource('VolumeAttachment');
    const attached = await createAttached(env, 'va1', pvName);
    expect(attached.metadata?.finalizers).toContain(FIN);
    expect(attached.status?.attachmentMetadata ?? {}).toEqual({});
    expect(attached.status?.attachError).toBeUndefined();
    const pv = await env.client.resource('PersistentVolume').get(pvName);
    expect(pv.metadata?.finalizers).toContain(FIN);
    // Each sidecar writes under its own field manager, as the separate external-* binaries do.
    const managers = (o: {
      metadata?: { managedFields?: Array<{ manager?: string; operation?: string; subresource?: string }> };
    }) =>
      (o.metadata?.managedFields ?? [])
        .map((e) => `${e.manager}/${e.operation}${e.subresource ? `/${e.subresource}` : ''}`)
        .sort();
    expect(managers(await vas.get('va1'))).toEqual([
      'csi-attacher/Update',
      'csi-attacher/Update/status',
      'stowage/Update',
    ]);
    expect(managers(pv)).toEqual([
      'csi-attacher/Update',
      'csi-provisioner/Update',
      'kube-controller-manager/Update/status',
    ]);
    const volumeId = pv.spec!.csi!.volumeHandle;
    expect(await publishedNodes(env, volumeId)).toEqual([NODE]);
    const req = sidecar.csi.publishes.find((r) => r.volumeId === volumeId)!;
    expect(req.nodeId).toBe(NODE);
    expect(req.volumeCapability?.accessMode?.mode).toBe('SINGLE_NODE_MULTI_WRITER');
    expect(req.readonly).toBe(false);

    await vas.delete('va1');
    await eventually(async () => {
      await expect(vas.get('va1')).rejects.toThrow(/not found/);
    });
    expect(await publishedNodes(env, volumeId)).toEqual([]);

    // Claim deleted → the deleter removes the volume and the attacher lets the PV go.
    await env.client.resource('PersistentVolumeClaim').delete('a1', { namespace: 'default' });
    await eventually(async () => {
      await expect(env.client.resource('PersistentVolume').get(pvName)).rejects.toThrow(/not found/);
    });
  });

  it('records the node ID before publishing, and unpublishes with it when the CSINode no longer lists the driver (driver or node agent restarting)', async () => {
    const pvName = await provision(env, 'a3');
    const vas = env.client.resource('VolumeAttachment');
    const attached = await createAttached(env, 'va3', pvName);
    expect(attached.metadata?.annotations?.[ANN_VA_NODE_ID]).toBe(NODE);
    const volumeId = (await env.client.resource('PersistentVolume').get(pvName)).spec!.csi!.volumeHandle;
    expect(await publishedNodes(env, volumeId)).toEqual([NODE]);
    const csiNodes = env.client.resource('CSINode');
    const before = await csiNodes.get(NODE);
    await csiNodes.update({ ...before, spec: { drivers: [] } });
    try {
      await vas.delete('va3');
      await eventually(async () => {
        await expect(vas.get('va3')).rejects.toThrow(/not found/);
      });
      expect(await publishedNodes(env, volumeId)).toEqual([]);
    } finally {
      const now = await csiNodes.get(NODE);
      await csiNodes.update({ ...now, spec: before.spec });
    }
  });

  it('records attachError when the node has no driver, and lets the attachment go on deletion', async () => {
    const pvName = await provision(env, 'a2');
    // A node without the driver. It exists (the attach/detach controller releases attachments of
    // deleted nodes) and is not controller-managed, so only the attacher acts on this attachment.
    await env.client.resource('Node').create({ metadata: { name: 'n9' } });
    const vas = env.client.resource('VolumeAttachment');
    await vas.create(va('va2', pvName, 'n9'));
    const got = await eventually(async () => {
      const v = await vas.get('va2');
      expect(v.status?.attachError?.message).toMatch(/CSINode n9 does not contain driver/);
      return v;
    });
    expect(got.status?.attached).toBe(false);
    await vas.delete('va2');
    await eventually(async () => {
      await expect(vas.get('va2')).rejects.toThrow(/not found/);
    });
  });
});

describe('deleter and attachments', () => {
  let env: Env;
  beforeAll(async () => {
    env = await startEnv({ enableAttach: true });
    env.startSidecar();
    await env.client.resource('StorageClass').create(storageClass('sc'));
  });
  afterAll(async () => env?.close());

  it('does not delete a volume still attached: VolumeFailedDelete, then deletes it once detached', async () => {
    const pvName = await provision(env, 'd1');
    const vas = env.client.resource('VolumeAttachment');
    await vas.create(va('dva', pvName));
    await eventually(async () => expect((await vas.get('dva')).status?.attached).toBe(true));
    await env.client.resource('PersistentVolumeClaim').delete('d1', { namespace: 'default' });
    await eventually(async () => {
      const evs = await eventsFor(env.client, 'default', pvName); // events of cluster-scoped objects live in default
      expect(evs.find((e) => e.reason === 'VolumeFailedDelete')?.message).toBe(
        `persistentvolume ${pvName} is still attached to node ${NODE}`,
      );
    });
    expect((await env.client.resource('PersistentVolume').get(pvName)).status?.phase).toBe('Released');
    await vas.delete('dva');
    await eventually(async () => {
      await expect(env.client.resource('PersistentVolume').get(pvName)).rejects.toThrow(/not found/);
    });
  });
});

describe('attacher with a driver without PUBLISH_UNPUBLISH_VOLUME', () => {
  let env: Env;
  let sidecar: ReturnType<Env['startSidecar']>;
  beforeAll(async () => {
    env = await startEnv({ enableAttach: false });
    sidecar = env.startSidecar();
    await env.client.resource('StorageClass').create(storageClass('sc'));
  });
  afterAll(async () => env?.close());

  it('marks the attachment attached without a call and detaches by dropping the finalizer', async () => {
    const pvName = await provision(env, 't1');
    const vas = env.client.resource('VolumeAttachment');
    await vas.create(va('tva', pvName));
    await eventually(async () => expect((await vas.get('tva')).status?.attached).toBe(true));
    expect(sidecar.csi.publishes).toEqual([]);
    await vas.delete('tva');
    await eventually(async () => {
      await expect(vas.get('tva')).rejects.toThrow(/not found/);
    });
  });
});
