import type { Pod } from 'kubernetes-types/core/v1.js';
import type { EventRecorder } from '../../../client/events.js';
import { backoffDelay, DEFAULT_BACKOFF, type BackoffPolicy, type Clock } from '../../../util/backoff.js';
import type { ActualStateOfWorld } from '../cache/actual-state.js';
import type { DesiredStateOfWorld } from '../cache/desired-state.js';
import { podReference } from '../operations/context.js';
import type { PodUid, VolumeName } from '../types.js';
import { podIsTerminating, podRefOf, resolvePodVolumes, type PopulatorLookups } from './resolve.js';

/** Fills the desired state from the pods bound to this node. */
export interface Populator {
  /**
   * One full pass, synchronous: findAndAddNewPods then findAndRemoveDeletedPods. Once a pass has
   * run with every informer synced before it and every lookup it asked answered after it (the
   * kubelet's sourcesReady, then a populated desired state), hasPopulatedOnce() is true for good.
   */
  populate(): void;
  hasPopulatedOnce(): boolean;
  /**
   * Whether a live pod (listed, not terminating) names `outerSpecName` in its spec while the
   * volume is unresolved in the last pass (claim or volume not fetched yet, a lookup failing, a
   * driver not known yet). Such a volume is adopted as it is mounted, never torn down: the kubelet
   * removes a pod's volumes only with the pod.
   */
  wantedUnresolved(pod: PodUid, outerSpecName: string): boolean;
}

export interface PopulatorOptions {
  readonly dsw: DesiredStateOfWorld;
  readonly asw: ActualStateOfWorld;
  /** Pods with spec.nodeName = this node (informer lister). */
  readonly pods: () => readonly Pod[];
  readonly lookups: PopulatorLookups;
  readonly recorder: EventRecorder;
  readonly clock: Clock;
  /** True once the pod, claim, PV and CSIDriver informers have listed. */
  readonly synced: () => boolean;
  /** False while lookups fetched on demand have not answered what they were asked (default: always answered). */
  readonly lookupsAnswered?: () => boolean;
  /**
   * The same problem is reported again on this schedule (the kubelet's: each failed attempt makes
   * an event, attempts back off exponentially; the event correlator aggregates the repeats).
   */
  readonly problemBackoff?: BackoffPolicy;
  /** CSIDriver.requiresRepublish volumes are published again this often (kubelet: each pod resync, 1 min). */
  readonly republishMs?: number;
  /**
   * Whether the container runtime may still run the pod (a ready sandbox or a live container).
   * Its volumes stay desired until it does not: never unmounted under a running container.
   */
  readonly runtimeActive?: (uid: PodUid) => boolean;
}

export function newPopulator(o: PopulatorOptions): Populator {
  return new DswPopulator(o);
}

const REPUBLISH_MS = 60_000; // the kubelet's default pod sync frequency
const WAIT_FOR_MOUNT_MS = 123_000; // kubelet podAttachAndMountTimeout (2m3s), after which the pod gets the summary event

class DswPopulator implements Populator {
  private populated = false;
  /** `<pod uid>/<outerSpecName>` of live pods' volumes that did not resolve in the last pass. */
  private unresolved = new Set<string>();
  private readonly reported = new Map<string, { message: string; atMs: number; times: number }>();
  /** pod → start of its current wait for all volumes to be mounted (the kubelet's WaitForAttachAndMount). */
  private readonly waitingSince = new Map<PodUid, number>();
  /** `<pod uid>/<volume>` → when it was last seen mounted and settled (requiresRepublish timing). */
  private readonly publishedAt = new Map<string, number>();

  constructor(private readonly o: PopulatorOptions) {}

  hasPopulatedOnce(): boolean {
    return this.populated;
  }

  wantedUnresolved(pod: PodUid, outerSpecName: string): boolean {
    return this.unresolved.has(`${pod}/${outerSpecName}`);
  }

  populate(): void {
    const synced = this.o.synced();
    const live = new Set<PodUid>();
    this.unresolved = new Set();
    this.findAndAddNewPods(live);
    this.findAndRemoveDeletedPods(live);
    // Checked again after the pass: lookups fetched on demand (a node's GETs) count as synced only
    // once what this pass asked for has answered; an unanswered claim is not a removed volume.
    if (synced && this.o.synced()) this.populated = true;
  }

  private findAndAddNewPods(live: Set<PodUid>): void {
    const { dsw, asw } = this.o;
    for (const pod of this.o.pods()) {
      if (podIsTerminating(pod)) continue;
      const ref = podRefOf(pod);
      live.add(ref.uid);
      const r = resolvePodVolumes(pod, this.o.lookups);
      // A volume leaves a live pod's desired state only when it left the pod spec or now resolves to
      // another volume. A resolution problem (claim being deleted, informer lag) must never unmount
      // a volume a running pod uses: the kubelet removes volumes only with their pod.
      const inSpec = new Set((pod.spec?.volumes ?? []).map((v) => v.name));
      const resolved = new Map(r.volumes.map((v) => [v.outerSpecName, v.volume]));
      for (const cur of dsw.volumesForPod(ref.uid)) {
        const now = resolved.get(cur.outerSpecName);
        if (!inSpec.has(cur.outerSpecName) || (now !== undefined && now !== cur.volume))
          dsw.deletePodFromVolume(ref.uid, cur.volume);
      }
      for (const p of r.problems) this.unresolved.add(`${ref.uid}/${p.outerSpecName}`);
      let written: Map<VolumeName, string | undefined> | undefined;
      for (const { resizeNeeded, requiresRepublish, ...v } of r.volumes) {
        dsw.addPodToVolume(v);
        const st = asw.podVolumeStatus(ref.uid, v.volume);
        if (v.spec.payload && st.kind === 'mounted' && st.state === 'Mounted' && !st.remountRequired) {
          // configMap/secret/downwardAPI/projected: new content is written by SetUp again (atomic swap).
          written ??= new Map(asw.mountedVolumesForPod(ref.uid).map((m) => [m.volume, m.spec.payload?.digest]));
          if (written.get(v.volume) !== v.spec.payload.digest) asw.markRemountRequired(ref.uid, v.volume);
        }
        if (resizeNeeded && st.kind === 'mounted' && !st.resizeRequired)
          asw.markResizeRequired(ref.uid, v.volume, true);
        if (requiresRepublish && st.kind === 'mounted' && st.state === 'Mounted' && !st.remountRequired)
          this.republishIfDue(ref.uid, v.volume);
      }
      // A volume already set up for the pod stays; its problem is not news (the kubelet skips processed
      // pods) — except for configMap/secret/downwardAPI/projected volumes, whose SetUp the kubelet
      // runs again at every sync: it keeps the old files and reports why it cannot refresh them.
      const kept = new Map(dsw.volumesForPod(ref.uid).map((v) => [v.outerSpecName, v.spec.payload !== undefined]));
      // A missing object may only be one not fetched yet (GET lookups): no news until they answered.
      if (this.o.lookupsAnswered?.() === false) continue;
      for (const p of r.problems)
        if (kept.get(p.outerSpecName) !== false) this.report(pod, `${ref.uid}/${p.outerSpecName}`, p.reason, p.message);
      this.reportWaitTimeout(
        pod,
        r.problems.map((p) => p.outerSpecName),
      );
    }
  }

  /**
   * The kubelet's pod-level summary: a pod whose volumes are not all mounted after each wait of
   * WAIT_FOR_MOUNT_MS gets `Unable to attach or mount volumes: …` naming what is missing.
   */
  private reportWaitTimeout(pod: Pod, notInDsw: readonly string[]): void {
    const ref = podRefOf(pod);
    const now = this.o.clock.now();
    const since = this.waitingSince.get(ref.uid) ?? now;
    this.waitingSince.set(ref.uid, since);
    const mounted = new Set(
      this.o.asw
        .mountedVolumesForPod(ref.uid)
        .filter((m) => m.state === 'Mounted')
        .map((m) => m.outerSpecName),
    );
    const expected = (pod.spec?.volumes ?? []).map((v) => v.name);
    const unmounted = expected.filter((n) => !mounted.has(n)).sort();
    if (unmounted.length === 0) {
      this.waitingSince.set(ref.uid, now);
      return;
    }
    if (now - since < WAIT_FOR_MOUNT_MS) return;
    this.waitingSince.set(ref.uid, now);
    const unattached = this.o.dsw
      .volumesForPod(ref.uid)
      .filter((v) => this.o.asw.podVolumeStatus(ref.uid, v.volume).kind === 'notAttached')
      .map((v) => v.outerSpecName)
      .sort();
    const list = (xs: readonly string[]): string => `[${xs.join(' ')}]`;
    const message = `Unable to attach or mount volumes: unmounted volumes=${list(unmounted)}, unattached volumes=${list(unattached)}, failed to process volumes=${list([...notInDsw].sort())}: timed out waiting for the condition`;
    this.o.recorder.event(podReference(ref), 'Warning', 'FailedMount', message);
  }

  private findAndRemoveDeletedPods(live: Set<PodUid>): void {
    for (const uid of this.o.dsw.pods())
      if (!live.has(uid) && this.o.runtimeActive?.(uid) !== true) this.o.dsw.deletePod(uid);
    for (const k of [...this.reported.keys()]) if (!live.has(k.split('/')[0] as PodUid)) this.reported.delete(k);
    for (const k of [...this.publishedAt.keys()]) if (!live.has(k.split('/')[0] as PodUid)) this.publishedAt.delete(k);
    for (const uid of [...this.waitingSince.keys()]) if (!live.has(uid)) this.waitingSince.delete(uid);
  }

  private republishIfDue(pod: PodUid, volume: VolumeName): void {
    const key = `${pod}/${volume}`;
    const now = this.o.clock.now();
    const since = this.publishedAt.get(key);
    if (since === undefined) this.publishedAt.set(key, now);
    else if (now - since >= (this.o.republishMs ?? REPUBLISH_MS)) {
      this.publishedAt.set(key, now);
      this.o.asw.markRemountRequired(pod, volume);
    }
  }

  private report(pod: Pod, key: string, reason: string, message: string): void {
    const now = this.o.clock.now();
    const last = this.reported.get(key);
    const same = last !== undefined && last.message === message;
    if (same && now - last.atMs < backoffDelay(this.o.problemBackoff ?? DEFAULT_BACKOFF, last.times)) return;
    this.reported.set(key, { message, atMs: now, times: same ? last.times + 1 : 1 });
    this.o.recorder.event(podReference(podRefOf(pod)), 'Warning', reason, message);
  }
}
