/**
 * The invariants a chaos run checks once the cluster has converged, over one snapshot of the API
 * objects, the driver's own records (state.json, volumes/ and snapshots/ directories), the mount
 * table, the loop devices and the node agent's directories. Each violation is one precise line.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pod, PersistentVolume, PersistentVolumeClaim } from 'kubernetes-types/core/v1.js';
import type { VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import { listLoopDevices } from '../../src/mount/loop.js';
import { mountsUnder } from '../../src/mount/mountinfo.js';
import type { Cluster } from './cluster.js';
import { DRIVER, NODE_NAME } from './cluster.js';

export interface DriverRecords {
  /** Volume id → the fields checked here; undefined when state.json is missing or unreadable. */
  readonly volumes?: Record<
    string,
    {
      readonly name: string;
      readonly attachments: Record<string, unknown>;
      readonly staged: Record<string, unknown>;
      readonly published: Record<string, unknown>;
    }
  >;
  readonly snapshots?: Record<string, unknown>;
  readonly stateError?: string;
  /** Entries of volumes/ and snapshots/ (ids, an extension stripped). */
  readonly volumeEntries: readonly string[];
  readonly snapshotEntries: readonly string[];
  /** Files beside state.json other than it (e.g. temp files of an interrupted save). */
  readonly strayFiles: readonly string[];
}

export interface Snapshot {
  readonly claims: readonly PersistentVolumeClaim[];
  readonly volumes: readonly PersistentVolume[];
  readonly pods: readonly Pod[];
  readonly attachments: readonly VolumeAttachment[];
  readonly driver: DriverRecords;
  /** Mount points under the data dir. */
  readonly mounts: readonly string[];
  /** Loop devices backed by a file under the data dir. */
  readonly loops: readonly string[];
  /** Pod directories under the node root's pods/. */
  readonly podDirs: readonly string[];
  /** Per-volume directories under plugins/kubernetes.io/csi/<driver>/ (staging + vol_data.json). */
  readonly stagingDirs: readonly string[];
  /**
   * The node agent's records (a vol_data.json beside a staging `globalmount` or a pod volume's
   * `mount`), each with whether its mount point is in the mount table.
   */
  readonly nodeRecords: readonly { readonly dir: string; readonly volData: boolean; readonly mounted: boolean }[];
}

const list = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir) : []);

export function readDriverRecords(stateDir: string): DriverRecords {
  let volumes: DriverRecords['volumes'];
  let snapshots: DriverRecords['snapshots'];
  let stateError: string | undefined;
  const stateFile = join(stateDir, 'state.json');
  if (existsSync(stateFile)) {
    try {
      const parsed = JSON.parse(readFileSync(stateFile, 'utf8')) as {
        volumes?: DriverRecords['volumes'];
        snapshots?: DriverRecords['snapshots'];
      };
      volumes = parsed.volumes ?? {};
      snapshots = parsed.snapshots ?? {};
    } catch (e) {
      stateError = `state.json unreadable: ${e instanceof Error ? e.message : String(e)}`;
    }
  } else {
    volumes = {};
    snapshots = {};
  }
  const id = (f: string): string => f.replace(/\.[a-z]+$/, '');
  return {
    ...(volumes ? { volumes } : {}),
    ...(snapshots ? { snapshots } : {}),
    ...(stateError ? { stateError } : {}),
    volumeEntries: list(join(stateDir, 'volumes')).map(id),
    snapshotEntries: list(join(stateDir, 'snapshots')).map(id),
    strayFiles: list(stateDir).filter((f) => f !== 'state.json' && f !== 'volumes' && f !== 'snapshots'),
  };
}

/** Mount points at or below `dir`, deepest first. */
export async function mountPointsUnder(dir: string): Promise<string[]> {
  return (await mountsUnder(dir)).map((m) => m.mountPoint);
}

/** Loop devices whose backing file is under `dir`. */
export async function loopsUnder(dir: string): Promise<string[]> {
  return (await listLoopDevices()).filter((l) => l.backingFile.startsWith(`${dir}/`)).map((l) => l.device);
}

/** What a snapshot reads: the API, and the data dir with the driver's state and the node agent's root under it. */
export type SnapshotSource = Pick<Cluster, 'client' | 'dataDir' | 'nodeRoot' | 'driverStateDir'>;

export async function takeSnapshot(c: SnapshotSource): Promise<Snapshot> {
  const [claims, volumes, pods, attachments] = await Promise.all([
    c.client.resource('PersistentVolumeClaim').list({ namespace: 'default' }),
    c.client.resource('PersistentVolume').list(),
    c.client.resource('Pod').list({ namespace: 'default' }),
    c.client.resource('VolumeAttachment').list(),
  ]);
  const stagingRoot = join(c.nodeRoot, 'plugins', 'kubernetes.io', 'csi', DRIVER);
  const mounts = await mountPointsUnder(c.dataDir);
  const mounted = new Set(mounts);
  const record = (dir: string, mountName: string) => ({
    dir,
    volData: existsSync(join(dir, 'vol_data.json')),
    mounted: mounted.has(join(dir, mountName)),
  });
  const podsRoot = join(c.nodeRoot, 'pods');
  const nodeRecords = [
    ...list(stagingRoot).map((d) => record(join(stagingRoot, d), 'globalmount')),
    ...list(podsRoot).flatMap((uid) => {
      const csiDir = join(podsRoot, uid, 'volumes', 'kubernetes.io~csi');
      return list(csiDir).map((v) => record(join(csiDir, v), 'mount'));
    }),
  ];
  return {
    claims: claims.items,
    volumes: volumes.items,
    pods: pods.items,
    attachments: attachments.items,
    driver: readDriverRecords(c.driverStateDir),
    mounts,
    loops: await loopsUnder(c.dataDir),
    podDirs: list(join(c.nodeRoot, 'pods')),
    stagingDirs: list(stagingRoot).map((d) => join(stagingRoot, d)),
    nodeRecords,
  };
}

/** Invariants of a converged cluster with claims and pods in place. */
export function checkSteady(s: Snapshot, o: { attach: boolean }): string[] {
  const v: string[] = [];
  v.push(...checkDriverRecords(s));
  const pvByName = new Map(s.volumes.map((pv) => [pv.metadata?.name ?? '', pv]));
  const claimsOfPv = new Map<string, string[]>();
  for (const c of s.claims) {
    const key = `default/${c.metadata?.name ?? ''}`;
    if (c.status?.phase !== 'Bound') {
      v.push(`claim ${key} is ${c.status?.phase ?? 'without a phase'}, not Bound`);
      continue;
    }
    const pvName = c.spec?.volumeName ?? '';
    const pv = pvByName.get(pvName);
    if (!pv) v.push(`claim ${key} is Bound to PV "${pvName}", which does not exist`);
    else if (pv.spec?.claimRef?.uid !== c.metadata?.uid)
      v.push(
        `claim ${key} is Bound to PV ${pvName}, whose claimRef names ${pv.spec?.claimRef?.namespace}/${pv.spec?.claimRef?.name} (uid ${pv.spec?.claimRef?.uid})`,
      );
    claimsOfPv.set(pvName, [...(claimsOfPv.get(pvName) ?? []), key]);
  }
  for (const [pv, claims] of claimsOfPv)
    if (claims.length > 1) v.push(`PV ${pv} is bound to ${claims.length} claims: ${claims.join(', ')}`);
  for (const pv of s.volumes) {
    if (pv.status?.phase !== 'Bound')
      v.push(`PV ${pv.metadata?.name} is ${pv.status?.phase}, not Bound (every PV here belongs to a live claim)`);
  }
  // Every pod is Running here: each record of the node agent is a live mount, each mount has its record.
  for (const r of s.nodeRecords) {
    if (!r.volData) v.push(`node: ${r.dir} has no vol_data.json${r.mounted ? ' but is mounted' : ''}`);
    else if (!r.mounted) v.push(`node: ${r.dir}/vol_data.json records a volume that is not mounted`);
  }
  const hostPaths = (p: Pod): Record<string, string> => {
    try {
      return JSON.parse(p.metadata?.annotations?.['volumes.stowage.io/host-paths'] ?? '{}') as Record<string, string>;
    } catch {
      return {};
    }
  };
  const mounted = new Set(s.mounts);
  for (const p of s.pods) {
    const key = `default/${p.metadata?.name ?? ''}`;
    if (p.status?.phase !== 'Running') {
      v.push(`pod ${key} is ${p.status?.phase ?? 'without a phase'}, not Running`);
      continue;
    }
    const paths = hostPaths(p);
    for (const vol of p.spec?.volumes ?? []) {
      if (!vol.persistentVolumeClaim) continue;
      const path = paths[vol.name];
      if (!path) v.push(`pod ${key} is Running without a host path for volume ${vol.name}`);
      else if (!mounted.has(path)) v.push(`pod ${key} is Running but its volume ${vol.name} is not mounted at ${path}`);
      if (o.attach) {
        const claim = s.claims.find((c) => c.metadata?.name === vol.persistentVolumeClaim?.claimName);
        const pvName = claim?.spec?.volumeName ?? '';
        const va = s.attachments.find(
          (a) => a.spec?.source?.persistentVolumeName === pvName && a.spec?.nodeName === NODE_NAME,
        );
        if (!va?.status?.attached) v.push(`pod ${key} is Running but PV ${pvName} has no attached VolumeAttachment`);
        const handle = pvByName.get(pvName)?.spec?.csi?.volumeHandle ?? '';
        if (s.driver.volumes && !s.driver.volumes[handle]?.attachments?.[NODE_NAME])
          v.push(
            `pod ${key} is Running but the driver has no ControllerPublish record of volume ${handle} on ${NODE_NAME}`,
          );
      }
    }
  }
  return v;
}

/** Invariants after every pod and claim was deleted: nothing is left anywhere. */
export function checkEmpty(s: Snapshot): string[] {
  const v: string[] = [];
  v.push(...checkDriverRecords(s));
  for (const c of s.claims) v.push(`claim default/${c.metadata?.name} still exists (${c.status?.phase})`);
  for (const pv of s.volumes)
    v.push(
      `PV ${pv.metadata?.name} still exists (${pv.status?.phase}, finalizers ${JSON.stringify(pv.metadata?.finalizers ?? [])})`,
    );
  for (const p of s.pods) v.push(`pod default/${p.metadata?.name} still exists (${p.status?.phase})`);
  for (const a of s.attachments)
    v.push(`VolumeAttachment ${a.metadata?.name} still exists (attached ${a.status?.attached})`);
  for (const [id, rec] of Object.entries(s.driver.volumes ?? {}))
    v.push(`driver still has volume ${id} (${rec.name}) in state.json`);
  for (const id of Object.keys(s.driver.snapshots ?? {})) v.push(`driver still has snapshot ${id} in state.json`);
  for (const m of s.mounts) v.push(`still mounted: ${m}`);
  for (const l of s.loops) v.push(`loop device ${l} still backed by a file under the data dir`);
  for (const d of s.podDirs) v.push(`pod directory left: pods/${d}`);
  for (const d of s.stagingDirs) v.push(`staging directory left: ${d}`);
  return v;
}

/** The driver's records agree with themselves and with the PVs: one driver volume per PV, no orphan either way. */
function checkDriverRecords(s: Snapshot): string[] {
  const v: string[] = [];
  const d = s.driver;
  if (d.stateError) v.push(`driver: ${d.stateError}`);
  for (const f of d.strayFiles) v.push(`driver: stray file beside state.json: ${f}`);
  if (!d.volumes) return v;
  const recorded = new Set(Object.keys(d.volumes));
  for (const e of d.volumeEntries)
    if (!recorded.has(e))
      v.push(
        `driver: orphan volume data volumes/${e}: no record in state.json${pvWithHandle(s, e) ? '' : ' and no PV'}`,
      );
  const onDisk = new Set(d.volumeEntries);
  for (const id of recorded)
    if (!onDisk.has(id)) v.push(`driver: volume ${id} is in state.json but its data is missing`);
  const snaps = new Set(Object.keys(d.snapshots ?? {}));
  for (const e of d.snapshotEntries) if (!snaps.has(e)) v.push(`driver: orphan snapshot data snapshots/${e}`);
  const handles = new Map<string, string[]>();
  for (const pv of s.volumes) {
    if (pv.spec?.csi?.driver !== DRIVER) continue;
    const h = pv.spec.csi.volumeHandle;
    handles.set(h, [...(handles.get(h) ?? []), pv.metadata?.name ?? '']);
    if (!recorded.has(h)) v.push(`PV ${pv.metadata?.name} names driver volume ${h}, which the driver does not have`);
  }
  for (const [h, pvs] of handles)
    if (pvs.length > 1) v.push(`driver volume ${h} backs ${pvs.length} PVs: ${pvs.join(', ')}`);
  for (const [id, rec] of Object.entries(d.volumes))
    if (!handles.has(id)) v.push(`driver: orphan volume ${id} (${rec.name}): no PV names it`);
  return v;
}

const pvWithHandle = (s: Snapshot, h: string): boolean => s.volumes.some((pv) => pv.spec?.csi?.volumeHandle === h);
