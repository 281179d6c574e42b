/**
 * The volume index: Kubernetes' findBestMatchForClaim answered without scanning every volume.
 *
 * Volumes are grouped by access-mode set (as upstream's "accessmodes" indexer). Inside a group:
 * - `available`: volumes a claim could take (phase Available, no claimRef, not being deleted),
 *   bucketed by storage class + volumeMode, each bucket sorted by (capacity, name); a claim binary
 *   searches the first capacity ≥ its request and walks forward only past selector misses.
 * - `prebound`: volumes whose claimRef names a claim, keyed `ns/name` (any phase, any class) —
 *   upstream returns such a volume before any size-ordered candidate.
 * Stored objects are shared, never copied: callers must treat them as immutable (the controller
 * deep-copies before every modification).
 */
import { volumeClass } from '../../kube/class.js';
import {
  accessModesKey,
  capacityNanos,
  checkVolumeModeMismatches,
  compileClaimQuery,
  isVolumeBoundToClaim,
  possibleModeKeys,
  preferPrebound,
  volumeNodeAffinityMatches,
  type MatchOptions,
} from './match.js';
import { SortedChunks } from './sorted.js';
import { claimKey, claimRefKey, type PersistentVolume, type PersistentVolumeClaim } from './types.js';
import { nameOf } from '../../kube/meta.js';

interface Entry {
  /** Replaced in place when an update leaves every index key unchanged. */
  pv: PersistentVolume;
  readonly name: string;
  readonly modes: string;
  readonly cap: bigint;
  /** class + NUL + volumeMode when the volume is takeable, else null. */
  readonly availKey: string | null;
  readonly preboundKey: string | null;
}

interface Group {
  size: number;
  readonly available: Map<string, SortedChunks<Entry, SortKey>>;
  readonly prebound: Map<string, Map<string, Entry>>;
}

export interface VolumeIndex {
  /** Insert or replace (by name). O(log n) search + array insertion. */
  upsert(pv: PersistentVolume): void;
  /** Remove by name; a no-op when absent. */
  remove(name: string): void;
  get(name: string): PersistentVolume | undefined;
  /** All volumes, fresh array. */
  list(): PersistentVolume[];
  readonly size: number;
  /** Kubernetes' findBestMatchForClaim (see match.ts findBestMatchLinear for the reference). */
  findBestMatch(claim: PersistentVolumeClaim, o: MatchOptions): PersistentVolume | null;
  /**
   * Hold an Available volume for a claim while its bind writes are in flight, so concurrent workers
   * choose other volumes instead of colliding on the same one (a Conflict and a retry). Kubernetes
   * runs one worker and never needs this; outcomes are unchanged because a successful first write
   * takes the volume out of the available set anyway.
   */
  reserve(name: string, claimKey: string): void;
  /** Drop the hold (only if `claimKey` holds it). */
  release(name: string, claimKey: string): void;
}

export function newVolumeIndex(): VolumeIndex {
  return new OrderedVolumeIndex();
}

interface SortKey {
  readonly cap: bigint;
  readonly name: string;
}

const cmp = (a: SortKey, b: SortKey): number =>
  a.cap < b.cap ? -1 : a.cap > b.cap ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;

function availKey(cls: string, mode: string): string {
  return `${cls}\u0000${mode}`;
}

class OrderedVolumeIndex implements VolumeIndex {
  private readonly byName = new Map<string, Entry>();
  private readonly groups = new Map<string, Group>();
  private readonly reserved = new Map<string, string>();

  reserve(name: string, claimKey: string): void {
    this.reserved.set(name, claimKey);
  }

  release(name: string, claimKey: string): void {
    if (this.reserved.get(name) === claimKey) this.reserved.delete(name);
  }

  get size(): number {
    return this.byName.size;
  }

  get(name: string): PersistentVolume | undefined {
    return this.byName.get(name)?.pv;
  }

  list(): PersistentVolume[] {
    return [...this.byName.values()].map((e) => e.pv);
  }

  upsert(pv: PersistentVolume): void {
    const name = nameOf(pv);
    // Overwrite rather than delete + set: V8 Maps degrade badly under delete/re-add of one key.
    const old = this.byName.get(name);
    const ref = pv.spec?.claimRef;
    const takeable = pv.status?.phase === 'Available' && !ref && !pv.metadata?.deletionTimestamp;
    const e: Entry = {
      pv,
      name,
      modes: accessModesKey(pv.spec?.accessModes),
      cap: capacityNanos(pv),
      availKey: takeable ? availKey(volumeClass(pv), pv.spec?.volumeMode ?? 'Filesystem') : null,
      preboundKey: ref ? claimRefKey(ref) : null,
    };
    if (
      old &&
      old.modes === e.modes &&
      old.cap === e.cap &&
      old.availKey === e.availKey &&
      old.preboundKey === e.preboundKey
    ) {
      // Most updates (status writes, informer echoes of our own writes) move nothing.
      old.pv = pv;
      return;
    }
    if (old) this.detach(old);
    this.byName.set(name, e);
    let g = this.groups.get(e.modes);
    if (!g) {
      g = { size: 0, available: new Map(), prebound: new Map() };
      this.groups.set(e.modes, g);
    }
    g.size++;
    if (e.availKey !== null) {
      let list = g.available.get(e.availKey);
      if (!list) g.available.set(e.availKey, (list = new SortedChunks<Entry, SortKey>(cmp)));
      list.insert(e);
    }
    if (e.preboundKey !== null) {
      let m = g.prebound.get(e.preboundKey);
      if (!m) g.prebound.set(e.preboundKey, (m = new Map()));
      m.set(name, e);
    }
  }

  remove(name: string): void {
    const e = this.byName.get(name);
    if (!e) return;
    this.byName.delete(name);
    this.reserved.delete(name);
    this.detach(e);
  }

  /** Take an entry out of its group (not out of byName). */
  private detach(e: Entry): void {
    const name = e.name;
    const g = this.groups.get(e.modes);
    if (!g) return;
    if (e.availKey !== null) {
      const list = g.available.get(e.availKey);
      if (list) {
        list.remove(e);
        if (list.length === 0) g.available.delete(e.availKey);
      }
    }
    if (e.preboundKey !== null) {
      const m = g.prebound.get(e.preboundKey);
      m?.delete(name);
      if (m && m.size === 0) g.prebound.delete(e.preboundKey);
    }
    if (--g.size === 0) this.groups.delete(e.modes);
  }

  findBestMatch(claim: PersistentVolumeClaim, o: MatchOptions): PersistentVolume | null {
    const q = compileClaimQuery(claim);
    const me = claimKey(claim);
    const mode = claim.spec?.volumeMode ?? 'Filesystem';
    for (const key of possibleModeKeys(this.groups.keys(), claim.spec?.accessModes ?? [])) {
      const g = this.groups.get(key);
      if (!g) continue;
      let prebound: Entry | null = null;
      for (const e of g.prebound.get(me)?.values() ?? []) {
        if (checkVolumeModeMismatches(claim, e.pv) || e.pv.metadata?.deletionTimestamp) continue;
        if (!isVolumeBoundToClaim(e.pv, claim) || e.cap < q.request) continue;
        if (!prebound || preferPrebound(e.pv, prebound.pv)) prebound = e;
      }
      if (prebound) {
        if (o.node && !volumeNodeAffinityMatches(prebound.pv, o.node)) continue;
        return prebound.pv;
      }
      if (!o.node && o.delayBinding) continue;
      const list = g.available.get(availKey(q.cls, mode));
      if (!list) continue;
      const hit = list.findFrom({ cap: q.request, name: '' }, (e) => {
        const holder = this.reserved.get(e.name);
        if (holder !== undefined && holder !== me) return false;
        if (q.selector && !q.selector(e.pv.metadata?.labels)) return false;
        return !o.node || volumeNodeAffinityMatches(e.pv, o.node);
      });
      if (hit) return hit.pv;
    }
    return null;
  }
}
