import type { PodRef, PodUid, VolumeName, VolumeSpec } from '../types.js';

/**
 * Mount states. `Uncertain`: an operation may have half-happened (a timeout, or state reconstructed
 * after a restart without proof): the volume must be neither assumed mounted nor assumed clean, so
 * it is mounted again (idempotent) when wanted and unmounted when not.
 */
export const MOUNT_STATES = ['Mounted', 'Uncertain'] as const;
export type MountState = (typeof MOUNT_STATES)[number];
export type DeviceMountState = MountState | 'Unmounted';

export interface MountedPod {
  readonly volume: VolumeName;
  readonly pod: PodRef;
  readonly outerSpecName: string;
  readonly spec: VolumeSpec;
  readonly state: MountState;
  /** Host path of the pod's view (the publish target, emptyDir dir, hostPath path or block symlink). */
  readonly hostPath: string;
  readonly remountRequired: boolean;
  readonly resizeRequired: boolean;
}

export interface AttachedVolume {
  readonly volume: VolumeName;
  readonly spec: VolumeSpec;
  readonly devicePath: string;
  readonly deviceMountPath: string;
  readonly deviceState: DeviceMountState;
  /** Pods with the volume mounted (any state), fresh array. */
  readonly pods: readonly MountedPod[];
}

/** What the reconciler needs to know about one (volume, pod) pair. */
export type PodVolumeStatus =
  | { readonly kind: 'notAttached' }
  | { readonly kind: 'attached'; readonly deviceState: DeviceMountState }
  | {
      readonly kind: 'mounted';
      readonly deviceState: DeviceMountState;
      readonly state: MountState;
      readonly remountRequired: boolean;
      readonly resizeRequired: boolean;
    };

/**
 * What this node has actually attached, staged and published. Written by operations (on success
 * or uncertain outcome) and by reconstruction; read by the reconciler and pod status. Synchronous.
 */
export interface ActualStateOfWorld {
  /** Idempotent; keeps the device state and pods of an already attached volume. */
  markVolumeAttached(volume: VolumeName, spec: VolumeSpec, devicePath: string): void;
  /** Removes the volume. Refused (returns false) while pods are mounted or the device is not Unmounted. */
  markVolumeDetached(volume: VolumeName): boolean;
  /**
   * Records a device mount (staging) that happened or may have. Never refused: when the volume is
   * no longer (or not yet) attached here — its pod went away while NodeStage ran — the volume is
   * recorded anyway with the device `Uncertain` (the kubelet's rule), so that the reconciler finds
   * it and unstages it when no pod wants it, or stages it again (idempotent) when one does.
   */
  markDeviceMounted(volume: VolumeName, spec: VolumeSpec, deviceMountPath: string, state: MountState): void;
  /** No-op when not attached. */
  markDeviceUnmounted(volume: VolumeName): void;
  /**
   * Re-marking replaces state and clears remount/resize flags. Never refused: a pod mount of a
   * volume not attached here is recorded with the device `Uncertain`, so that it is torn down.
   */
  markVolumeMounted(m: Omit<MountedPod, 'remountRequired' | 'resizeRequired'>): void;
  /** No-op when absent. */
  markVolumeUnmounted(pod: PodUid, volume: VolumeName): void;
  /** Flags the pod's mounted volume (or all of them) for SetUp again, e.g. a driver that requiresRepublish. */
  markRemountRequired(pod: PodUid, volume?: VolumeName): void;
  /** Flags (pod, volume) for NodeExpandVolume. No-op when absent. */
  markResizeRequired(pod: PodUid, volume: VolumeName, required: boolean): void;
  podVolumeStatus(pod: PodUid, volume: VolumeName): PodVolumeStatus;
  attachedVolume(volume: VolumeName): AttachedVolume | undefined;
  attachedVolumes(): AttachedVolume[];
  mountedPods(): MountedPod[];
  mountedVolumesForPod(pod: PodUid): MountedPod[];
  /** Volumes whose device is staged (any state) but no pod has them mounted. */
  unmountedDevices(): AttachedVolume[];
}

export function newActualStateOfWorld(): ActualStateOfWorld {
  return new Asw();
}

interface Entry {
  spec: VolumeSpec;
  devicePath: string;
  deviceMountPath: string;
  deviceState: DeviceMountState;
  readonly pods: Map<PodUid, MountedPod>;
}

const NOT_ATTACHED: PodVolumeStatus = Object.freeze({ kind: 'notAttached' });
const DEVICE_STATES: readonly DeviceMountState[] = ['Mounted', 'Uncertain', 'Unmounted'];
const ATTACHED = Object.fromEntries(
  DEVICE_STATES.map((d) => [d, Object.freeze({ kind: 'attached', deviceState: d })]),
) as Record<DeviceMountState, PodVolumeStatus>;
const SETTLED = Object.fromEntries(
  DEVICE_STATES.map((d) => [
    d,
    Object.freeze({ kind: 'mounted', deviceState: d, state: 'Mounted', remountRequired: false, resizeRequired: false }),
  ]),
) as Record<DeviceMountState, PodVolumeStatus>;

class Asw implements ActualStateOfWorld {
  private readonly volumes = new Map<VolumeName, Entry>();
  /** pod → volumes it has mounted: per-pod reads stay O(volumes of the pod) (pod status asks for every pod). */
  private readonly byPod = new Map<PodUid, Set<VolumeName>>();

  markVolumeAttached(volume: VolumeName, spec: VolumeSpec, devicePath: string): void {
    const e = this.volumes.get(volume);
    if (e) {
      e.spec = spec;
      e.devicePath = devicePath;
      return;
    }
    this.volumes.set(volume, { spec, devicePath, deviceMountPath: '', deviceState: 'Unmounted', pods: new Map() });
  }

  markVolumeDetached(volume: VolumeName): boolean {
    const e = this.volumes.get(volume);
    if (!e) return true;
    if (e.pods.size > 0 || e.deviceState !== 'Unmounted') return false;
    this.volumes.delete(volume);
    return true;
  }

  /** The volume's entry; a mount reported for a volume absent here re-creates it, device Uncertain. */
  private forMount(volume: VolumeName, spec: VolumeSpec): { entry: Entry; wasAttached: boolean } {
    const e = this.volumes.get(volume);
    if (e) return { entry: e, wasAttached: true };
    const entry: Entry = { spec, devicePath: '', deviceMountPath: '', deviceState: 'Uncertain', pods: new Map() };
    this.volumes.set(volume, entry);
    return { entry, wasAttached: false };
  }

  markDeviceMounted(volume: VolumeName, spec: VolumeSpec, deviceMountPath: string, state: MountState): void {
    const { entry, wasAttached } = this.forMount(volume, spec);
    entry.deviceMountPath = deviceMountPath;
    entry.deviceState = wasAttached ? state : 'Uncertain';
  }

  markDeviceUnmounted(volume: VolumeName): void {
    const e = this.volumes.get(volume);
    if (!e) return;
    e.deviceState = 'Unmounted';
  }

  markVolumeMounted(m: Omit<MountedPod, 'remountRequired' | 'resizeRequired'>): void {
    const e = this.forMount(m.volume, m.spec).entry;
    e.pods.set(m.pod.uid, { ...m, pod: { ...m.pod }, remountRequired: false, resizeRequired: false });
    let s = this.byPod.get(m.pod.uid);
    if (!s) this.byPod.set(m.pod.uid, (s = new Set()));
    s.add(m.volume);
  }

  markVolumeUnmounted(pod: PodUid, volume: VolumeName): void {
    this.volumes.get(volume)?.pods.delete(pod);
    const s = this.byPod.get(pod);
    s?.delete(volume);
    if (s?.size === 0) this.byPod.delete(pod);
  }

  markRemountRequired(pod: PodUid, volume?: VolumeName): void {
    for (const name of volume !== undefined ? [volume] : [...(this.byPod.get(pod) ?? [])]) {
      const e = this.volumes.get(name);
      const p = e?.pods.get(pod);
      if (e && p) e.pods.set(pod, { ...p, remountRequired: true });
    }
  }

  markResizeRequired(pod: PodUid, volume: VolumeName, required: boolean): void {
    const e = this.volumes.get(volume);
    const p = e?.pods.get(pod);
    if (e && p) e.pods.set(pod, { ...p, resizeRequired: required });
  }

  podVolumeStatus(pod: PodUid, volume: VolumeName): PodVolumeStatus {
    const e = this.volumes.get(volume);
    if (!e) return NOT_ATTACHED;
    const p = e.pods.get(pod);
    if (!p) return ATTACHED[e.deviceState];
    // The settled case, by far the most common on a busy node, allocates nothing.
    if (p.state === 'Mounted' && !p.remountRequired && !p.resizeRequired) return SETTLED[e.deviceState];
    return {
      kind: 'mounted',
      deviceState: e.deviceState,
      state: p.state,
      remountRequired: p.remountRequired,
      resizeRequired: p.resizeRequired,
    };
  }

  private view(name: VolumeName, e: Entry): AttachedVolume {
    return {
      volume: name,
      spec: e.spec,
      devicePath: e.devicePath,
      deviceMountPath: e.deviceMountPath,
      deviceState: e.deviceState,
      pods: [...e.pods.values()],
    };
  }

  attachedVolume(volume: VolumeName): AttachedVolume | undefined {
    const e = this.volumes.get(volume);
    return e ? this.view(volume, e) : undefined;
  }

  attachedVolumes(): AttachedVolume[] {
    return [...this.volumes].map(([n, e]) => this.view(n, e));
  }

  mountedPods(): MountedPod[] {
    const out: MountedPod[] = [];
    for (const e of this.volumes.values()) for (const p of e.pods.values()) out.push(p);
    return out;
  }

  mountedVolumesForPod(pod: PodUid): MountedPod[] {
    const out: MountedPod[] = [];
    for (const name of this.byPod.get(pod) ?? []) {
      const p = this.volumes.get(name)?.pods.get(pod);
      if (p) out.push(p);
    }
    return out;
  }

  unmountedDevices(): AttachedVolume[] {
    return this.attachedVolumes().filter((v) => v.pods.length === 0 && v.deviceState !== 'Unmounted');
  }
}
