import type { CSIDriver } from 'kubernetes-types/storage/v1.js';
import type { PersistentVolume, PersistentVolumeClaim, Pod, Volume } from 'kubernetes-types/core/v1.js';
import type { Logger } from '../../../util/log.js';
import type { ActualStateOfWorld, AttachedVolume, MountedPod } from '../cache/actual-state.js';
import type { PodVolumeInput, VolumeToMount } from '../cache/desired-state.js';
import type { OperationContext } from '../operations/context.js';
import type { PayloadLookups } from './projection/payload.js';
import type { PluginName, PodRef, PodUid, VolumeSpec } from '../types.js';

/** Cached objects the populator resolves pod volumes against (and plugins read a spec's objects from). */
export interface PopulatorLookups extends PayloadLookups {
  claim(namespace: string, name: string): PersistentVolumeClaim | undefined;
  volume(name: string): PersistentVolume | undefined;
  csiDriver(name: string): CSIDriver | undefined;
}

/** What a plugin is asked to serve: a pod's inline volume, or the PV a pod's claim is bound to. */
export type SpecSource =
  | { readonly kind: 'inline'; readonly volume: Volume }
  | {
      readonly kind: 'pv';
      readonly pv: PersistentVolume;
      readonly claim: PersistentVolumeClaim;
      readonly volume: Volume;
    };

/** What resolving needs besides the source: the pod (downward API, memory limit) and cached objects. */
export interface ResolveEnv {
  readonly pod: Pod;
  readonly ref: PodRef;
  readonly lookups: PopulatorLookups;
}

export type ResolvedVolume = Omit<
  PodVolumeInput,
  'pod' | 'outerSpecName' | 'subPaths' | 'fsGroup' | 'fsGroupChangePolicy' | 'serviceAccountName'
> & {
  readonly resizeNeeded?: boolean;
  readonly requiresRepublish?: boolean;
};

/** A source the plugin serves but cannot mount now (or ever): the message of the FailedMount event. */
export interface Refusal {
  readonly problem: string;
}

export interface ReconstructEnv {
  readonly rootDir: string;
  readonly asw: ActualStateOfWorld;
  readonly log: Logger;
}

/**
 * One volume type (kubelet VolumePlugin). `canSupport` is asked of every plugin by
 * findPluginBySpec; exactly one must answer yes. Operations the plugin lacks are no-ops for it
 * (a plugin without mountDevice has no per-node device step). Every operation is idempotent.
 */
export interface VolumePlugin {
  readonly name: PluginName;
  canSupport(src: SpecSource): boolean;
  /** Builds the desired-state entry (unique volume name, spec), or refuses with the kubelet's message. */
  resolve(src: SpecSource, env: ResolveEnv): ResolvedVolume | Refusal;
  /** The per-node device step (CSI staging, block map) is needed before SetUp. */
  requiresDeviceMount(spec: VolumeSpec): boolean;
  /** Attach check; absent: the volume counts as attached at once. */
  verifyAttached?(ctx: OperationContext, t: VolumeToMount, signal: AbortSignal): Promise<void>;
  mountDevice?(ctx: OperationContext, t: VolumeToMount, signal: AbortSignal): Promise<void>;
  /** Makes the pod's view of the volume (and its subPaths); marks it in the ASW. */
  setUp(ctx: OperationContext, t: VolumeToMount, signal: AbortSignal): Promise<void>;
  tearDown(ctx: OperationContext, m: MountedPod, signal: AbortSignal): Promise<void>;
  unmountDevice?(ctx: OperationContext, v: AttachedVolume, signal: AbortSignal): Promise<void>;
  /** After a restart: the pod's volumes of this plugin found on disk, marked in the ASW. Returns how many. */
  reconstruct(env: ReconstructEnv, uid: PodUid): Promise<number>;
}

export const isRefusal = (r: ResolvedVolume | Refusal): r is Refusal => 'problem' in r;
