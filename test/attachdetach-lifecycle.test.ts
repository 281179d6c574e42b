import type { Event, PersistentVolume, Pod } from 'kubernetes-types/core/v1.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../src/cli/testing.test-kit.js';
import type { RestClient } from '../src/client/index.js';
import { runAttachDetachController } from '../src/controllers/attachdetach/run.js';
import {
  ANN_CONTROLLER_MANAGED_ATTACH_DETACH,
  attachmentName,
  uniqueVolumeName,
} from '../src/controllers/attachdetach/types.js';
import { readyNode, until } from './scheduler-kit.js';

let srv: TestApiServer;
let client: RestClient;
const stop = new AbortController();
let controller: Promise<void>;
const DRIVER = 'attach.csi.example.com';
const NOATTACH = 'noattach.csi.example.com';
const NS = 'ad';

const vaName = (pv: string, node: string, driver = DRIVER): string => attachmentName(`h-${pv}`, driver, node);
const vaExists = async (name: string): Promise<boolean> =>
  client
    .resource('VolumeAttachment')
    .get(name)
    .then(
      () => true,
      () => false,
    );

async function boundClaim(name: string, o: { driver?: string; modes?: string[] } = {}): Promise<void> {
  const pv: PersistentVolume = {
    metadata: { name: `pv-${name}` },
    spec: {
      storageClassName: 'manual',
      capacity: { storage: '1Gi' },
      accessModes: o.modes ?? ['ReadWriteOnce'],
      csi: { driver: o.driver ?? DRIVER, volumeHandle: `h-pv-${name}` },
      claimRef: { namespace: NS, name },
    },
  };
  await client.resource('PersistentVolume').create(pv);
  await client.resource('PersistentVolumeClaim').create({
    metadata: { name, namespace: NS },
    spec: {
      storageClassName: 'manual',
      accessModes: o.modes ?? ['ReadWriteOnce'],
      resources: { requests: { storage: '1Gi' } },
      volumeName: `pv-${name}`,
    },
  });
  await until(
    `claim ${name} bound`,
    async () => (await client.resource('PersistentVolumeClaim').get(name, { namespace: NS })).status?.phase === 'Bound',
  );
}

async function podOn(name: string, node: string, claims: string[]): Promise<Pod> {
  return client.resource('Pod').create({
    metadata: { name, namespace: NS },
    spec: {
      nodeName: node,
      containers: [{ name: 'c', image: 'busybox' }],
      volumes: claims.map((c) => ({ name: c, persistentVolumeClaim: { claimName: c } })),
    },
  });
}

async function managedNode(name: string): Promise<void> {
  await readyNode(client, name, {}, { [ANN_CONTROLLER_MANAGED_ATTACH_DETACH]: 'true' });
}

async function markAttached(name: string): Promise<void> {
  await client.resource('VolumeAttachment').patchStatus(name, 'merge', { status: { attached: true } });
}

const attachedOn = async (node: string): Promise<string[]> =>
  ((await client.resource('Node').get(node)).status?.volumesAttached ?? []).map((v) => v.name);

beforeAll(async () => {
  srv = await startTestApiServer({ scheduler: false, attachDetach: false });
  client = srv.plane.client;
  await client.resource('Namespace').create({ metadata: { name: NS } });
  for (const n of ['n1', 'n2', 'n3', 'n4']) await managedNode(n);
  await client.resource('CSIDriver').create({ metadata: { name: NOATTACH }, spec: { attachRequired: false } });
  controller = runAttachDetachController({ client, signal: stop.signal, nodeGoneGraceMs: 0 });
});

afterAll(async () => {
  stop.abort();
  await controller;
  await srv?.close();
});

describe('attach/detach controller', () => {
  it('attaches for a scheduled pod, reports volumesAttached, and detaches only after the node stops using the volume', async () => {
    await boundClaim('data');
    await podOn('p', 'n1', ['data']);
    const name = vaName('pv-data', 'n1');
    const va = await until('VolumeAttachment', () =>
      client
        .resource('VolumeAttachment')
        .get(name)
        .catch(() => undefined),
    );
    expect(va.spec).toEqual({ attacher: DRIVER, nodeName: 'n1', source: { persistentVolumeName: 'pv-data' } });
    const unique = uniqueVolumeName(DRIVER, 'h-pv-data');
    await markAttached(name);
    await until('volumesAttached', async () => (await attachedOn('n1')).includes(unique));
    const ok = await until('SuccessfulAttachVolume', async () =>
      (await client.resource('Event').list({ namespace: NS })).items.find(
        (e: Event) => e.involvedObject.name === 'p' && e.reason === 'SuccessfulAttachVolume',
      ),
    );
    expect(ok).toMatchObject({ type: 'Normal', message: 'AttachVolume.Attach succeeded for volume "pv-data"' });

    // The kubelet still has it mounted: deleting the pod must not detach yet.
    await client.resource('Node').patchStatus('n1', 'merge', { status: { volumesInUse: [unique] } });
    await client.resource('Pod').delete('p', { namespace: NS, gracePeriodSeconds: 0 });
    // Sync point: a later change the controller must act on, so the earlier one has been seen.
    await boundClaim('marker');
    await podOn('marker', 'n1', ['marker']);
    await until('marker attachment', () => vaExists(vaName('pv-marker', 'n1')));
    expect(await vaExists(name)).toBe(true);

    await client.resource('Node').patchStatus('n1', 'merge', { status: { volumesInUse: [] } });
    await until('detached', async () => !(await vaExists(name)));
    expect(await attachedOn('n1')).not.toContain(unique);
  });

  it('does not attach for drivers whose CSIDriver says attachRequired: false', async () => {
    await boundClaim('local', { driver: NOATTACH });
    await podOn('local', 'n2', ['local']);
    await boundClaim('marker2');
    await podOn('marker2', 'n2', ['marker2']);
    await until('marker attachment', () => vaExists(vaName('pv-marker2', 'n2')));
    expect(await vaExists(vaName('pv-local', 'n2', NOATTACH))).toBe(false);
  });

  it('refuses a second node for a ReadWriteOnce volume with a Multi-Attach event', async () => {
    await boundClaim('rwo');
    await podOn('first', 'n1', ['rwo']);
    await until('first attachment', () => vaExists(vaName('pv-rwo', 'n1')));
    await podOn('second', 'n2', ['rwo']);
    const ev = await until('FailedAttachVolume', async () =>
      (await client.resource('Event').list({ namespace: NS })).items.find(
        (e: Event) => e.involvedObject.name === 'second' && e.reason === 'FailedAttachVolume',
      ),
    );
    expect(ev).toMatchObject({
      type: 'Warning',
      message: 'Multi-Attach error for volume "pv-rwo" Volume is already used by pod(s) first',
    });
    expect(await vaExists(vaName('pv-rwo', 'n2'))).toBe(false);
  });

  it('releases the attachments of a deleted node', async () => {
    await boundClaim('n3vol');
    await podOn('on-n3', 'n3', ['n3vol']);
    const name = vaName('pv-n3vol', 'n3');
    await until('attachment', () => vaExists(name));
    await client
      .resource('Node')
      .patchStatus('n3', 'merge', { status: { volumesInUse: [uniqueVolumeName(DRIVER, 'h-pv-n3vol')] } });
    await client.resource('Node').delete('n3');
    await until('detached from the deleted node', async () => !(await vaExists(name)));
  });

  it('releases the attachments of an out-of-service node whose lease expired, without waiting for unmount', async () => {
    await boundClaim('n4vol');
    await podOn('on-n4', 'n4', ['n4vol']);
    const name = vaName('pv-n4vol', 'n4');
    await until('attachment', () => vaExists(name));
    await client
      .resource('Node')
      .patchStatus('n4', 'merge', { status: { volumesInUse: [uniqueVolumeName(DRIVER, 'h-pv-n4vol')] } });
    await client.resource('Lease').create({
      metadata: { name: 'n4', namespace: 'kube-node-lease' },
      spec: { holderIdentity: 'n4', leaseDurationSeconds: 40, renewTime: '2020-01-01T00:00:00.000000Z' },
    });
    await boundClaim('marker4');
    await podOn('marker4', 'n4', ['marker4']);
    await until('marker attachment', () => vaExists(vaName('pv-marker4', 'n4')));
    expect(await vaExists(name)).toBe(true); // an expired lease alone is not proof: the node may just be partitioned
    await client.resource('Node').patch('n4', 'merge', {
      spec: { taints: [{ key: 'node.kubernetes.io/out-of-service', value: 'nodeshutdown', effect: 'NoExecute' }] },
    });
    await until('force-detached', async () => !(await vaExists(name)));
  });

  it('attaches a ReadWriteOnce volume wanted on two nodes at once to exactly one of them', async () => {
    await boundClaim('race');
    await Promise.all([podOn('race-a', 'n1', ['race']), podOn('race-b', 'n2', ['race'])]);
    await boundClaim('marker5');
    await podOn('marker5', 'n2', ['marker5']);
    await until('marker attachment', () => vaExists(vaName('pv-marker5', 'n2')));
    const both = await Promise.all([vaExists(vaName('pv-race', 'n1')), vaExists(vaName('pv-race', 'n2'))]);
    expect(both.filter(Boolean)).toHaveLength(1);
  });
});
