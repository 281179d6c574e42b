import type { AttachedVolume, MountedPod } from '../cache/actual-state.js';
import type { ActualStateOfWorld } from '../cache/actual-state.js';
import type { DesiredStateOfWorld, VolumeToMount } from '../cache/desired-state.js';
import { pluginFor } from '../plugins/registry.js';
import type { PodUid, VolumeName, VolumeSpec } from '../types.js';

/** What the reconciler asks the operation executor to do; each maps to one operation. */
export type ReconcileOp =
  | { readonly kind: 'unmountVolume'; readonly volume: VolumeName; readonly pod: PodUid; readonly mounted: MountedPod }
  | { readonly kind: 'verifyAttached'; readonly volume: VolumeName; readonly toMount: VolumeToMount }
  | { readonly kind: 'mountDevice'; readonly volume: VolumeName; readonly toMount: VolumeToMount }
  | {
      readonly kind: 'setUp';
      readonly volume: VolumeName;
      readonly pod: PodUid;
      readonly toMount: VolumeToMount;
      readonly remount: boolean;
    }
  | { readonly kind: 'expand'; readonly volume: VolumeName; readonly pod: PodUid; readonly toMount: VolumeToMount }
  | { readonly kind: 'unmountDevice'; readonly volume: VolumeName; readonly attached: AttachedVolume }
  | { readonly kind: 'markDetached'; readonly volume: VolumeName };

export type DswView = Pick<DesiredStateOfWorld, 'volumesToMount' | 'podVolumeExists' | 'volumeExists'>;
export type AswView = Pick<ActualStateOfWorld, 'podVolumeStatus' | 'mountedPods' | 'attachedVolumes'>;

/** The plugin has a per-node device step (CSI Persistent volumes: staging) that precedes SetUp. */
export function needsDeviceMount(spec: VolumeSpec): boolean {
  return pluginFor(spec).requiresDeviceMount(spec);
}

/** A live pod names this volume but it did not resolve yet: what is mounted for it is adopted. */
export type WantedUnresolved = (pod: PodUid, outerSpecName: string) => boolean;

const NONE_UNRESOLVED: WantedUnresolved = () => false;

/**
 * The reconciler's decision, pure: in order, unmount volumes no pod wants, mount or attach-verify
 * what pods want, then unmount devices (unstage) and forget volumes nothing uses any more.
 * Unmounting first frees devices before new mounts of the same volume race them (kubelet order).
 * Nothing is torn down before the populator's first full pass: until then a volume absent from
 * the desired state may just not have been added yet (after a restart it is still in use). Nor
 * afterwards is a volume a live pod still names but that did not resolve (`wantedUnresolved`).
 */
export function reconcile(
  dsw: DswView,
  asw: AswView,
  populatedOnce: boolean,
  wantedUnresolved: WantedUnresolved = NONE_UNRESOLVED,
): ReconcileOp[] {
  const mounts = mountOrAttach(dsw, asw);
  if (!populatedOnce) return mounts;
  return [...unmountVolumes(dsw, asw, wantedUnresolved), ...mounts, ...unmountDevices(dsw, asw)];
}

function unmountVolumes(dsw: DswView, asw: AswView, wantedUnresolved: WantedUnresolved): ReconcileOp[] {
  const out: ReconcileOp[] = [];
  for (const m of asw.mountedPods()) {
    if (dsw.podVolumeExists(m.pod.uid, m.volume) || wantedUnresolved(m.pod.uid, m.outerSpecName)) continue;
    out.push({ kind: 'unmountVolume', volume: m.volume, pod: m.pod.uid, mounted: m });
  }
  return out;
}

function mountOrAttach(dsw: DswView, asw: AswView): ReconcileOp[] {
  const out: ReconcileOp[] = [];
  const deviceAsked = new Set<VolumeName>();
  for (const t of dsw.volumesToMount()) {
    const st = asw.podVolumeStatus(t.pod.uid, t.volume);
    if (st.kind === 'notAttached') {
      // An attachable volume is verified only once the node reports it in use, so that the
      // attach/detach controller never detaches a volume the node is about to mount.
      if (t.pluginIsAttachable && !t.reportedInUse) continue;
      if (!deviceAsked.has(t.volume)) out.push({ kind: 'verifyAttached', volume: t.volume, toMount: t });
      deviceAsked.add(t.volume);
      continue;
    }
    if (needsDeviceMount(t.spec) && st.deviceState !== 'Mounted') {
      if (!deviceAsked.has(t.volume)) out.push({ kind: 'mountDevice', volume: t.volume, toMount: t });
      deviceAsked.add(t.volume);
      continue;
    }
    if (st.kind === 'attached') {
      out.push({ kind: 'setUp', volume: t.volume, pod: t.pod.uid, toMount: t, remount: false });
    } else if (st.state === 'Uncertain' || st.remountRequired) {
      out.push({ kind: 'setUp', volume: t.volume, pod: t.pod.uid, toMount: t, remount: true });
    } else if (st.resizeRequired) {
      out.push({ kind: 'expand', volume: t.volume, pod: t.pod.uid, toMount: t });
    }
  }
  return out;
}

function unmountDevices(dsw: DswView, asw: AswView): ReconcileOp[] {
  const out: ReconcileOp[] = [];
  for (const v of asw.attachedVolumes()) {
    if (v.pods.length > 0 || dsw.volumeExists(v.volume)) continue;
    if (v.deviceState !== 'Unmounted') out.push({ kind: 'unmountDevice', volume: v.volume, attached: v });
    else out.push({ kind: 'markDetached', volume: v.volume });
  }
  return out;
}
