import { describe, expect, it } from 'vitest';
import { syncClaim } from './sync-claim.js';
import { externalProvisioningMessage } from './provision.js';
import { Kit, NS, pv, pvc, storageClass } from './fixtures.test-kit.js';
import { ConflictError } from '../../util/errors.js';

const BOUND_ANNS = { 'pv.kubernetes.io/bind-completed': 'yes', 'pv.kubernetes.io/bound-by-controller': 'yes' };

async function run(k: Kit, key = `${NS}/claim1`): Promise<void> {
  const c = k.ctx.cache.getClaim(key);
  if (!c) throw new Error(`no claim ${key}`);
  await syncClaim(k.ctx, c);
}

describe('syncUnboundClaim, no volumeName (set 1)', () => {
  it('1-1 successful bind: four writes in Kubernetes order, full claimRef, annotations, status', async () => {
    const k = new Kit({ volumes: [pv('v1', '1Gi')], claims: [pvc('claim1', '1Gi')] });
    await run(k);
    expect(k.writes).toEqual([
      { op: 'updateVolume', name: 'v1' },
      { op: 'updateVolumeStatus', name: 'v1' },
      { op: 'updateClaim', name: `${NS}/claim1` },
      { op: 'updateClaimStatus', name: `${NS}/claim1` },
    ]);
    const v = k.volume('v1');
    expect(v?.spec?.claimRef).toMatchObject({
      kind: 'PersistentVolumeClaim',
      apiVersion: 'v1',
      namespace: NS,
      name: 'claim1',
      uid: 'uid-claim1',
    });
    expect(v?.spec?.claimRef?.resourceVersion).toBeDefined();
    expect(v?.metadata?.annotations).toEqual({ 'pv.kubernetes.io/bound-by-controller': 'yes' });
    expect(v?.status?.phase).toBe('Bound');
    const c = k.claim(`${NS}/claim1`);
    expect(c?.spec?.volumeName).toBe('v1');
    expect(c?.metadata?.annotations).toEqual(BOUND_ANNS);
    expect(c?.status).toEqual({ phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' } });
    expect(k.events).toEqual([]);
  });

  it('1-2 no matching volume and no class: FailedBinding, Pending', async () => {
    const k = new Kit({ volumes: [pv('v1', '1Gi')], claims: [pvc('claim1', '10Gi')] });
    await run(k);
    expect(k.eventTuples()).toEqual([
      [
        'claim1',
        'Normal',
        'FailedBinding',
        'no persistent volumes available for this claim and no storage class is set',
      ],
    ]);
    expect(k.writes).toEqual([]); // already Pending, nothing to clear
    expect(k.volume('v1')?.spec?.claimRef).toBeUndefined();
  });

  it('1-4 smallest satisfying volume wins', async () => {
    const k = new Kit({
      volumes: [pv('v1', '10Gi'), pv('v2', '1Gi'), pv('v3', '500Mi')],
      claims: [pvc('claim1', '1Gi')],
    });
    await run(k);
    expect(k.claim(`${NS}/claim1`)?.spec?.volumeName).toBe('v2');
  });

  it('1-5 volume pre-bound to the claim wins over a smaller one; no bound-by-controller on the PV', async () => {
    const k = new Kit({
      volumes: [pv('v1', '10Gi', { claim: { name: 'claim1' } }), pv('v2', '1Gi')],
      claims: [pvc('claim1', '1Gi')],
    });
    await run(k);
    expect(k.volume('v1')?.spec?.claimRef?.uid).toBe('uid-claim1');
    expect(k.volume('v1')?.metadata?.annotations).toBeUndefined();
    expect(k.claim(`${NS}/claim1`)?.metadata?.annotations).toEqual(BOUND_ANNS);
    expect(k.claim(`${NS}/claim1`)?.status?.capacity).toEqual({ storage: '10Gi' });
  });

  it('1-6 volumes not Available (Pending phase) are not offered', async () => {
    const k = new Kit({ volumes: [pv('v1', '1Gi', { phase: 'Pending' })], claims: [pvc('claim1', '1Gi')] });
    await run(k);
    expect(k.volume('v1')?.spec?.claimRef).toBeUndefined();
  });

  it('1-11 label selector: only the matching volume binds', async () => {
    const k = new Kit({
      volumes: [pv('v1', '1Gi'), pv('v2', '5Gi', { labels: { tier: 'gold' } })],
      claims: [pvc('claim1', '1Gi', { selector: { matchLabels: { tier: 'gold' } } })],
    });
    await run(k);
    expect(k.claim(`${NS}/claim1`)?.spec?.volumeName).toBe('v2');
  });

  it('1-x volumeMode mismatch: a Block claim does not take a Filesystem volume', async () => {
    const k = new Kit({ volumes: [pv('v1', '1Gi')], claims: [pvc('claim1', '1Gi', { volumeMode: 'Block' })] });
    await run(k);
    expect(k.volume('v1')?.spec?.claimRef).toBeUndefined();
    expect(k.eventTuples()[0]?.[2]).toBe('FailedBinding');
  });

  it('1-x class must be equal; access modes must be a superset', async () => {
    const k = new Kit({
      volumes: [
        pv('v1', '1Gi', { cls: 'gold' }),
        pv('v2', '1Gi', { modes: ['ReadOnlyMany'] }),
        pv('v3', '2Gi', { modes: ['ReadOnlyMany', 'ReadWriteOnce'] }),
      ],
      claims: [pvc('claim1', '1Gi')],
    });
    await run(k);
    expect(k.claim(`${NS}/claim1`)?.spec?.volumeName).toBe('v3');
  });

  it('fewer access modes beat smaller capacity (upstream searches mode sets first)', async () => {
    const k = new Kit({
      volumes: [pv('big', '10Gi'), pv('small', '1Gi', { modes: ['ReadWriteOnce', 'ReadOnlyMany'] })],
      claims: [pvc('claim1', '1Gi')],
    });
    await run(k);
    expect(k.claim(`${NS}/claim1`)?.spec?.volumeName).toBe('big');
  });

  it('a conflict on the claim write stops the bind; the next sync completes it without a second PV write', async () => {
    const k = new Kit({ volumes: [pv('v1', '1Gi')], claims: [pvc('claim1', '1Gi')] });
    k.failNext('updateClaim', new ConflictError('modified'));
    await expect(run(k)).rejects.toBeInstanceOf(ConflictError);
    await run(k);
    expect(k.writes.map((w) => w.op)).toEqual([
      'updateVolume',
      'updateVolumeStatus',
      'updateClaim',
      'updateClaimStatus',
    ]);
    expect(k.claim(`${NS}/claim1`)?.status?.phase).toBe('Bound');
  });
});

describe('a volume pre-bound to the claim, created in one burst with another match', () => {
  const claimKeyOf = `${NS}/claim1`;
  const BY_CONTROLLER = { 'pv.kubernetes.io/bound-by-controller': 'yes' };
  const prebound = (uid?: string) => pv('pre', '1Gi', { phase: 'Pending', claim: { name: 'claim1', uid } });

  it('delivered by the informer but not yet synced by a volume worker: the claim binds it, the other volume is untouched', async () => {
    const k = new Kit({ volumes: [pv('free', '1Gi')], claims: [pvc('claim1', '1Gi')] });
    k.createVolume(prebound('uid-claim1'));
    await run(k);
    expect(k.claim(claimKeyOf)?.spec?.volumeName).toBe('pre');
    expect(k.writes.filter((w) => w.name === 'free')).toEqual([]);
  });

  it.each([
    ['with the claim UID', 'uid-claim1'],
    ['by name only', undefined],
  ])(
    'created while the claim binds the other (%s): the claim side is not written, the other volume is given back, the claim binds it',
    async (_n, uid) => {
      const k = new Kit({ volumes: [pv('free', '1Gi')], claims: [pvc('claim1', '1Gi')] });
      k.afterWrite('updateVolume', 'free', () => k.createVolume(prebound(uid)));
      await run(k);
      expect(k.writes).toEqual([
        { op: 'updateVolume', name: 'free' },
        { op: 'updateVolumeStatus', name: 'free' },
        { op: 'updateVolume', name: 'free' },
        { op: 'updateVolumeStatus', name: 'free' },
      ]);
      expect(k.claim(claimKeyOf)?.spec?.volumeName).toBeUndefined();
      expect(k.enqueued).toEqual([claimKeyOf]);
      await run(k);
      const claim = k.claim(claimKeyOf);
      expect(claim?.spec?.volumeName).toBe('pre');
      expect(claim?.status?.phase).toBe('Bound');
      expect(k.volume('pre')?.spec?.claimRef?.uid).toBe('uid-claim1');
      expect(k.volume('pre')?.status?.phase).toBe('Bound');
      expect(k.volume('pre')?.metadata?.annotations).toBeUndefined();
      const free = k.volume('free');
      expect(free?.spec?.claimRef).toBeUndefined();
      expect(free?.metadata?.annotations).toBeUndefined();
      expect(free?.status?.phase).toBe('Available');
    },
  );

  it.each([
    ['pre-bound to another claim', pv('pre', '1Gi', { phase: 'Pending', claim: { name: 'other' } })],
    [
      'pre-bound to an earlier claim of that name (other UID)',
      pv('pre', '1Gi', { phase: 'Pending', claim: { name: 'claim1', uid: 'old' } }),
    ],
    ['pre-bound but too small', pv('pre', '500Mi', { phase: 'Pending', claim: { name: 'claim1' } })],
    [
      'pre-bound but being deleted',
      { ...prebound(), metadata: { name: 'pre', deletionTimestamp: '2024-01-01T00:00:00Z' } },
    ],
  ])('a volume that is no better match changes nothing (%s): four bind writes', async (_n, other) => {
    const k = new Kit({ volumes: [pv('free', '1Gi')], claims: [pvc('claim1', '1Gi')] });
    k.afterWrite('updateVolume', 'free', () => k.createVolume(other));
    await run(k);
    expect(k.writes.map((w) => `${w.op} ${w.name}`)).toEqual([
      'updateVolume free',
      'updateVolumeStatus free',
      `updateClaim ${claimKeyOf}`,
      `updateClaimStatus ${claimKeyOf}`,
    ]);
    expect(k.claim(claimKeyOf)?.spec?.volumeName).toBe('free');
    expect(k.volume('free')?.metadata?.annotations).toEqual(BY_CONTROLLER);
  });

  it('a half-done bind of ours (crash after the volume side) yields to the user pre-binding found at restart', async () => {
    const half = pv('a-half', '1Gi', {
      phase: 'Bound',
      claim: { name: 'claim1', uid: 'uid-claim1' },
      annotations: BY_CONTROLLER,
    });
    const k = new Kit({
      volumes: [half, pv('z-pre', '1Gi', { phase: 'Available', claim: { name: 'claim1' } })],
      claims: [pvc('claim1', '1Gi')],
    });
    await run(k);
    expect(k.claim(claimKeyOf)?.spec?.volumeName).toBe('z-pre');
    expect(k.writes.filter((w) => w.name === 'a-half')).toEqual([]); // syncVolume rolls it back, as upstream
  });
});

describe('syncUnboundClaim, volumeName set (set 2)', () => {
  it('2-1 requested volume missing: stays Pending, no event', async () => {
    const k = new Kit({ claims: [pvc('claim1', '1Gi', { volumeName: 'v1', phase: 'Bound' })] });
    await run(k);
    expect(k.claim(`${NS}/claim1`)?.status?.phase).toBe('Pending');
    expect(k.events).toEqual([]);
  });

  it('2-3 requested unbound volume: bind; claim not marked bound-by-controller, PV is', async () => {
    const k = new Kit({ volumes: [pv('v1', '1Gi')], claims: [pvc('claim1', '1Gi', { volumeName: 'v1' })] });
    await run(k);
    expect(k.claim(`${NS}/claim1`)?.metadata?.annotations).toEqual({ 'pv.kubernetes.io/bind-completed': 'yes' });
    expect(k.volume('v1')?.metadata?.annotations).toEqual({ 'pv.kubernetes.io/bound-by-controller': 'yes' });
    expect(k.volume('v1')?.status?.phase).toBe('Bound');
  });

  it('2-4 mutual pre-binding: bound, no bound-by-controller on either side', async () => {
    const k = new Kit({
      volumes: [pv('v1', '1Gi', { claim: { name: 'claim1' } })],
      claims: [pvc('claim1', '1Gi', { volumeName: 'v1' })],
    });
    await run(k);
    expect(k.volume('v1')?.metadata?.annotations).toBeUndefined();
    expect(k.volume('v1')?.spec?.claimRef?.uid).toBe('uid-claim1');
    expect(k.claim(`${NS}/claim1`)?.metadata?.annotations).toEqual({ 'pv.kubernetes.io/bind-completed': 'yes' });
    expect(k.claim(`${NS}/claim1`)?.status?.phase).toBe('Bound');
  });

  it('2-5 requested volume too small: VolumeMismatch warning, Pending', async () => {
    const k = new Kit({ volumes: [pv('v1', '1Gi')], claims: [pvc('claim1', '10Gi', { volumeName: 'v1' })] });
    await run(k);
    expect(k.eventTuples()).toEqual([
      ['claim1', 'Warning', 'VolumeMismatch', 'Cannot bind to requested volume "v1": requested PV is too small'],
    ]);
    expect(k.volume('v1')?.spec?.claimRef).toBeUndefined();
  });

  it.each([
    [{ cls: 'gold' }, 'storageClassName does not match'],
    [{ volumeMode: 'Block' }, 'incompatible volumeMode'],
    [{ modes: ['ReadOnlyMany'] }, 'incompatible accessMode'],
  ] as const)('2-x requested volume %o mismatch: %s', async (o, why) => {
    const k = new Kit({
      volumes: [pv('v1', '1Gi', { ...o, modes: 'modes' in o ? [...o.modes] : undefined })],
      claims: [pvc('claim1', '1Gi', { volumeName: 'v1' })],
    });
    await run(k);
    expect(k.eventTuples()).toEqual([
      ['claim1', 'Warning', 'VolumeMismatch', `Cannot bind to requested volume "v1": ${why}`],
    ]);
  });

  it('2-6 requested volume bound to another claim: FailedBinding warning, Pending', async () => {
    const k = new Kit({
      volumes: [pv('v1', '1Gi', { claim: { name: 'claim-a', uid: 'uid-claim-a' }, phase: 'Bound' })],
      claims: [pvc('claim1', '1Gi', { volumeName: 'v1', phase: 'Bound' })],
    });
    await run(k);
    expect(k.eventTuples()).toEqual([
      ['claim1', 'Warning', 'FailedBinding', 'volume "v1" already bound to a different claim.'],
    ]);
    expect(k.claim(`${NS}/claim1`)?.status?.phase).toBe('Pending');
    expect(k.volume('v1')?.spec?.claimRef?.name).toBe('claim-a');
  });

  it('2-7 same, but the claim says the controller bound it: an error ("should never happen")', async () => {
    const k = new Kit({
      volumes: [pv('v1', '1Gi', { claim: { name: 'claim-a', uid: 'uid-claim-a' }, phase: 'Bound' })],
      claims: [
        pvc('claim1', '1Gi', { volumeName: 'v1', annotations: { 'pv.kubernetes.io/bound-by-controller': 'yes' } }),
      ],
    });
    await expect(run(k)).rejects.toThrow(
      `invalid binding of claim "${NS}/claim1" to volume "v1": volume already claimed by "${NS}/claim-a"`,
    );
    expect(k.eventTuples()[0]?.[2]).toBe('FailedBinding');
  });
});

describe('syncBoundClaim (set 3)', () => {
  it('3-1 bind-completed without volumeName: Lost + ClaimLost, once', async () => {
    const k = new Kit({ claims: [pvc('claim1', '1Gi', { annotations: BOUND_ANNS, phase: 'Bound' })] });
    await run(k);
    await run(k);
    expect(k.eventTuples()).toEqual([
      [
        'claim1',
        'Warning',
        'ClaimLost',
        'Bound claim has lost reference to PersistentVolume. Data on the volume is lost!',
      ],
    ]);
    expect(k.claim(`${NS}/claim1`)?.status?.phase).toBe('Lost');
  });

  it('3-2 volume missing: Lost', async () => {
    const k = new Kit({
      claims: [pvc('claim1', '1Gi', { volumeName: 'v1', annotations: BOUND_ANNS, phase: 'Bound' })],
    });
    await run(k);
    expect(k.eventTuples()).toEqual([
      ['claim1', 'Warning', 'ClaimLost', 'Bound claim has lost its PersistentVolume. Data on the volume is lost!'],
    ]);
  });

  it('3-3 volume unbound: bound again', async () => {
    const k = new Kit({
      volumes: [pv('v1', '1Gi')],
      claims: [pvc('claim1', '1Gi', { volumeName: 'v1', annotations: BOUND_ANNS })],
    });
    await run(k);
    expect(k.volume('v1')?.spec?.claimRef?.uid).toBe('uid-claim1');
    expect(k.volume('v1')?.status?.phase).toBe('Bound');
    expect(k.claim(`${NS}/claim1`)?.status?.phase).toBe('Bound');
  });

  it('3-4 volume bound to another UID: Lost + ClaimMisbound', async () => {
    const k = new Kit({
      volumes: [pv('v1', '1Gi', { claim: { name: 'claim1', uid: 'other' }, phase: 'Bound' })],
      claims: [pvc('claim1', '1Gi', { volumeName: 'v1', annotations: BOUND_ANNS, phase: 'Bound' })],
    });
    await run(k);
    expect(k.eventTuples()).toEqual([
      ['claim1', 'Warning', 'ClaimMisbound', 'Two claims are bound to the same volume, this one is bound incorrectly'],
    ]);
    expect(k.claim(`${NS}/claim1`)?.status?.phase).toBe('Lost');
  });

  it('3-5 correctly bound pair: no writes at all', async () => {
    const k = new Kit({
      volumes: [
        pv('v1', '1Gi', {
          claim: { name: 'claim1', uid: 'uid-claim1' },
          phase: 'Bound',
          annotations: { 'pv.kubernetes.io/bound-by-controller': 'yes' },
        }),
      ],
      claims: [pvc('claim1', '1Gi', { volumeName: 'v1', annotations: BOUND_ANNS, phase: 'Bound' })],
    });
    const c = k.claim(`${NS}/claim1`);
    if (c) {
      k.claims.set(`${NS}/claim1`, {
        ...c,
        status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' } },
      });
      k.restart();
    }
    await run(k);
    expect(k.writes).toEqual([]);
  });
});

describe('delayed binding (set 14)', () => {
  const wait = storageClass('wait', 'kubernetes.io/no-provisioner', 'WaitForFirstConsumer');

  it('14-1 WaitForFirstConsumer: no bind, WaitForFirstConsumer event, no provisioning', async () => {
    const k = new Kit({
      classes: [wait],
      volumes: [pv('v1', '1Gi', { cls: 'wait' })],
      claims: [pvc('claim1', '1Gi', { cls: 'wait' })],
    });
    await run(k);
    expect(k.eventTuples()).toEqual([
      ['claim1', 'Normal', 'WaitForFirstConsumer', 'waiting for first consumer to be created before binding'],
    ]);
    expect(k.volume('v1')?.spec?.claimRef).toBeUndefined();
    expect(k.operations).toEqual([]);
  });

  it('14-2 an unscheduled pod uses the claim: WaitForPodScheduled', async () => {
    const pod = {
      metadata: { name: 'p1', namespace: NS },
      spec: { containers: [], volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'claim1' } }] },
    };
    const k = new Kit({ classes: [wait], pods: [pod], claims: [pvc('claim1', '1Gi', { cls: 'wait' })] });
    await run(k);
    expect(k.eventTuples()).toEqual([
      ['claim1', 'Normal', 'WaitForPodScheduled', 'waiting for pod p1 to be scheduled'],
    ]);
  });

  it('14-3 a pre-bound volume still binds in delayed mode', async () => {
    const k = new Kit({
      classes: [wait],
      volumes: [pv('v1', '1Gi', { cls: 'wait', claim: { name: 'claim1' } })],
      claims: [pvc('claim1', '1Gi', { cls: 'wait' })],
    });
    await run(k);
    expect(k.claim(`${NS}/claim1`)?.status?.phase).toBe('Bound');
  });

  it('14-4 selected node (Stowage option): binds to the volume whose node affinity admits the node', async () => {
    const aff = (node: string) => ({
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] },
          ],
        },
      },
      hostPath: { path: '/x' },
    });
    const k = new Kit({
      classes: [wait],
      nodes: [{ metadata: { name: 'n2', labels: { 'kubernetes.io/hostname': 'n2' } } }],
      volumes: [pv('a', '1Gi', { cls: 'wait', source: aff('n1') }), pv('b', '5Gi', { cls: 'wait', source: aff('n2') })],
      claims: [pvc('claim1', '1Gi', { cls: 'wait', annotations: { 'volume.kubernetes.io/selected-node': 'n2' } })],
      options: { bindDelayedClaimsOnSelectedNode: true },
    });
    await run(k);
    expect(k.claim(`${NS}/claim1`)?.spec?.volumeName).toBe('b');
  });

  it('14-5 selected node without the option (KCM exact): provisioning path', async () => {
    const k = new Kit({
      classes: [wait],
      claims: [pvc('claim1', '1Gi', { cls: 'wait', annotations: { 'volume.kubernetes.io/selected-node': 'n2' } })],
    });
    await run(k);
    expect(k.eventTuples()).toEqual([
      ['claim1', 'Warning', 'ProvisioningFailed', 'no volume plugin matched name: kubernetes.io/no-provisioner'],
    ]);
  });
});

describe('provisioning hand-off and default class', () => {
  it('external provisioner: both annotations, ExternalProvisioning event with the exact text', async () => {
    const k = new Kit({
      classes: [storageClass('ext', 'example.com/prov')],
      claims: [pvc('claim1', '1Gi', { cls: 'ext' })],
    });
    await run(k);
    expect(k.operations.map((o) => o.name)).toEqual([`provision-${NS}/claim1[uid-claim1]`]);
    expect(await k.runOperations()).toEqual([]);
    expect(k.claim(`${NS}/claim1`)?.metadata?.annotations).toEqual({
      'volume.beta.kubernetes.io/storage-provisioner': 'example.com/prov',
      'volume.kubernetes.io/storage-provisioner': 'example.com/prov',
    });
    expect(k.eventTuples()).toEqual([
      ['claim1', 'Normal', 'ExternalProvisioning', externalProvisioningMessage('example.com/prov')],
    ]);
    expect(externalProvisioningMessage('x')).toBe(
      "Waiting for a volume to be created either by the external provisioner 'x' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.",
    );
  });

  it('missing class: ProvisioningFailed', async () => {
    const k = new Kit({ claims: [pvc('claim1', '1Gi', { cls: 'nope' })] });
    await run(k);
    expect(k.eventTuples()).toEqual([
      ['claim1', 'Warning', 'ProvisioningFailed', 'storageclass.storage.k8s.io "nope" not found'],
    ]);
  });

  it('retroactive default class: a class-less pending claim gets the newest default', async () => {
    const dflt = { 'storageclass.kubernetes.io/is-default-class': 'true' };
    const at = (name: string, prov: string, ts: string) => {
      const s = storageClass(name, prov, 'Immediate', dflt);
      return { ...s, metadata: { ...s.metadata, creationTimestamp: ts } };
    };
    const classes = [
      at('old', 'a.io', '2024-01-01T00:00:00Z'),
      at('new', 'b.io', '2024-02-01T00:00:00Z'),
      at('new2', 'c.io', '2023-01-01T00:00:00Z'),
    ];
    const k = new Kit({ classes, claims: [pvc('claim1', '1Gi', { cls: null })] });
    await run(k);
    expect(k.claim(`${NS}/claim1`)?.spec?.storageClassName).toBe('new');
    expect(k.enqueued).toEqual([`${NS}/claim1`]);
    expect(k.events).toEqual([]);
  });

  it('an explicit empty class is never defaulted', async () => {
    const k = new Kit({
      classes: [storageClass('d', 'a.io', 'Immediate', { 'storageclass.kubernetes.io/is-default-class': 'true' })],
      claims: [pvc('claim1', '1Gi')],
    });
    await run(k);
    expect(k.claim(`${NS}/claim1`)?.spec?.storageClassName).toBe('');
    expect(k.eventTuples()[0]?.[2]).toBe('FailedBinding');
  });
});
