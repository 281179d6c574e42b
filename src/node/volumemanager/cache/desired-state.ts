import type { PodRef, PodUid, SubPathMount, VolumeName, VolumeSpec } from '../types.js';

/** One (volume, pod) pair the node should have mounted. Never mutated: a change stores a new object. */
export interface VolumeToMount {
  readonly volume: VolumeName;
  readonly pod: PodRef;
  /** The pod's name for the volume (`spec.volumes[].name`). */
  readonly outerSpecName: string;
  readonly spec: VolumeSpec;
  /** The CSIDriver says attachRequired (or no CSIDriver exists): wait for a VolumeAttachment. */
  readonly pluginIsAttachable: boolean;
  /** The volume is listed in node.status.volumesInUse (needed before an attachable volume is verified). */
  readonly reportedInUse: boolean;
  readonly subPaths: readonly SubPathMount[];
  /** pod.spec.securityContext.fsGroup: the volume's group after SetUp (volumes that support ownership). */
  readonly fsGroup?: number;
  /** pod.spec.securityContext.fsGroupChangePolicy (unset = Always). */
  readonly fsGroupChangePolicy?: 'Always' | 'OnRootMismatch';
  /** pod.spec.serviceAccountName: part of the pod info a podInfoOnMount driver gets. */
  readonly serviceAccountName?: string;
}

export interface PodVolumeInput {
  readonly pod: PodRef;
  readonly volume: VolumeName;
  readonly outerSpecName: string;
  readonly spec: VolumeSpec;
  readonly pluginIsAttachable: boolean;
  readonly subPaths?: readonly SubPathMount[];
  readonly fsGroup?: number;
  readonly fsGroupChangePolicy?: 'Always' | 'OnRootMismatch';
  readonly serviceAccountName?: string;
}

/**
 * Volumes this node should mount and the pods needing them. Written only by the populator; read
 * by the reconciler, the node-status reporter and pod status. Synchronous: each call is atomic.
 */
export interface DesiredStateOfWorld {
  /** Idempotent: re-adding a (pod, volume) refreshes its spec; reportedInUse is kept. */
  addPodToVolume(i: PodVolumeInput): void;
  /** No-op when absent. The volume leaves when its last pod leaves. */
  deletePodFromVolume(pod: PodUid, volume: VolumeName): void;
  /** Removes every volume entry of the pod. No-op when absent. */
  deletePod(pod: PodUid): void;
  /** Marks the named volumes reported in node.status.volumesInUse, and all others not. */
  markVolumesReportedInUse(names: readonly VolumeName[]): void;
  /** Every (volume, pod) pair, fresh array. */
  volumesToMount(): VolumeToMount[];
  /** Distinct volume names, sorted. */
  volumeNames(): VolumeName[];
  /** Changes whenever a volume joins or leaves (cheap to compare before asking for volumeNames). */
  volumeSetGeneration(): number;
  /** The volumes wanted by one pod. */
  volumesForPod(pod: PodUid): VolumeToMount[];
  podExists(pod: PodUid): boolean;
  volumeExists(volume: VolumeName): boolean;
  podVolumeExists(pod: PodUid, volume: VolumeName): boolean;
  pods(): PodUid[];
}

export function newDesiredStateOfWorld(): DesiredStateOfWorld {
  return new Dsw();
}

interface VolumeEntry {
  reportedInUse: boolean;
  /** Handed out as they are (getters allocate no copies: the reconciler reads every pair on every pass). */
  readonly pods: Map<PodUid, VolumeToMount>;
}

class Dsw implements DesiredStateOfWorld {
  private readonly volumes = new Map<VolumeName, VolumeEntry>();
  private generation = 0;
  /** pod → its volumes: keeps per-pod reads O(volumes of the pod), the populator asks for every pod on every pass. */
  private readonly byPod = new Map<PodUid, Set<VolumeName>>();

  addPodToVolume(i: PodVolumeInput): void {
    let v = this.volumes.get(i.volume);
    if (!v) {
      this.volumes.set(i.volume, (v = { reportedInUse: false, pods: new Map() }));
      this.generation++;
    }
    v.pods.set(i.pod.uid, {
      volume: i.volume,
      pod: { ...i.pod },
      outerSpecName: i.outerSpecName,
      spec: i.spec,
      pluginIsAttachable: i.pluginIsAttachable,
      reportedInUse: v.reportedInUse,
      subPaths: [...(i.subPaths ?? [])],
      ...(i.fsGroup !== undefined ? { fsGroup: i.fsGroup } : {}),
      ...(i.fsGroupChangePolicy !== undefined ? { fsGroupChangePolicy: i.fsGroupChangePolicy } : {}),
      ...(i.serviceAccountName !== undefined ? { serviceAccountName: i.serviceAccountName } : {}),
    });
    let s = this.byPod.get(i.pod.uid);
    if (!s) this.byPod.set(i.pod.uid, (s = new Set()));
    s.add(i.volume);
  }

  deletePodFromVolume(pod: PodUid, volume: VolumeName): void {
    const v = this.volumes.get(volume);
    if (!v) return;
    v.pods.delete(pod);
    if (v.pods.size === 0) {
      this.volumes.delete(volume);
      this.generation++;
    }
    const s = this.byPod.get(pod);
    s?.delete(volume);
    if (s?.size === 0) this.byPod.delete(pod);
  }

  deletePod(pod: PodUid): void {
    for (const name of [...(this.byPod.get(pod) ?? [])]) this.deletePodFromVolume(pod, name);
  }

  markVolumesReportedInUse(names: readonly VolumeName[]): void {
    const set = new Set(names);
    for (const [name, v] of this.volumes) {
      const reported = set.has(name);
      if (v.reportedInUse === reported) continue;
      v.reportedInUse = reported;
      for (const [uid, p] of v.pods) v.pods.set(uid, { ...p, reportedInUse: reported });
    }
  }

  volumesToMount(): VolumeToMount[] {
    const out: VolumeToMount[] = [];
    for (const v of this.volumes.values()) for (const p of v.pods.values()) out.push(p);
    return out;
  }

  volumeNames(): VolumeName[] {
    return [...this.volumes.keys()].sort();
  }

  volumeSetGeneration(): number {
    return this.generation;
  }

  volumesForPod(pod: PodUid): VolumeToMount[] {
    const out: VolumeToMount[] = [];
    for (const name of this.byPod.get(pod) ?? []) {
      const v = this.volumes.get(name);
      const p = v?.pods.get(pod);
      if (p) out.push(p);
    }
    return out;
  }

  podExists(pod: PodUid): boolean {
    return this.byPod.has(pod);
  }

  volumeExists(volume: VolumeName): boolean {
    return this.volumes.has(volume);
  }

  podVolumeExists(pod: PodUid, volume: VolumeName): boolean {
    return this.volumes.get(volume)?.pods.has(pod) ?? false;
  }

  pods(): PodUid[] {
    return [...this.byPod.keys()];
  }
}
