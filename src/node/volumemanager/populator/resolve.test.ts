import type { PersistentVolume, PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import { describe, expect, it } from 'vitest';
import { csiAccessMode, podIsTerminating, resolvePodVolumes, type PopulatorLookups } from './resolve.js';

const claim = (
  name: string,
  o: { bound?: string; capacity?: string; deleting?: boolean } = {},
): PersistentVolumeClaim => ({
  metadata: {
    name,
    namespace: 'ns',
    uid: `uid-${name}`,
    ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
  },
  spec: { volumeName: o.bound },
  status: o.bound ? { phase: 'Bound', capacity: { storage: o.capacity ?? '1Gi' } } : { phase: 'Pending' },
});
const pv = (name: string, o: { csi?: boolean; capacity?: string; claimUid?: string } = {}): PersistentVolume => ({
  metadata: { name },
  spec: {
    capacity: { storage: o.capacity ?? '1Gi' },
    accessModes: ['ReadWriteOnce'],
    claimRef: { namespace: 'ns', name: 'c', uid: o.claimUid ?? 'uid-c' },
    mountOptions: ['noatime'],
    ...(o.csi === false
      ? { nfs: { server: 's', path: '/p' } }
      : { csi: { driver: 'd.example', volumeHandle: 'h1', fsType: 'ext4', volumeAttributes: { a: 'b' } } }),
  },
});
const lookups = (
  claims: PersistentVolumeClaim[],
  pvs: PersistentVolume[],
  attachRequired?: boolean,
): PopulatorLookups => ({
  claim: (ns, n) => claims.find((c) => c.metadata?.namespace === ns && c.metadata?.name === n),
  volume: (n) => pvs.find((p) => p.metadata?.name === n),
  configMap: () => undefined,
  secret: () => undefined,
  csiDriver: (n) => (attachRequired === undefined ? undefined : { metadata: { name: n }, spec: { attachRequired } }),
});
const pod = (volumes: NonNullable<Pod['spec']>['volumes']): Pod => ({
  metadata: { name: 'p', namespace: 'ns', uid: 'pod-uid' },
  spec: {
    containers: [
      {
        name: 'app',
        volumeMounts: [
          { name: 'data', mountPath: '/d' },
          { name: 'data', mountPath: '/s', subPath: 'x/y' },
        ],
      },
    ],
    volumes,
  },
});

describe('resolvePodVolumes', () => {
  it.each([
    { name: 'missing claim', c: [], p: [], problem: 'persistentvolumeclaim "c" not found' },
    { name: 'unbound claim', c: [claim('c')], p: [], problem: 'PVC is not bound' },
    {
      name: 'claim being deleted',
      c: [claim('c', { bound: 'pv1', deleting: true })],
      p: [pv('pv1')],
      problem: 'PVC is being deleted',
    },
    { name: 'PV missing', c: [claim('c', { bound: 'pv1' })], p: [], problem: 'persistentvolume "pv1" not found' },
    {
      name: 'PV bound elsewhere',
      c: [claim('c', { bound: 'pv1' })],
      p: [pv('pv1', { claimUid: 'other' })],
      problem: 'bound to another claim',
    },
    {
      name: 'PV not CSI',
      c: [claim('c', { bound: 'pv1' })],
      p: [pv('pv1', { csi: false })],
      problem: 'unsupported source (nfs)',
    },
  ])('$name → a problem, no volume', ({ c, p, problem }) => {
    const r = resolvePodVolumes(pod([{ name: 'data', persistentVolumeClaim: { claimName: 'c' } }]), lookups(c, p));
    expect(r.volumes).toEqual([]);
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0]?.message).toContain(problem);
  });

  describe('generic ephemeral volume: its claim <pod>-<volume>, which the pod must control', () => {
    const ephemeral = pod([
      { name: 'data', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'] } } } },
    ]);
    const owned = (controllerUid: string): PersistentVolumeClaim => {
      const c = claim('p-data', { bound: 'pv1' });
      c.metadata!.ownerReferences = [
        { apiVersion: 'v1', kind: 'Pod', name: 'p', uid: controllerUid, controller: true },
      ];
      return c;
    };
    const volume = (): PersistentVolume => {
      const v = pv('pv1');
      v.spec!.claimRef = { namespace: 'ns', name: 'p-data', uid: 'uid-p-data' };
      return v;
    };
    it('a claim the pod controls is mounted as the claim', () => {
      const r = resolvePodVolumes(ephemeral, lookups([owned('pod-uid')], [volume()]));
      expect(r.problems).toEqual([]);
      expect(r.volumes[0]?.spec.claim).toEqual({ namespace: 'ns', name: 'p-data' });
    });
    it('a claim of that name the pod does not control is refused, naming it', () => {
      const r = resolvePodVolumes(ephemeral, lookups([owned('someone-else')], [volume()]));
      expect(r.volumes).toEqual([]);
      expect(r.problems.map((p) => p.message)).toEqual([
        'PVC ns/p-data was not created for pod ns/p (pod is not owner)',
      ]);
    });
    it('no claim yet → waits for it', () => {
      expect(resolvePodVolumes(ephemeral, lookups([], [])).problems[0]?.message).toContain(
        'persistentvolumeclaim "p-data" not found',
      );
    });
  });

  it('bound claim → the CSI unique name, spec, subPaths and attachability', () => {
    const r = resolvePodVolumes(
      pod([{ name: 'data', persistentVolumeClaim: { claimName: 'c', readOnly: true } }]),
      lookups([claim('c', { bound: 'pv1' })], [pv('pv1')], false),
    );
    expect(r.problems).toEqual([]);
    expect(r.volumes).toHaveLength(1);
    const v = r.volumes[0]!;
    expect(v.volume).toBe('kubernetes.io/csi/d.example^h1');
    expect(v.pluginIsAttachable).toBe(false);
    expect(v.resizeNeeded).toBe(false);
    expect(v.subPaths).toEqual([{ container: 'app', index: 1, subPath: 'x/y', readOnly: false }]);
    expect(v.spec).toMatchObject({
      specName: 'pv1',
      readOnly: true,
      mode: 'Filesystem',
      claim: { namespace: 'ns', name: 'c' },
    });
    expect(v.spec.csi).toEqual({
      driver: 'd.example',
      volumeHandle: 'h1',
      fsType: 'ext4',
      mountOptions: ['noatime'],
      volumeAttributes: { a: 'b' },
      accessMode: 'SINGLE_NODE_WRITER',
    });
  });

  it('no CSIDriver object → attachable (kubelet default); PV larger than the claim → resize needed', () => {
    const r = resolvePodVolumes(
      pod([{ name: 'data', persistentVolumeClaim: { claimName: 'c' } }]),
      lookups([claim('c', { bound: 'pv1', capacity: '1Gi' })], [pv('pv1', { capacity: '2Gi' })]),
    );
    expect(r.volumes[0]?.pluginIsAttachable).toBe(true);
    expect(r.volumes[0]?.resizeNeeded).toBe(true);
  });

  it.each([
    { name: 'emptyDir', v: { name: 'data', emptyDir: {} }, want: 'kubernetes.io/empty-dir/pod-uid-data' },
    { name: 'hostPath', v: { name: 'data', hostPath: { path: '/srv' } }, want: 'kubernetes.io/host-path/pod-uid-data' },
  ])('$name → a per-pod volume', ({ v, want }) => {
    expect(resolvePodVolumes(pod([v]), lookups([], [])).volumes.map((x) => x.volume)).toEqual([want]);
  });

  it('an unsupported source is named in the problem', () => {
    const r = resolvePodVolumes(pod([{ name: 'g', gitRepo: { repository: 'x' } }]), lookups([], []));
    expect(r.problems[0]?.message).toMatch(/volume "g" has an unsupported source \(gitRepo\)/);
  });

  it.each([
    {
      name: 'configMap',
      v: { name: 'cfg', configMap: { name: 'x' } },
      want: 'MountVolume.SetUp failed for volume "cfg" : configmap "x" not found',
    },
    {
      name: 'secret',
      v: { name: 's', secret: { secretName: 'x' } },
      want: 'MountVolume.SetUp failed for volume "s" : secret "x" not found',
    },
    {
      name: 'csi inline, no CSIDriver',
      v: { name: 'e', csi: { driver: 'd.example' } },
      want: 'MountVolume.SetUp failed for volume "e" : volume mode "Ephemeral" not supported by driver d.example (no CSIDriver object)',
    },
    {
      name: 'hostPath bad type',
      v: { name: 'h', hostPath: { path: '/x', type: 'Dir' } },
      want: 'MountVolume.SetUp failed for volume "h" : invalid HostPath type "Dir"',
    },
    {
      name: 'hostPath with ..',
      v: { name: 'h', hostPath: { path: '/x/../etc' } },
      want: 'MountVolume.SetUp failed for volume "h" : hostPath /x/../etc must not contain \'..\'',
    },
  ])('$name refused with the kubelet message', ({ v, want }) => {
    expect(resolvePodVolumes(pod([v]), lookups([], [])).problems.map((p) => p.message)).toEqual([want]);
  });

  it('an inline csi volume of a driver without the Ephemeral mode names its modes', () => {
    const l = {
      ...lookups([], []),
      csiDriver: (n: string) => ({ metadata: { name: n }, spec: { volumeLifecycleModes: ['Persistent'] } }),
    };
    expect(resolvePodVolumes(pod([{ name: 'e', csi: { driver: 'd.example' } }]), l).problems[0]?.message).toBe(
      'MountVolume.SetUp failed for volume "e" : volume mode "Ephemeral" not supported by driver d.example (only supports ["Persistent"])',
    );
    const ok = {
      ...lookups([], []),
      csiDriver: (n: string) => ({
        metadata: { name: n },
        spec: { volumeLifecycleModes: ['Persistent', 'Ephemeral'] },
      }),
    };
    const v = resolvePodVolumes(pod([{ name: 'e', csi: { driver: 'd.example' } }]), ok).volumes[0];
    expect(v?.spec).toMatchObject({
      ephemeral: true,
      csi: { volumeHandle: expect.stringMatching(/^csi-[0-9a-f]{64}$/) },
    });
  });

  it.each([
    {
      name: 'hostPath PV',
      spec: { hostPath: { path: '/mnt/data', type: 'DirectoryOrCreate' } },
      plugin: 'kubernetes.io/host-path',
      volume: 'kubernetes.io/host-path/pod-uid-pv1',
    },
    {
      name: 'local PV',
      spec: { local: { path: '/mnt/disks/a' } },
      plugin: 'kubernetes.io/local-volume',
      volume: 'kubernetes.io/local-volume/pv1',
    },
  ])('a claim bound to a $name resolves to its plugin', ({ spec, plugin, volume }) => {
    const p: PersistentVolume = {
      metadata: { name: 'pv1' },
      spec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteOnce'],
        claimRef: { namespace: 'ns', name: 'c', uid: 'uid-c' },
        ...spec,
      },
    };
    const r = resolvePodVolumes(
      pod([{ name: 'data', persistentVolumeClaim: { claimName: 'c' } }]),
      lookups([claim('c', { bound: 'pv1' })], [p]),
    );
    expect(r.problems).toEqual([]);
    expect(r.volumes[0]).toMatchObject({
      volume,
      outerSpecName: 'data',
      spec: { plugin, specName: 'pv1', hostPath: Object.values(spec)[0]!.path },
    });
  });

  it('projected: configMap, secret and downwardAPI sources in one tmpfs volume at defaultMode; a token source is refused', () => {
    const l = {
      ...lookups([], []),
      configMap: () => ({ metadata: { name: 'cm' }, data: { a: '1' } }),
      secret: () => ({ metadata: { name: 's' }, data: { b: Buffer.from('2').toString('base64') } }),
    };
    const v = {
      name: 'all',
      projected: {
        defaultMode: 0o440,
        sources: [
          { configMap: { name: 'cm' } },
          { secret: { name: 's', items: [{ key: 'b', path: 'sec/b', mode: 0o400 }] } },
          { downwardAPI: { items: [{ path: 'ns', fieldRef: { fieldPath: 'metadata.namespace' } }] } },
        ],
      },
    };
    const spec = resolvePodVolumes(pod([v]), l).volumes[0]?.spec;
    expect(spec?.plugin).toBe('kubernetes.io/projected');
    expect(spec?.payload?.tmpfs).toBe(true);
    expect(spec?.payload?.files.map((f) => [f.path, f.data.toString(), f.mode.toString(8)])).toEqual([
      ['a', '1', '440'],
      ['sec/b', '2', '400'],
      ['ns', 'ns', '440'],
    ]);
    const token = { name: 'tok', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } };
    expect(resolvePodVolumes(pod([token]), l).problems[0]?.message).toMatch(
      /^MountVolume.SetUp failed for volume "tok" : projected source serviceAccountToken is not supported/,
    );
  });

  it('configMap items become files at their paths and modes; the digest follows the content', () => {
    const cm = { metadata: { name: 'x', namespace: 'ns' }, data: { a: '1', b: '2' } };
    const l = { ...lookups([], []), configMap: () => cm };
    const v = {
      name: 'cfg',
      configMap: {
        name: 'x',
        defaultMode: 0o600,
        items: [
          { key: 'a', path: 'dir/a.conf' },
          { key: 'b', path: 'b', mode: 0o400 },
        ],
      },
    };
    const spec = resolvePodVolumes(pod([v]), l).volumes[0]?.spec;
    expect(spec?.payload?.files.map((f) => [f.path, f.data.toString(), f.mode.toString(8)])).toEqual([
      ['dir/a.conf', '1', '600'],
      ['b', '2', '400'],
    ]);
    expect(spec?.payload?.tmpfs).toBe(false);
    const changed = { ...lookups([], []), configMap: () => ({ ...cm, data: { a: '1', b: '3' } }) };
    expect(resolvePodVolumes(pod([v]), changed).volumes[0]?.spec.payload?.digest).not.toBe(spec?.payload?.digest);
  });
});

describe('helpers', () => {
  it.each([
    { modes: ['ReadWriteOncePod'], want: 'SINGLE_NODE_SINGLE_WRITER' },
    { modes: ['ReadWriteOnce', 'ReadOnlyMany'], want: 'SINGLE_NODE_WRITER' },
    { modes: ['ReadWriteMany'], want: 'MULTI_NODE_MULTI_WRITER' },
    { modes: ['ReadOnlyMany'], want: 'MULTI_NODE_READER_ONLY' },
  ])('access modes $modes → $want', ({ modes, want }) => expect(csiAccessMode(modes)).toBe(want));

  it.each([
    { p: { metadata: { deletionTimestamp: 'x' } }, want: true },
    { p: { status: { phase: 'Succeeded' } }, want: true },
    { p: { status: { phase: 'Running' } }, want: false },
  ])('terminating $p → $want', ({ p, want }) => expect(podIsTerminating(p as Pod)).toBe(want));
});
