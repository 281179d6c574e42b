import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CsiClient } from '../src/csi/client.js';
import type { PersistentVolumeClaim } from 'kubernetes-types/core/v1.js';
import { informerFor } from '../src/client/index.js';
import { CLONE_FINALIZER, PROVISIONER_FINALIZER } from '../src/csi/sidecar/names.js';
import {
  claim,
  DRIVER,
  eventsFor,
  eventually,
  NODE,
  quietLogger,
  startEnv,
  storageClass,
  TOPOLOGY_KEY,
  type Env,
} from './csi-sidecar-kit.js';

let env: Env;
let sidecar: ReturnType<Env['startSidecar']>;

beforeAll(async () => {
  env = await startEnv();
  // A second node where the driver runs, so that topology has a choice to make.
  await env.client.resource('Node').create({ metadata: { name: 'n2', labels: { [TOPOLOGY_KEY]: 'n2' } } });
  await env.client.resource('CSINode').create({
    metadata: { name: 'n2' },
    spec: { drivers: [{ name: DRIVER, nodeID: 'n2', topologyKeys: [TOPOLOGY_KEY] }] },
  });
  sidecar = env.startSidecar();
});
afterAll(async () => {
  await env?.close();
});

const claims = () => env.client.resource('PersistentVolumeClaim');
const pvs = () => env.client.resource('PersistentVolume');

async function volumeIds(): Promise<string[]> {
  const c = new CsiClient({ endpoint: env.socket, log: quietLogger() });
  try {
    const r = await c.listVolumes();
    return r.entries.map((e) => e.volume?.volumeId ?? '');
  } finally {
    c.close();
  }
}

describe('provisioner and deleter with the hostpath driver', () => {
  it('provisions a claim of an Immediate class, and deletes the volume when the claim goes', async () => {
    await env.client.resource('StorageClass').create(
      storageClass('fast', {
        parameters: { 'csi.storage.k8s.io/fstype': 'ext4', foo: 'bar' },
        mountOptions: ['noatime'],
      }),
    );
    const c = await claims().create(claim('c1', 'fast', '2Mi'));
    const uid = c.metadata!.uid!;
    const bound = await eventually(async () => {
      const got = await claims().get('c1', { namespace: 'default' });
      expect(got.status?.phase).toBe('Bound');
      return got;
    });
    expect(bound.spec?.volumeName).toBe(`pvc-${uid}`);
    const pv = await pvs().get(`pvc-${uid}`);
    expect(pv.metadata?.annotations?.['pv.kubernetes.io/provisioned-by']).toBe(DRIVER);
    expect(pv.metadata?.finalizers).toContain(PROVISIONER_FINALIZER);
    expect(pv.spec?.csi?.driver).toBe(DRIVER);
    expect(pv.spec?.csi?.fsType).toBe('ext4');
    expect(pv.spec?.capacity?.storage).toBe('2Mi');
    expect(pv.spec?.claimRef?.uid).toBe(uid);
    expect(pv.spec?.persistentVolumeReclaimPolicy).toBe('Delete');
    expect(pv.spec?.storageClassName).toBe('fast');
    expect(pv.spec?.mountOptions).toEqual(['noatime']);
    expect(pv.spec?.nodeAffinity?.required?.nodeSelectorTerms).toEqual([
      { matchExpressions: [{ key: TOPOLOGY_KEY, operator: 'In', values: [NODE] }] },
    ]);
    expect(pv.spec?.csi?.volumeAttributes?.['storage.kubernetes.io/csiProvisionerIdentity']).toMatch(
      new RegExp(`^\\d+-\\d+-${DRIVER.replace(/\./g, '\\.')}$`),
    );
    const volumeId = pv.spec!.csi!.volumeHandle;
    expect(existsSync(join(env.stateDir, 'volumes', volumeId))).toBe(true);

    const req = sidecar.csi.creates.find((r) => r.name === `pvc-${uid}`)!;
    expect(req.parameters).toEqual({ foo: 'bar' });
    expect(req.capacityRange).toEqual({ requiredBytes: String(2 * 1024 * 1024) });
    expect(req.volumeCapabilities?.[0]?.mount).toEqual({ fsType: 'ext4', mountFlags: ['noatime'] });
    // Immediate: the whole cluster is acceptable.
    expect(req.accessibilityRequirements?.requisite?.map((t) => t.segments?.[TOPOLOGY_KEY]).sort()).toEqual([
      'n1',
      'n2',
    ]);

    await eventually(async () => {
      const reasons = (await eventsFor(env.client, 'default', 'c1')).map((e) => e.reason);
      expect(reasons).toEqual(expect.arrayContaining(['Provisioning', 'ProvisioningSucceeded']));
    });
    const ev = (await eventsFor(env.client, 'default', 'c1')).find((e) => e.reason === 'Provisioning');
    expect(ev?.message).toBe('External provisioner is provisioning volume for claim "default/c1"');

    await claims().delete('c1', { namespace: 'default' });
    await eventually(async () => {
      await expect(pvs().get(`pvc-${uid}`)).rejects.toThrow(/not found/);
    });
    expect(existsSync(join(env.stateDir, 'volumes', volumeId))).toBe(false);
    expect(await volumeIds()).not.toContain(volumeId);
  });

  it('provisions with the class of the beta annotation when spec.storageClassName names another (the annotation wins everywhere)', async () => {
    await env.client.resource('StorageClass').create(storageClass('beta-gold'));
    const c = claim('c-beta', 'no-such-class');
    c.metadata = { ...c.metadata, annotations: { 'volume.beta.kubernetes.io/storage-class': 'beta-gold' } };
    const uid = (await claims().create(c)).metadata!.uid!;
    await eventually(async () => {
      expect((await claims().get('c-beta', { namespace: 'default' })).status?.phase).toBe('Bound');
    });
    expect((await pvs().get(`pvc-${uid}`)).spec?.storageClassName).toBe('beta-gold');
    await claims().delete('c-beta', { namespace: 'default' });
    await eventually(async () => {
      await expect(pvs().get(`pvc-${uid}`)).rejects.toThrow(/not found/);
    });
  });

  it('clones a bound claim of the same class', async () => {
    await env.client.resource('StorageClass').create(storageClass('clone'));
    const src = await claims().create(claim('src', 'clone', '1Mi'));
    const srcPv = await eventually(async () => {
      const p = await pvs().get(`pvc-${src.metadata!.uid!}`);
      const got = await claims().get('src', { namespace: 'default' });
      expect(got.status?.phase).toBe('Bound');
      return p;
    });
    // Record every finalizer list the source claim goes through.
    const seen = new Set<string>();
    const ac = new AbortController();
    const inf = informerFor(env.client, 'PersistentVolumeClaim', { namespace: 'default' });
    const note = (c: PersistentVolumeClaim): void => {
      if (c.metadata?.name === 'src') for (const f of c.metadata.finalizers ?? []) seen.add(f);
    };
    inf.addEventHandler({ onAdd: note, onUpdate: (_, c) => note(c) });
    const running = inf.run(ac.signal);
    await inf.waitForSync();
    const dst = await claims().create(
      claim('dst', 'clone', '1Mi', { dataSource: { kind: 'PersistentVolumeClaim', name: 'src' } }),
    );
    const dstPv = await eventually(() => pvs().get(`pvc-${dst.metadata!.uid!}`));
    // Protected while the clone was being made, released once the clone is bound.
    await eventually(async () => {
      expect((await claims().get('dst', { namespace: 'default' })).status?.phase).toBe('Bound');
      expect((await claims().get('src', { namespace: 'default' })).metadata?.finalizers ?? []).not.toContain(
        CLONE_FINALIZER,
      );
    });
    ac.abort();
    await running;
    expect(seen).toContain(CLONE_FINALIZER);
    const req = sidecar.csi.creates.find((r) => r.name === `pvc-${dst.metadata!.uid!}`);
    expect(req?.volumeContentSource).toEqual({ volume: { volumeId: srcPv.spec!.csi!.volumeHandle } });
    expect(dstPv.spec?.csi?.volumeHandle).not.toBe(srcPv.spec?.csi?.volumeHandle);

    // A clone from another class is refused with an event, and nothing is created.
    await env.client.resource('StorageClass').create(storageClass('other'));
    await claims().create(claim('bad', 'other', '1Mi', { dataSource: { kind: 'PersistentVolumeClaim', name: 'src' } }));
    await eventually(async () => {
      const evs = await eventsFor(env.client, 'default', 'bad');
      expect(evs.find((e) => e.reason === 'ProvisioningFailed')?.message).toMatch(/same storage class/);
    });
  });

  it('WaitForFirstConsumer: waits for the selected node, then provisions there', async () => {
    await env.client
      .resource('StorageClass')
      .create(storageClass('wffc', { volumeBindingMode: 'WaitForFirstConsumer' }));
    const c = await claims().create(claim('w1', 'wffc', '1Mi'));
    const name = `pvc-${c.metadata!.uid!}`;
    // Nothing happens before a node is selected.
    await eventually(async () => {
      const evs = await eventsFor(env.client, 'default', 'w1');
      expect(evs.map((e) => e.reason)).toContain('WaitForFirstConsumer');
    });
    expect(sidecar.csi.creates.find((r) => r.name === name)).toBeUndefined();
    await claims().patch(
      'w1',
      'merge',
      { metadata: { annotations: { 'volume.kubernetes.io/selected-node': NODE } } },
      { namespace: 'default' },
    );
    const pv = await eventually(() => pvs().get(name));
    const req = sidecar.csi.creates.find((r) => r.name === name)!;
    expect(req.accessibilityRequirements?.preferred?.[0]?.segments).toEqual({ [TOPOLOGY_KEY]: NODE });
    expect(pv.spec?.nodeAffinity?.required?.nodeSelectorTerms?.[0]?.matchExpressions?.[0]?.values).toEqual([NODE]);
    await eventually(async () =>
      expect((await claims().get('w1', { namespace: 'default' })).status?.phase).toBe('Bound'),
    );
  });

  it('allowedTopologies excluding the selected node: ProvisioningFailed, no volume', async () => {
    await env.client.resource('StorageClass').create(
      storageClass('zoned', {
        volumeBindingMode: 'WaitForFirstConsumer',
        allowedTopologies: [{ matchLabelExpressions: [{ key: TOPOLOGY_KEY, values: ['n2'] }] }],
      }),
    );
    const c = await claims().create({
      ...claim('z1', 'zoned', '1Mi'),
      metadata: { name: 'z1', namespace: 'default', annotations: { 'volume.kubernetes.io/selected-node': NODE } },
    });
    await eventually(async () => {
      const evs = await eventsFor(env.client, 'default', 'z1');
      expect(evs.find((e) => e.reason === 'ProvisioningFailed')?.message).toMatch(/not in allowed topologies/);
    });
    expect(sidecar.csi.creates.find((r) => r.name === `pvc-${c.metadata!.uid!}`)).toBeUndefined();
  });
});

describe('secrets', () => {
  it('passes the provisioner secret to CreateVolume and DeleteVolume and puts the other refs on the PV', async () => {
    await env.client
      .resource('Secret')
      .create({ metadata: { name: 'prov-default', namespace: 'default' }, stringData: { token: 't0p' } });
    await env.client.resource('StorageClass').create(
      storageClass('secret', {
        parameters: {
          'csi.storage.k8s.io/provisioner-secret-name': 'prov-${pvc.namespace}',
          'csi.storage.k8s.io/provisioner-secret-namespace': '${pvc.namespace}',
          'csi.storage.k8s.io/node-publish-secret-name': '${pvc.name}-pub',
          'csi.storage.k8s.io/node-publish-secret-namespace': 'default',
        },
      }),
    );
    const c = await claims().create(claim('s1', 'secret', '1Mi'));
    const name = `pvc-${c.metadata!.uid!}`;
    const pv = await eventually(() => pvs().get(name));
    expect(sidecar.csi.creates.find((r) => r.name === name)?.secrets).toEqual({ token: 't0p' });
    expect(pv.spec?.csi?.nodePublishSecretRef).toEqual({ name: 's1-pub', namespace: 'default' });
    expect(pv.metadata?.annotations?.['volume.kubernetes.io/provisioner-deletion-secret-name']).toBe('prov-default');
    await claims().delete('s1', { namespace: 'default' });
    await eventually(async () => {
      await expect(pvs().get(name)).rejects.toThrow(/not found/);
    });
    expect(sidecar.csi.deletes.find((r) => r.volumeId === pv.spec?.csi?.volumeHandle)?.secrets).toEqual({
      token: 't0p',
    });
  });

  it('a missing provisioner secret is a ProvisioningFailed event, and nothing is created', async () => {
    await env.client.resource('StorageClass').create(
      storageClass('nosecret', {
        parameters: {
          'csi.storage.k8s.io/provisioner-secret-name': 'absent',
          'csi.storage.k8s.io/provisioner-secret-namespace': 'default',
        },
      }),
    );
    const c = await claims().create(claim('s2', 'nosecret', '1Mi'));
    await eventually(async () => {
      const evs = await eventsFor(env.client, 'default', 's2');
      expect(evs.find((e) => e.reason === 'ProvisioningFailed')?.message).toMatch(
        /failed to provision volume with StorageClass "nosecret": .*not found/,
      );
    });
    expect(sidecar.csi.creates.find((r) => r.name === `pvc-${c.metadata!.uid!}`)).toBeUndefined();
  });
});

describe('crash in the middle of provisioning', () => {
  it('a sidecar stopped after CreateVolume and restarted leaves exactly one volume', async () => {
    await sidecar.stop();
    const before = await volumeIds();
    const first = env.startSidecar();
    const stopped = new Promise<void>((resolve) => {
      first.csi.afterCreate = () => {
        void first.stop().then(resolve);
      };
    });
    await env.client.resource('StorageClass').create(storageClass('crash'));
    const c = await claims().create(claim('k1', 'crash', '1Mi'));
    const name = `pvc-${c.metadata!.uid!}`;
    await stopped;
    // The volume exists in the driver, the PV does not.
    expect((await volumeIds()).length).toBe(before.length + 1);
    await expect(pvs().get(name)).rejects.toThrow(/not found/);

    sidecar = env.startSidecar();
    await eventually(async () =>
      expect((await claims().get('k1', { namespace: 'default' })).status?.phase).toBe('Bound'),
    );
    const after = await volumeIds();
    expect(after.length).toBe(before.length + 1);
    expect(after).toContain((await pvs().get(name)).spec?.csi?.volumeHandle);
    expect(readdirSync(join(env.stateDir, 'volumes')).length).toBe(after.length);
  });

  it('a sidecar stopped after DeleteVolume (before the PV is released) finishes the deletion when restarted', async () => {
    const c = await claims().create(claim('k2', 'crash', '1Mi'));
    const name = `pvc-${c.metadata!.uid!}`;
    const pv = await eventually(() => pvs().get(name));
    await eventually(async () =>
      expect((await claims().get('k2', { namespace: 'default' })).status?.phase).toBe('Bound'),
    );
    const volumeId = pv.spec!.csi!.volumeHandle;
    const stopped = new Promise<void>((resolve) => {
      sidecar.csi.afterDelete = () => {
        void sidecar.stop().then(resolve);
      };
    });
    await claims().delete('k2', { namespace: 'default' });
    await stopped;
    expect(await volumeIds()).not.toContain(volumeId);
    // The PV is still there, held by our finalizer.
    expect((await pvs().get(name)).metadata?.finalizers).toContain(PROVISIONER_FINALIZER);

    sidecar = env.startSidecar();
    await eventually(async () => {
      await expect(pvs().get(name)).rejects.toThrow(/not found/);
    });
    expect(await volumeIds()).not.toContain(volumeId);
    expect(existsSync(join(env.stateDir, 'volumes', volumeId))).toBe(false);
  });
});
