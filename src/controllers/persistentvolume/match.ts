/**
 * Pure matching rules between claims and volumes (component-helpers/storage/volume and the PV
 * controller's index, v1.30), plus `findBestMatchLinear`: the straightforward reference matcher the
 * indexed one (index.ts) is proven equivalent to.
 */
import { claimClass, volumeClass } from '../../kube/class.js';
import { volumeNodeAffinityMatches } from '../../kube/nodeselector.js';
import { quantityNanos, quantityValue } from '../../kube/quantity.js';
import { compileLabelSelector, type LabelMatcher } from './selector.js';
import { ANN_BOUND_BY_CONTROLLER } from '../../kube/names.js';
import type { Node, PersistentVolume, PersistentVolumeClaim } from './types.js';
import { nameOf } from '../../kube/meta.js';
import { assertNever } from '../../util/errors.js';

/** Canonical access-mode order of v1helper.GetAccessModesAsString. */
const MODE_ORDER = [
  ['ReadWriteOnce', 'RWO'],
  ['ReadOnlyMany', 'ROX'],
  ['ReadWriteMany', 'RWX'],
  ['ReadWriteOncePod', 'RWOP'],
] as const;

/** "RWO,ROX" style key of a set of access modes; unknown modes are dropped as upstream does. */
export function accessModesKey(modes: readonly string[] | undefined): string {
  const set = new Set(modes ?? []);
  return MODE_ORDER.filter(([m]) => set.has(m))
    .map(([, s]) => s)
    .join(',');
}

export function accessModesFromKey(key: string): string[] {
  const shorts = new Set(key === '' ? [] : key.split(','));
  return MODE_ORDER.filter(([, s]) => shorts.has(s)).map(([m]) => m);
}

/** True when every requested mode is in `indexed` (util.ContainsAllAccessModes). */
export function containsAllAccessModes(indexed: readonly string[], requested: readonly string[]): boolean {
  return requested.every((m) => indexed.includes(m));
}

/** Mode-set keys that can satisfy `requested`, fewest modes first (ties by key, for determinism). */
export function possibleModeKeys(keys: Iterable<string>, requested: readonly string[]): string[] {
  const out: string[] = [];
  for (const k of keys) if (containsAllAccessModes(accessModesFromKey(k), requested)) out.push(k);
  const size = (k: string): number => (k === '' ? 0 : k.split(',').length);
  return out.sort((a, b) => size(a) - size(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Whether `volume` (assumed Available and unclaimed) is one findBestMatch could give `claim`
 * without a node: same class and volumeMode, big enough, the claim's access modes, its selector.
 */
export function volumeCouldSatisfy(claim: PersistentVolumeClaim, volume: PersistentVolume): boolean {
  if (checkVolumeModeMismatches(claim, volume) || volumeClass(volume) !== claimClass(claim)) return false;
  if (capacityNanos(volume) < requestNanos(claim) || !checkAccessModes(claim, volume)) return false;
  return !claim.spec?.selector || compileLabelSelector(claim.spec.selector)(volume.metadata?.labels);
}

export function checkAccessModes(claim: PersistentVolumeClaim, volume: PersistentVolume): boolean {
  const have = new Set(volume.spec?.accessModes ?? []);
  return (claim.spec?.accessModes ?? []).every((m) => have.has(m));
}

/** volumeMode mismatch, a nil mode defaulting to Filesystem on both sides. */
export function checkVolumeModeMismatches(claim: PersistentVolumeClaim, volume: PersistentVolume): boolean {
  return (claim.spec?.volumeMode ?? 'Filesystem') !== (volume.spec?.volumeMode ?? 'Filesystem');
}

export function requestNanos(claim: PersistentVolumeClaim): bigint {
  return quantityNanos(claim.spec?.resources?.requests?.['storage']);
}

export function capacityNanos(volume: PersistentVolume): bigint {
  return quantityNanos(volume.spec?.capacity?.['storage']);
}

/** Pre-bound or bound to this claim: name and namespace equal, and UID equal when the ref has one. */
export function isVolumeBoundToClaim(volume: PersistentVolume, claim: PersistentVolumeClaim): boolean {
  const ref = volume.spec?.claimRef;
  if (!ref) return false;
  if ((ref.name ?? '') !== (claim.metadata?.name ?? '') || (ref.namespace ?? '') !== (claim.metadata?.namespace ?? ''))
    return false;
  if ((ref.uid ?? '') !== '' && ref.uid !== claim.metadata?.uid) return false;
  return true;
}

/**
 * Which of two volumes pre-bound to one claim FindMatchingVolume returns. Upstream takes whichever
 * its cache lists first; Stowage puts the user's pre-binding before one the controller wrote itself
 * (a bind it has not finished), then the smaller name, so a claim ends on the volume made for it.
 */
export function preferPrebound(a: PersistentVolume, b: PersistentVolume): boolean {
  const userA = a.metadata?.annotations?.[ANN_BOUND_BY_CONTROLLER] === undefined;
  const userB = b.metadata?.annotations?.[ANN_BOUND_BY_CONTROLLER] === undefined;
  if (userA !== userB) return userA;
  return nameOf(a) < nameOf(b);
}

/** Why a named volume cannot serve a claim (checkVolumeSatisfyClaim), or null when it can. */
export function checkVolumeSatisfyClaim(volume: PersistentVolume, claim: PersistentVolumeClaim): string | null {
  if (volume.metadata?.deletionTimestamp) return `the volume is marked for deletion "${volume.metadata?.name ?? ''}"`;
  if (quantityValue(volume.spec?.capacity?.['storage']) < quantityValue(claim.spec?.resources?.requests?.['storage'])) {
    return 'requested PV is too small';
  }
  if (volumeClass(volume) !== claimClass(claim)) return 'storageClassName does not match';
  if (checkVolumeModeMismatches(claim, volume)) return 'incompatible volumeMode';
  if (!checkAccessModes(claim, volume)) return 'incompatible accessMode';
  return null;
}

export { volumeNodeAffinityMatches };

export interface MatchOptions {
  /** WaitForFirstConsumer class: only pre-bound volumes may be returned (unless `node` is given). */
  readonly delayBinding: boolean;
  /** Scheduler path: node affinity and access modes checked against this node. */
  readonly node?: Node;
}

/** A compiled claim: the parts every candidate is checked against. */
export interface ClaimQuery {
  readonly claim: PersistentVolumeClaim;
  readonly request: bigint;
  readonly cls: string;
  readonly selector: LabelMatcher | null;
}

export function compileClaimQuery(claim: PersistentVolumeClaim): ClaimQuery {
  return {
    claim,
    request: requestNanos(claim),
    cls: claimClass(claim),
    selector: claim.spec?.selector ? compileLabelSelector(claim.spec.selector) : null,
  };
}

/**
 * Why FindMatchingVolume passes over one volume for a claim. The matcher and `stowage why` both
 * read these, so an explanation is the matcher's own reasoning, not a second opinion.
 */
export type VolumeRefusal =
  | { readonly kind: 'volumeMode'; readonly claimMode: string; readonly volumeMode: string }
  | { readonly kind: 'beingDeleted' }
  | { readonly kind: 'tooSmall'; readonly request: bigint; readonly capacity: bigint }
  /** WaitForFirstConsumer without a node: only a volume pre-bound to the claim may be taken now. */
  | { readonly kind: 'waitForFirstConsumer' }
  /** claimRef names another claim and the volume is Bound. */
  | { readonly kind: 'alreadyBound'; readonly to: string }
  /** claimRef names another claim, binding not finished (the user's or the controller's pre-binding). */
  | { readonly kind: 'preboundElsewhere'; readonly to: string }
  | { readonly kind: 'notAvailable'; readonly phase: string }
  | { readonly kind: 'selector' }
  | { readonly kind: 'storageClass'; readonly claimClass: string; readonly volumeClass: string }
  | { readonly kind: 'nodeAffinity'; readonly node: string }
  | { readonly kind: 'accessModes'; readonly claimModes: string; readonly volumeModes: string };

/** One volume as FindMatchingVolume sees it: pre-bound to the claim, a size-ranked fit, or refused. */
export type CandidateVerdict =
  | { readonly kind: 'prebound' }
  | { readonly kind: 'fits'; readonly capacity: bigint }
  | { readonly kind: 'refused'; readonly refusal: VolumeRefusal };

export type RefusalKind = VolumeRefusal['kind'];

/**
 * The checks of FindMatchingVolume for one volume, in upstream's order (the first failing check is
 * the reason), allocation-free for the matcher's loop. Access-mode sets are matched before this, by
 * grouping (findBestMatchLinear), except on the scheduler's path where the node is known.
 */
export function checkCandidate(q: ClaimQuery, v: PersistentVolume, o: MatchOptions): RefusalKind | 'prebound' | 'fits' {
  if (checkVolumeModeMismatches(q.claim, v)) return 'volumeMode';
  if (v.metadata?.deletionTimestamp) return 'beingDeleted';
  if (isVolumeBoundToClaim(v, q.claim)) return capacityNanos(v) < q.request ? 'tooSmall' : 'prebound';
  if (!o.node && o.delayBinding) return 'waitForFirstConsumer';
  if (v.spec?.claimRef) return v.status?.phase === 'Bound' ? 'alreadyBound' : 'preboundElsewhere';
  if (v.status?.phase !== 'Available') return 'notAvailable';
  if (q.selector && !q.selector(v.metadata?.labels)) return 'selector';
  if (volumeClass(v) !== q.cls) return 'storageClass';
  if (o.node && !volumeNodeAffinityMatches(v, o.node)) return 'nodeAffinity';
  if (o.node && !checkAccessModes(q.claim, v)) return 'accessModes';
  return capacityNanos(v) < q.request ? 'tooSmall' : 'fits';
}

/** checkCandidate with the details of a refusal (what `stowage why` shows). */
export function candidateVerdict(q: ClaimQuery, v: PersistentVolume, o: MatchOptions): CandidateVerdict {
  const kind = checkCandidate(q, v, o);
  const refusal = ((): VolumeRefusal | undefined => {
    const ref = v.spec?.claimRef;
    const to = `${ref?.namespace ?? ''}/${ref?.name ?? ''}`;
    switch (kind) {
      case 'prebound':
      case 'fits':
        return undefined;
      case 'volumeMode':
        return {
          kind,
          claimMode: q.claim.spec?.volumeMode ?? 'Filesystem',
          volumeMode: v.spec?.volumeMode ?? 'Filesystem',
        };
      case 'tooSmall':
        return { kind, request: q.request, capacity: capacityNanos(v) };
      case 'alreadyBound':
      case 'preboundElsewhere':
        return { kind, to };
      case 'notAvailable':
        return { kind, phase: v.status?.phase ?? '' };
      case 'storageClass':
        return { kind, claimClass: q.cls, volumeClass: volumeClass(v) };
      case 'nodeAffinity':
        return { kind, node: o.node ? nameOf(o.node) : '' };
      case 'accessModes':
        return accessModesRefusal(q.claim, v);
      case 'beingDeleted':
      case 'waitForFirstConsumer':
      case 'selector':
        return { kind };
      default:
        return assertNever(kind);
    }
  })();
  if (refusal) return { kind: 'refused', refusal };
  return kind === 'prebound' ? { kind: 'prebound' } : { kind: 'fits', capacity: capacityNanos(v) };
}

export function accessModesRefusal(claim: PersistentVolumeClaim, v: PersistentVolume): VolumeRefusal {
  return {
    kind: 'accessModes',
    claimModes: accessModesKey(claim.spec?.accessModes),
    volumeModes: accessModesKey(v.spec?.accessModes),
  };
}

/**
 * FindMatchingVolume over one candidate list: a volume bound/pre-bound to this claim and big enough
 * wins at once, in any phase (preferPrebound orders several); otherwise the smallest Available,
 * unclaimed, same-class, selector-matching volume.
 * Ties in capacity go to the smaller name (upstream order is cache order, i.e. unspecified).
 */
export function findMatchingVolume(
  q: ClaimQuery,
  volumes: readonly PersistentVolume[],
  o: MatchOptions,
): PersistentVolume | null {
  let best: PersistentVolume | null = null;
  let bestCap = 0n;
  let prebound: PersistentVolume | null = null;
  for (const v of volumes) {
    const verdict = checkCandidate(q, v, o);
    if (verdict === 'prebound') {
      if (!prebound || preferPrebound(v, prebound)) prebound = v;
    } else if (verdict === 'fits') {
      const cap = capacityNanos(v);
      if (best === null || cap < bestCap || (cap === bestCap && nameOf(v) < nameOf(best))) {
        best = v;
        bestCap = cap;
      }
    }
  }
  // A pre-bound volume the node cannot reach means no match at all for this claim on this node.
  if (prebound) return o.node && !volumeNodeAffinityMatches(prebound, o.node) ? null : prebound;
  return best;
}

/** Reference matcher: group by access-mode set and try the sets fewest-modes first. */
export function findBestMatchLinear(
  claim: PersistentVolumeClaim,
  volumes: readonly PersistentVolume[],
  o: MatchOptions,
): PersistentVolume | null {
  const groups = new Map<string, PersistentVolume[]>();
  for (const v of volumes) {
    const k = accessModesKey(v.spec?.accessModes);
    const g = groups.get(k);
    if (g) g.push(v);
    else groups.set(k, [v]);
  }
  const q = compileClaimQuery(claim);
  for (const k of possibleModeKeys(groups.keys(), claim.spec?.accessModes ?? [])) {
    const found = findMatchingVolume(q, groups.get(k) ?? [], o);
    if (found) return found;
  }
  return null;
}
