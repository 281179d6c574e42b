import { describe, expect, it } from 'vitest';
import { syncVolume } from './sync-volume.js';
import { findDeleter } from './reclaim.js';
import { Kit, NS, pv, pvc } from './fixtures.test-kit.js';

const BOUND_ANNS = { 'pv.kubernetes.io/bind-completed': 'yes', 'pv.kubernetes.io/bound-by-controller': 'yes' };
const BY_CTRL = { 'pv.kubernetes.io/bound-by-controller': 'yes' };

async function run(k: Kit, name = 'v1'): Promise<void> {
  const v = k.ctx.cache.volumes.get(name);
  if (!v) throw new Error(`no volume ${name}`);
  await syncVolume(k.ctx, v);
}

const boundTo = (claim: string, uid = `uid-${claim}`) => ({
  claim: { name: claim, uid },
  phase: 'Bound' as const,
  annotations: BY_CTRL,
});

describe('syncVolume (set 4)', () => {
  it('4-1 unused volume becomes Available', async () => {
    const k = new Kit({ volumes: [pv('v1', '1Gi', { phase: 'Pending' })] });
    await run(k);
    expect(k.volume('v1')?.status?.phase).toBe('Available');
    expect(k.writes).toEqual([{ op: 'updateVolumeStatus', name: 'v1' }]);
  });

  it('4-2 pre-bound volume (claimRef without UID) is Available', async () => {
    const k = new Kit({ volumes: [pv('v1', '1Gi', { phase: 'Pending', claim: { name: 'claim1' } })] });
    await run(k);
    expect(k.volume('v1')?.status?.phase).toBe('Available');
  });

  it('4-3 claim missing everywhere: Released, Retain does nothing else', async () => {
    const k = new Kit({ volumes: [pv('v1', '1Gi', boundTo('claim1'))] });
    await run(k);
    expect(k.volume('v1')?.status?.phase).toBe('Released');
    expect(k.volume('v1')?.spec?.claimRef?.uid).toBe('uid-claim1');
    expect(k.events).toEqual([]);
    expect(k.operations).toEqual([]);
  });

  it('4-3b claim not in the controller cache but in the informer: not released', async () => {
    const claim = pvc('claim1', '1Gi', { volumeName: 'v1', annotations: BOUND_ANNS, phase: 'Bound' });
    const k = new Kit({ volumes: [pv('v1', '1Gi', boundTo('claim1'))], informerOnlyClaims: [claim] });
    await run(k);
    expect(k.volume('v1')?.status?.phase).toBe('Bound');
    expect(k.writes).toEqual([]);
  });

  it('4-3c claim only on the API server (stale caches): not released', async () => {
    const k = new Kit({
      volumes: [pv('v1', '1Gi', boundTo('claim1'))],
      claims: [pvc('claim1', '1Gi', { volumeName: 'v1', annotations: BOUND_ANNS, phase: 'Bound' })],
    });
    k.ctx.cache.deleteClaim(`${NS}/claim1`);
    await run(k);
    expect(k.volume('v1')?.status?.phase).toBe('Bound');
  });

  it('4-4 claim re-created with another UID (confirmed by the API): Released', async () => {
    const k = new Kit({
      volumes: [pv('v1', '1Gi', boundTo('claim1', 'old-uid'))],
      claims: [pvc('claim1', '1Gi', { uid: 'new-uid' })],
    });
    await run(k);
    expect(k.volume('v1')?.status?.phase).toBe('Released');
  });

  it('4-4b cached claim has another UID but the API has the right one: not released', async () => {
    const k = new Kit({
      volumes: [pv('v1', '1Gi', boundTo('claim1'))],
      claims: [pvc('claim1', '1Gi', { volumeName: 'v1', annotations: BOUND_ANNS, phase: 'Bound' })],
    });
    const c = k.ctx.cache.getClaim(`${NS}/claim1`);
    if (c) k.ctx.cache.storeClaim({ ...c, metadata: { ...c.metadata, uid: 'stale-uid' } });
    await run(k);
    expect(k.volume('v1')?.status?.phase).toBe('Bound');
  });

  it('4-5 claim not yet bound: the claim is enqueued, nothing written', async () => {
    const k = new Kit({ volumes: [pv('v1', '1Gi', boundTo('claim1'))], claims: [pvc('claim1', '1Gi')] });
    await run(k);
    expect(k.enqueued).toEqual([`${NS}/claim1`]);
    expect(k.writes).toEqual([]);
  });

  it('4-5b claim not yet bound and volumeMode differs: VolumeMismatch on both objects', async () => {
    const k = new Kit({
      volumes: [pv('v1', '1Gi', boundTo('claim1'))],
      claims: [pvc('claim1', '1Gi', { volumeMode: 'Block' })],
    });
    await run(k);
    expect(k.eventTuples()).toEqual([
      [
        'v1',
        'Warning',
        'VolumeMismatch',
        'Cannot bind PersistentVolume to requested PersistentVolumeClaim "claim1" due to incompatible volumeMode.',
      ],
      [
        'claim1',
        'Warning',
        'VolumeMismatch',
        'Cannot bind PersistentVolume "v1" to requested PersistentVolumeClaim due to incompatible volumeMode.',
      ],
    ]);
    expect(k.enqueued).toEqual([]);
  });

  it('4-6 bound both ways: phase Bound', async () => {
    const k = new Kit({
      volumes: [pv('v1', '1Gi', { ...boundTo('claim1'), phase: 'Available' })],
      claims: [pvc('claim1', '1Gi', { volumeName: 'v1', annotations: BOUND_ANNS, phase: 'Bound' })],
    });
    await run(k);
    expect(k.volume('v1')?.status?.phase).toBe('Bound');
  });

  it('4-7 claim bound elsewhere, controller binding: claimRef and annotation removed, Available', async () => {
    const k = new Kit({
      volumes: [pv('v1', '1Gi', boundTo('claim1'))],
      claims: [pvc('claim1', '1Gi', { volumeName: 'v2', annotations: BOUND_ANNS, phase: 'Bound' })],
    });
    await run(k);
    expect(k.volume('v1')?.spec?.claimRef).toBeUndefined();
    expect(k.volume('v1')?.metadata?.annotations).toBeUndefined();
    expect(k.volume('v1')?.status?.phase).toBe('Available');
    expect(k.writes.map((w) => w.op)).toEqual(['updateVolume', 'updateVolumeStatus']);
  });

  it('4-8 claim bound elsewhere, user pre-binding: only the UID is removed', async () => {
    const k = new Kit({
      volumes: [pv('v1', '1Gi', { claim: { name: 'claim1', uid: 'uid-claim1' }, phase: 'Bound' })],
      claims: [pvc('claim1', '1Gi', { volumeName: 'v2', annotations: BOUND_ANNS, phase: 'Bound' })],
    });
    await run(k);
    expect(k.volume('v1')?.spec?.claimRef).toEqual({
      kind: 'PersistentVolumeClaim',
      namespace: NS,
      name: 'claim1',
      apiVersion: 'v1',
    });
    expect(k.volume('v1')?.status?.phase).toBe('Available');
  });

  it('4-9 provisioned Delete volume whose claim went elsewhere: Released and deleted (external deleter: left alone)', async () => {
    const k = new Kit({
      volumes: [
        pv('v1', '1Gi', {
          ...boundTo('claim1'),
          policy: 'Delete',
          annotations: { ...BY_CTRL, 'pv.kubernetes.io/provisioned-by': 'hostpath.csi.k8s.io' },
          source: { csi: { driver: 'hostpath.csi.k8s.io', volumeHandle: 'h' } },
        }),
      ],
      claims: [pvc('claim1', '1Gi', { volumeName: 'v2', annotations: BOUND_ANNS, phase: 'Bound' })],
    });
    await run(k);
    expect(k.volume('v1')?.status?.phase).toBe('Released');
    expect(await k.runOperations()).toEqual([]);
    expect(k.volume('v1')).toBeDefined();
    expect(k.events).toEqual([]);
  });
});

describe('reclaim (sets 6, 8, 13)', () => {
  const released = (o: Parameters<typeof pv>[2]) => pv('v1', '1Gi', { ...boundTo('claim1'), ...o });

  it('Delete, hostPath outside /tmp: Failed + VolumeFailedDelete with the hostPath deleter text', async () => {
    const k = new Kit({ volumes: [released({ policy: 'Delete', hostPath: '/data/v1' })] });
    await run(k);
    const errs = await k.runOperations();
    expect(errs).toHaveLength(1);
    expect(k.volume('v1')?.status).toEqual({
      phase: 'Failed',
      message: 'host_path deleter only supports /tmp/.+ but received provided /data/v1',
    });
    expect(k.eventTuples()).toEqual([
      ['v1', 'Warning', 'VolumeFailedDelete', 'host_path deleter only supports /tmp/.+ but received provided /data/v1'],
    ]);
  });

  it('Delete, hostPath under /tmp: data removed, PV deleted', async () => {
    const k = new Kit({ volumes: [released({ policy: 'Delete', hostPath: '/tmp/x/v1' })] });
    await run(k);
    expect(await k.runOperations()).toEqual([]);
    expect(k.removedPaths).toEqual(['/tmp/x/v1']);
    expect(k.volume('v1')).toBeUndefined();
    expect(k.writes.map((w) => w.op)).toEqual(['updateVolumeStatus', 'deleteVolume']);
  });

  it('Delete, NFS: no deletable plugin', async () => {
    const k = new Kit({ volumes: [released({ policy: 'Delete', source: { nfs: { server: 's', path: '/e' } } })] });
    await run(k);
    await k.runOperations();
    expect(k.eventTuples()).toEqual([
      [
        'v1',
        'Warning',
        'VolumeFailedDelete',
        'error getting deleter volume plugin for volume "v1": no deletable volume plugin matched',
      ],
    ]);
    expect(k.volume('v1')?.status?.phase).toBe('Failed');
  });

  it('Delete, a Failed volume stays Failed and the delete is retried', async () => {
    const k = new Kit({ volumes: [released({ policy: 'Delete', phase: 'Failed', hostPath: '/data/v1' })] });
    await run(k);
    expect(k.operations.map((o) => o.name)).toEqual(['delete-v1[pvuid-v1]']);
    await k.runOperations();
    expect(k.writes).toEqual([]);
    expect(k.events).toEqual([]);
  });

  it('Delete, the claim came back on the live read: no deletion', async () => {
    const k = new Kit({ volumes: [released({ policy: 'Delete', hostPath: '/tmp/v1' })] });
    await run(k);
    k.ctx.cache.storeClaim({
      ...pvc('claim1', '1Gi', { volumeName: 'v1' }),
      metadata: { name: 'claim1', namespace: NS, uid: 'uid-claim1', resourceVersion: '1' },
    });
    await k.runOperations();
    expect(k.volume('v1')).toBeDefined();
  });

  it.each([
    [
      { hostPath: { path: '/srv/x' } },
      {},
      false,
      { kind: 'error', message: 'host_path deleter only supports /tmp/.+ but received provided /srv/x' },
    ],
    [
      { csi: { driver: 'd', volumeHandle: 'h' } },
      {},
      false,
      {
        kind: 'error',
        message: 'error getting deleter volume plugin for volume "v": no deletable volume plugin matched',
      },
    ],
    [{ csi: { driver: 'd', volumeHandle: 'h' } }, {}, true, { kind: 'external' }],
    [
      { csi: { driver: 'd', volumeHandle: 'h' } },
      { 'pv.kubernetes.io/provisioned-by': 'd' },
      false,
      { kind: 'external' },
    ],
    [
      { awsElasticBlockStore: { volumeID: 'x' } },
      {},
      false,
      { kind: 'error', message: 'error getting deleter volume plugin for volume "v": no volume plugin matched' },
    ],
    [
      { nfs: { server: 's', path: '/' } },
      { 'pv.kubernetes.io/provisioned-by': 'kubernetes.io/nfs' },
      false,
      { kind: 'error', message: 'no volume plugin matched name: kubernetes.io/nfs' },
    ],
  ])('findDeleter %o %o honor=%s', (source, annotations, honor, want) => {
    expect(findDeleter(pv('v', '1Gi', { source, annotations }), honor)).toEqual(want);
  });

  it('Recycle without a recycler: Failed + VolumeFailedRecycle', async () => {
    const k = new Kit({ volumes: [released({ policy: 'Recycle' })] });
    await run(k);
    await k.runOperations();
    expect(k.eventTuples()).toEqual([
      ['v1', 'Warning', 'VolumeFailedRecycle', 'No recycler plugin found for the volume!'],
    ]);
    expect(k.volume('v1')?.status?.phase).toBe('Failed');
  });

  it('Recycle with a recycler: VolumeRecycled, unbound, Available', async () => {
    const k = new Kit({ volumes: [released({ policy: 'Recycle' })] });
    k.recycler = async () => {};
    k.restart();
    await run(k);
    await k.runOperations();
    expect(k.eventTuples()).toEqual([['v1', 'Normal', 'VolumeRecycled', 'Volume recycled']]);
    expect(k.volume('v1')?.spec?.claimRef).toBeUndefined();
    expect(k.volume('v1')?.status?.phase).toBe('Available');
  });

  it('Recycle while a pod still uses the old claim: Normal VolumeFailedRecycle, nothing else', async () => {
    const pod = {
      metadata: { name: 'p', namespace: NS },
      spec: { containers: [], nodeName: 'n', volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'claim1' } }] },
      status: { phase: 'Running' },
    };
    const k = new Kit({ volumes: [released({ policy: 'Recycle' })], pods: [pod] });
    await run(k);
    await k.runOperations();
    expect(k.eventTuples()).toEqual([['v1', 'Normal', 'VolumeFailedRecycle', `Volume is used by pods: ${NS}/p`]]);
    expect(k.volume('v1')?.status?.phase).toBe('Released');
  });

  it('unknown policy: Failed + VolumeUnknownReclaimPolicy', async () => {
    const k = new Kit({ volumes: [released({ policy: 'Shred' })] });
    await run(k);
    expect(k.eventTuples()).toEqual([
      ['v1', 'Warning', 'VolumeUnknownReclaimPolicy', 'Volume has unrecognized PersistentVolumeReclaimPolicy'],
    ]);
    expect(k.volume('v1')?.status?.phase).toBe('Failed');
  });
});

describe('reuse-released (Stowage extension)', () => {
  const ann = { ...BY_CTRL, 'stowage.io/reuse-released': 'true' };

  it('claim gone: claimRef and annotations cleared, Available, VolumeReused event', async () => {
    const k = new Kit({
      volumes: [pv('v1', '1Gi', { claim: { name: 'claim1', uid: 'u1' }, phase: 'Released', annotations: ann })],
    });
    await run(k);
    expect(k.volume('v1')?.spec?.claimRef).toBeUndefined();
    expect(k.volume('v1')?.metadata?.annotations).toBeUndefined();
    expect(k.volume('v1')?.status?.phase).toBe('Available');
    expect(k.eventTuples().map((e) => e[2])).toEqual(['VolumeReused']);
  });

  it('claim re-created with a new UID counts as gone', async () => {
    const k = new Kit({
      volumes: [pv('v1', '1Gi', { claim: { name: 'claim1', uid: 'u1' }, phase: 'Released', annotations: ann })],
      claims: [pvc('claim1', '1Gi', { uid: 'u2' })],
    });
    await run(k);
    expect(k.volume('v1')?.status?.phase).toBe('Available');
  });

  it('claim still live with the same UID (caches missed it): refused, stays Released', async () => {
    const k = new Kit({
      volumes: [pv('v1', '1Gi', { claim: { name: 'claim1', uid: 'u1' }, phase: 'Released', annotations: ann })],
      claims: [pvc('claim1', '1Gi', { uid: 'u1' })],
    });
    k.ctx.cache.deleteClaim(`${NS}/claim1`);
    await run(k);
    expect(k.volume('v1')?.status?.phase).toBe('Released');
    expect(k.volume('v1')?.spec?.claimRef?.uid).toBe('u1');
    expect(k.eventTuples().map((e) => e[2])).toEqual(['VolumeReuseRefused']);
  });

  it('without the annotation a Released volume stays Released', async () => {
    const k = new Kit({ volumes: [pv('v1', '1Gi', { claim: { name: 'claim1', uid: 'u1' }, phase: 'Released' })] });
    await run(k);
    expect(k.writes).toEqual([]);
  });
});
