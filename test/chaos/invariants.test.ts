/** The chaos invariants catch what they claim to: each case breaks one rule of a clean snapshot. */
import type { PersistentVolume, PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import { describe, expect, it } from 'vitest';
import { checkEmpty, checkSteady, type Snapshot } from '../../bench/chaos/invariants.js';

const DRIVER = 'hostpath.csi.stowage.io';
const claim = (n: string, pv: string, uid = `u-${n}`): PersistentVolumeClaim => ({
  metadata: { name: n, namespace: 'default', uid },
  spec: { volumeName: pv },
  status: { phase: 'Bound' },
});
const pv = (n: string, claimUid: string, handle: string): PersistentVolume => ({
  metadata: { name: n },
  spec: { claimRef: { namespace: 'default', name: n, uid: claimUid }, csi: { driver: DRIVER, volumeHandle: handle } },
  status: { phase: 'Bound' },
});
const pod = (n: string, claimName: string, hostPath: string): Pod => ({
  metadata: {
    name: n,
    namespace: 'default',
    annotations: { 'volumes.stowage.io/host-paths': JSON.stringify({ data: hostPath }) },
  },
  spec: { containers: [], volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }] },
  status: { phase: 'Running' },
});
const driverVolume = (name: string) => ({ name, attachments: {}, staged: {}, published: {} });

const clean = (): Snapshot => ({
  claims: [claim('a', 'pv-a')],
  volumes: [pv('pv-a', 'u-a', 'v1')],
  pods: [pod('a', 'a', '/d/pods/1/volumes/kubernetes.io~csi/pv-a/mount')],
  attachments: [],
  driver: {
    volumes: { v1: driverVolume('pv-a') },
    snapshots: {},
    volumeEntries: ['v1'],
    snapshotEntries: [],
    strayFiles: [],
  },
  mounts: ['/d/pods/1/volumes/kubernetes.io~csi/pv-a/mount', '/d/staging/x/globalmount'],
  loops: [],
  podDirs: ['1'],
  stagingDirs: ['/d/staging/x'],
  nodeRecords: [
    { dir: '/d/staging/x', volData: true, mounted: true },
    { dir: '/d/pods/1/volumes/kubernetes.io~csi/pv-a', volData: true, mounted: true },
  ],
});

describe('chaos invariants', () => {
  it('a clean converged cluster has no violation', () => {
    expect(checkSteady(clean(), { attach: false })).toEqual([]);
  });

  it.each<{ name: string; change: (s: Snapshot) => Snapshot; want: RegExp }>([
    {
      name: 'claim not Bound',
      change: (s) => ({ ...s, claims: [{ ...s.claims[0]!, status: { phase: 'Pending' } }] }),
      want: /claim default\/a is Pending, not Bound/,
    },
    {
      name: 'two claims on one PV',
      change: (s) => ({ ...s, claims: [...s.claims, claim('b', 'pv-a')] }),
      want: /PV pv-a is bound to 2 claims/,
    },
    {
      name: 'PV without its driver volume',
      change: (s) => ({ ...s, driver: { ...s.driver, volumes: {}, volumeEntries: [] } }),
      want: /names driver volume v1, which the driver does not have/,
    },
    {
      name: 'orphan driver volume',
      change: (s) => ({
        ...s,
        driver: { ...s.driver, volumes: { ...s.driver.volumes, v2: driverVolume('x') }, volumeEntries: ['v1', 'v2'] },
      }),
      want: /orphan volume v2 \(x\): no PV names it/,
    },
    {
      name: 'orphan volume directory',
      change: (s) => ({ ...s, driver: { ...s.driver, volumeEntries: ['v1', 'v9'] } }),
      want: /orphan volume data volumes\/v9: no record in state.json and no PV/,
    },
    {
      name: 'temp file of an interrupted save',
      change: (s) => ({ ...s, driver: { ...s.driver, strayFiles: ['state.json.tmp-42'] } }),
      want: /stray file beside state.json: state.json.tmp-42/,
    },
    {
      name: 'Running pod without its mount',
      change: (s) => ({ ...s, mounts: ['/d/staging/x/globalmount'] }),
      want: /pod default\/a is Running but its volume data is not mounted/,
    },
    {
      name: 'vol_data.json without its mount',
      change: (s) => ({ ...s, nodeRecords: [{ dir: '/d/staging/x', volData: true, mounted: false }] }),
      want: /vol_data.json records a volume that is not mounted/,
    },
    {
      name: 'mount without vol_data.json',
      change: (s) => ({ ...s, nodeRecords: [{ dir: '/d/staging/x', volData: false, mounted: true }] }),
      want: /has no vol_data.json but is mounted/,
    },
  ])('$name', ({ change, want }) => {
    expect(checkSteady(change(clean()), { attach: false }).join('\n')).toMatch(want);
  });

  it("attach: a Running pod needs an attached VolumeAttachment and the driver's publish record", () => {
    expect(checkSteady(clean(), { attach: true })).toEqual([
      'pod default/a is Running but PV pv-a has no attached VolumeAttachment',
      'pod default/a is Running but the driver has no ControllerPublish record of volume v1 on chaos',
    ]);
  });

  it('after teardown everything left anywhere is named', () => {
    const empty: Snapshot = {
      claims: [],
      volumes: [],
      pods: [],
      attachments: [],
      driver: { volumes: {}, snapshots: {}, volumeEntries: [], snapshotEntries: [], strayFiles: [] },
      mounts: [],
      loops: [],
      podDirs: [],
      stagingDirs: [],
      nodeRecords: [],
    };
    expect(checkEmpty(empty)).toEqual([]);
    expect(
      checkEmpty({
        ...empty,
        mounts: ['/d/m'],
        loops: ['/dev/loop7'],
        podDirs: ['1'],
        stagingDirs: ['/d/s'],
        driver: { ...empty.driver, volumeEntries: ['v3'] },
      }),
    ).toEqual([
      'driver: orphan volume data volumes/v3: no record in state.json and no PV',
      'still mounted: /d/m',
      'loop device /dev/loop7 still backed by a file under the data dir',
      'pod directory left: pods/1',
      'staging directory left: /d/s',
    ]);
  });
});
