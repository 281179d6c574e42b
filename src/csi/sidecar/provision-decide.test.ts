import type { PersistentVolume, PersistentVolumeClaim } from 'kubernetes-types/core/v1.js';
import type { StorageClass } from 'kubernetes-types/storage/v1.js';
import { describe, expect, it } from 'vitest';
import { attacherFinalizer, pvNameForClaim } from './names.js';
import { buildPv, cloneSource, cloneSourceInUse, decideClaim, planProvision } from './provision-decide.js';
import { provisionCapabilities } from './capabilities.js';
import { decideVolume } from './delete-decide.js';

const D = 'hostpath.csi.stowage.io';
const cls = (extra: Partial<StorageClass> = {}): StorageClass => ({
  metadata: { name: 'fast' },
  provisioner: D,
  ...extra,
});
const pvc = (
  extra: {
    anns?: Record<string, string>;
    spec?: Partial<NonNullable<PersistentVolumeClaim['spec']>>;
    status?: PersistentVolumeClaim['status'];
    name?: string;
  } = {},
): PersistentVolumeClaim => ({
  metadata: {
    name: extra.name ?? 'c',
    namespace: 'ns',
    uid: `uid-${extra.name ?? 'c'}`,
    annotations: { 'volume.kubernetes.io/storage-provisioner': D, ...extra.anns },
  },
  spec: {
    accessModes: ['ReadWriteOnce'],
    storageClassName: 'fast',
    resources: { requests: { storage: '1Gi' } },
    ...extra.spec,
  },
  ...(extra.status ? { status: extra.status } : {}),
});

describe('names', () => {
  it('pv name and attacher finalizer', () => {
    expect(pvNameForClaim('abc')).toBe('pvc-abc');
    expect(attacherFinalizer('hostpath.csi.k8s.io')).toBe('external-attacher/hostpath-csi-k8s-io');
  });
});

describe('decideClaim', () => {
  const none = () => false;
  it.each([
    {
      name: 'another provisioner',
      claim: pvc({ anns: { 'volume.kubernetes.io/storage-provisioner': 'other' } }),
      c: cls(),
      want: 'skip',
    },
    { name: 'already bound', claim: pvc({ spec: { volumeName: 'pv1' } }), c: cls(), want: 'skip' },
    { name: 'no class', claim: pvc(), c: undefined, want: 'waitForClass' },
    { name: 'WFFC without node', claim: pvc(), c: cls({ volumeBindingMode: 'WaitForFirstConsumer' }), want: 'skip' },
    {
      name: 'WFFC with node',
      claim: pvc({ anns: { 'volume.kubernetes.io/selected-node': 'n1' } }),
      c: cls({ volumeBindingMode: 'WaitForFirstConsumer' }),
      want: 'provision',
    },
    { name: 'Immediate', claim: pvc(), c: cls(), want: 'provision' },
  ])('$name → $want', ({ claim, c, want }) => expect(decideClaim(claim, D, c, none).kind).toBe(want));
  it('an existing PV for the claim means done (crash recovery)', () => {
    expect(decideClaim(pvc(), D, cls(), (n) => n === 'pvc-uid-c').kind).toBe('skip');
  });
  it('the beta class annotation wins over spec.storageClassName, as in the PV controller (GetPersistentVolumeClaimClass)', () => {
    const claim = pvc({
      anns: { 'volume.beta.kubernetes.io/storage-class': 'gold' },
      spec: { storageClassName: 'fast' },
    });
    expect(decideClaim(claim, D, undefined, none)).toEqual({ kind: 'waitForClass', className: 'gold' });
  });
});

describe('capabilities', () => {
  it.each([
    { modes: ['ReadWriteOnce'], snmw: false, want: ['SINGLE_NODE_WRITER'] },
    { modes: ['ReadWriteOnce'], snmw: true, want: ['SINGLE_NODE_MULTI_WRITER'] },
    { modes: ['ReadWriteOncePod'], snmw: true, want: ['SINGLE_NODE_SINGLE_WRITER'] },
    {
      modes: ['ReadOnlyMany', 'ReadWriteMany'],
      snmw: false,
      want: ['MULTI_NODE_READER_ONLY', 'MULTI_NODE_MULTI_WRITER'],
    },
  ])('$modes (snmw=$snmw)', ({ modes, snmw, want }) => {
    expect(
      provisionCapabilities({ accessModes: modes, singleNodeMultiWriter: snmw }).map((c) => c.accessMode?.mode),
    ).toEqual(want);
  });
  it('block claims get a block access type, no fsType', () => {
    const p = planProvision({
      claim: pvc({ spec: { volumeMode: 'Block' } }),
      cls: cls({ parameters: { 'csi.storage.k8s.io/fstype': 'xfs' } }),
      pvName: 'pvc-x',
      singleNodeMultiWriter: false,
    });
    expect(p.request.volumeCapabilities?.[0]).toEqual({ block: {}, accessMode: { mode: 'SINGLE_NODE_WRITER' } });
    expect(p.fsType).toBe('');
  });
});

describe('planProvision', () => {
  it('request, limit, parameters, mount options, secret refs', () => {
    const p = planProvision({
      claim: pvc({ spec: { resources: { requests: { storage: '1Gi' }, limits: { storage: '2Gi' } } } }),
      cls: cls({
        parameters: {
          'csi.storage.k8s.io/fstype': 'ext4',
          'csi.storage.k8s.io/node-stage-secret-name': 'st',
          'csi.storage.k8s.io/node-stage-secret-namespace': '${pvc.namespace}',
          x: 'y',
        },
        mountOptions: ['ro'],
      }),
      pvName: 'pvc-uid-c',
      singleNodeMultiWriter: false,
    });
    expect(p.request.name).toBe('pvc-uid-c');
    expect(p.request.capacityRange).toEqual({ requiredBytes: String(1 << 30), limitBytes: String(2 ** 31) });
    expect(p.request.parameters).toEqual({ x: 'y' });
    expect(p.request.volumeCapabilities?.[0]?.mount).toEqual({ fsType: 'ext4', mountFlags: ['ro'] });
    expect(p.refs).toEqual({ nodeStage: { name: 'st', namespace: 'ns' } });
    const pv = buildPv({
      claim: pvc(),
      cls: cls({ reclaimPolicy: 'Retain' }),
      driver: D,
      plan: p,
      pvName: 'pvc-uid-c',
      volume: {
        volumeId: 'v1',
        capacityBytes: 0,
        volumeContext: { a: 'b' },
        contentSource: null,
        accessibleTopology: [],
      },
    });
    expect(pv.spec?.capacity?.storage).toBe('1Gi'); // 0 from the driver = the request
    expect(pv.spec?.csi).toEqual({
      driver: D,
      volumeHandle: 'v1',
      volumeAttributes: { a: 'b' },
      fsType: 'ext4',
      nodeStageSecretRef: { name: 'st', namespace: 'ns' },
    });
    expect(pv.spec?.persistentVolumeReclaimPolicy).toBe('Retain');
    expect(pv.spec?.nodeAffinity).toBeUndefined();
    expect(() =>
      buildPv({
        claim: pvc(),
        cls: cls(),
        driver: D,
        plan: p,
        pvName: 'x',
        volume: { volumeId: 'v1', capacityBytes: 1000, volumeContext: {}, contentSource: null, accessibleTopology: [] },
      }),
    ).toThrow(/less than requested/);
  });
});

it('extra create metadata names the claim and the PV', () => {
  const p = planProvision({
    claim: pvc(),
    cls: cls({ parameters: { a: '1' } }),
    pvName: 'pvc-x',
    singleNodeMultiWriter: false,
    extraCreateMetadata: true,
  });
  expect(p.request.parameters).toEqual({
    a: '1',
    'csi.storage.k8s.io/pvc/name': 'c',
    'csi.storage.k8s.io/pvc/namespace': 'ns',
    'csi.storage.k8s.io/pv/name': 'pvc-x',
  });
});

describe('cloneSource', () => {
  const srcPv: PersistentVolume = { metadata: { name: 'pv-src' }, spec: { csi: { driver: D, volumeHandle: 'h-src' } } };
  const bound = pvc({ name: 'src', spec: { volumeName: 'pv-src' }, status: { phase: 'Bound' } });
  const dst = (extra: Partial<NonNullable<PersistentVolumeClaim['spec']>> = {}) =>
    pvc({ name: 'dst', spec: { dataSource: { kind: 'PersistentVolumeClaim', name: 'src' }, ...extra } });
  const look = (c: PersistentVolumeClaim | undefined) => (_ns: string, _n: string) => c;
  it('names the source volume', () => {
    expect(cloneSource(dst(), look(bound), () => srcPv, D)).toEqual({ volume: { volumeId: 'h-src' } });
  });
  it.each([
    { name: 'missing source', c: dst(), src: undefined, msg: /not found/ },
    { name: 'unbound source', c: dst(), src: pvc({ name: 'src' }), msg: /not yet bound/ },
    { name: 'other class', c: dst({ storageClassName: 'slow' }), src: bound, msg: /same storage class/ },
    {
      name: 'smaller',
      c: dst({ resources: { requests: { storage: '1Mi' } } }),
      src: bound,
      msg: /greater than or equal/,
    },
    {
      name: 'snapshot',
      c: pvc({ spec: { dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 's' } } }),
      src: bound,
      msg: /not supported/,
    },
  ])('refuses $name', ({ c, src, msg }) => expect(() => cloneSource(c, look(src), () => srcPv, D)).toThrow(msg));
});

describe('decideVolume', () => {
  const pv = (
    extra: { phase?: string; policy?: string; deleting?: boolean; fins?: string[]; by?: string } = {},
  ): PersistentVolume => ({
    metadata: {
      name: 'p',
      annotations: { 'pv.kubernetes.io/provisioned-by': extra.by ?? D },
      finalizers: extra.fins ?? ['external-provisioner.volume.kubernetes.io/finalizer'],
      ...(extra.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: { persistentVolumeReclaimPolicy: extra.policy ?? 'Delete', csi: { driver: D, volumeHandle: 'h' } },
    status: { phase: extra.phase ?? 'Released' },
  });
  it.each([
    { name: 'Released + Delete', v: pv(), want: 'delete' },
    { name: 'Released + Retain', v: pv({ policy: 'Retain' }), want: 'skip' },
    { name: 'Bound', v: pv({ phase: 'Bound' }), want: 'skip' },
    { name: 'other provisioner', v: pv({ by: 'x' }), want: 'skip' },
    { name: 'deleted by the user, Delete', v: pv({ phase: 'Bound', deleting: true }), want: 'delete' },
    {
      name: 'deleted by the user, Retain',
      v: pv({ phase: 'Bound', policy: 'Retain', deleting: true }),
      want: 'removeFinalizer',
    },
    { name: 'deleted, finalizer already gone', v: pv({ deleting: true, fins: [] }), want: 'skip' },
  ])('$name → $want', ({ v, want }) => expect(decideVolume(v, D).kind).toBe(want));
});

describe('cloneSourceInUse', () => {
  const src = pvc({ name: 'src', spec: { volumeName: 'pv-src' }, status: { phase: 'Bound' } });
  const clone = (extra: Partial<NonNullable<PersistentVolumeClaim['spec']>> = {}) =>
    pvc({ name: 'dst', spec: { dataSource: { kind: 'PersistentVolumeClaim', name: 'src' }, ...extra } });
  it.each([
    { name: 'a pending clone', others: [clone()], want: true },
    { name: 'a bound clone', others: [clone({ volumeName: 'pv2' })], want: false },
    { name: 'no clones', others: [pvc({ name: 'x' })], want: false },
  ])('$name → $want', ({ others, want }) => expect(cloneSourceInUse(src, [src, ...others], D)).toBe(want));
});
