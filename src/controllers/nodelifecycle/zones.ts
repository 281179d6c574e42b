/**
 * Zone disruption, pure (kube-controller-manager v1.30 nodelifecycle: ComputeZoneState,
 * handleDisruption, setLimiterInZone, ReducedQPSFunc, processTaintBaseEviction). Nodes are grouped
 * by zone; a zone with no Ready node is in FullDisruption, one with more than 2 and at least
 * --unhealthy-zone-threshold of its nodes not Ready in PartialDisruption. A zone's NoExecute taints
 * go out at --node-eviction-rate, at --secondary-node-eviction-rate in PartialDisruption (0 for a
 * cluster of at most --large-cluster-size-threshold nodes). When every zone is in FullDisruption the
 * controller cannot tell dead nodes from its own cut-off: it stops tainting and lifts the NoExecute
 * lifecycle taints from every node, until some node is Ready again.
 */
import type { Node, Taint } from 'kubernetes-types/core/v1.js';
import { TAINT_NOT_READY, TAINT_UNREACHABLE } from '../../kube/names.js';
import { nodeReadyCondition } from '../../kube/node.js';
import { metaTime } from '../../util/metatime.js';

export const LABEL_TOPOLOGY_ZONE = 'topology.kubernetes.io/zone';
export const LABEL_TOPOLOGY_REGION = 'topology.kubernetes.io/region';
const LABEL_BETA_ZONE = 'failure-domain.beta.kubernetes.io/zone';
const LABEL_BETA_REGION = 'failure-domain.beta.kubernetes.io/region';
/** A node with this label (any value) is not counted in its zone's state (it is still tainted). */
export const LABEL_EXCLUDE_DISRUPTION = 'node.kubernetes.io/exclude-disruption';

/** kube-controller-manager's defaults for the four flags. */
export const DEFAULT_EVICTION_LIMITS: EvictionLimits = {
  nodeEvictionRate: 0.1,
  secondaryNodeEvictionRate: 0.01,
  largeClusterSizeThreshold: 50,
  unhealthyZoneThreshold: 0.55,
};

export interface EvictionLimits {
  /** --node-eviction-rate: nodes tainted NoExecute per second in a zone that is Normal (or FullDisruption among others). */
  readonly nodeEvictionRate: number;
  /** --secondary-node-eviction-rate: the same in a PartialDisruption zone of a large cluster. */
  readonly secondaryNodeEvictionRate: number;
  /** --large-cluster-size-threshold: a zone of at most this many nodes gets no NoExecute taints in PartialDisruption. */
  readonly largeClusterSizeThreshold: number;
  /** --unhealthy-zone-threshold: fraction of not Ready nodes (and more than 2) that makes a zone PartialDisruption. */
  readonly unhealthyZoneThreshold: number;
}

export const ZONE_STATES = ['Initial', 'Normal', 'PartialDisruption', 'FullDisruption'] as const;
export type ZoneState = (typeof ZONE_STATES)[number];

/**
 * utilnode.GetZoneKey: region and zone (the beta failure-domain labels first, then topology.kubernetes.io),
 * "" when the node has neither. The NUL keeps "a:b"+"c" apart from "a"+"b:c".
 */
export function zoneKey(node: Node): string {
  const labels = node.metadata?.labels ?? {};
  const zone = labels[LABEL_BETA_ZONE] ?? labels[LABEL_TOPOLOGY_ZONE] ?? '';
  const region = labels[LABEL_BETA_REGION] ?? labels[LABEL_TOPOLOGY_REGION] ?? '';
  return region === '' && zone === '' ? '' : `${region}:\x00:${zone}`;
}

/** How many of a zone's nodes are not Ready and the zone's state (ComputeZoneState). A node without a Ready condition counts as not Ready. */
export function computeZoneState(
  readyStatuses: readonly (string | undefined)[],
  unhealthyZoneThreshold: number,
): { unhealthy: number; state: ZoneState } {
  const ready = readyStatuses.filter((s) => s === 'True').length;
  const unhealthy = readyStatuses.length - ready;
  if (ready === 0 && unhealthy > 0) return { unhealthy, state: 'FullDisruption' };
  if (unhealthy > 2 && unhealthy / readyStatuses.length >= unhealthyZoneThreshold)
    return { unhealthy, state: 'PartialDisruption' };
  return { unhealthy, state: 'Normal' };
}

/** Each zone's nodes' Ready statuses, leaving out nodes labelled exclude-disruption. */
export function zoneReadiness(nodes: readonly Node[]): Map<string, (string | undefined)[]> {
  const out = new Map<string, (string | undefined)[]>();
  for (const n of nodes) {
    if (n.metadata?.labels?.[LABEL_EXCLUDE_DISRUPTION] !== undefined) continue;
    const k = zoneKey(n);
    out.set(k, [...(out.get(k) ?? []), nodeReadyCondition(n)?.status]);
  }
  return out;
}

/** setLimiterInZone: the NoExecute tainting rate of a zone of `zoneSize` counted nodes in `state`. */
export function zoneEvictionRate(state: ZoneState, zoneSize: number, limits: EvictionLimits): number {
  switch (state) {
    case 'PartialDisruption':
      return zoneSize > limits.largeClusterSizeThreshold ? limits.secondaryNodeEvictionRate : 0;
    case 'Normal':
    case 'FullDisruption':
    case 'Initial':
      return limits.nodeEvictionRate;
  }
}

export interface DisruptionPlan {
  /** The zone states to remember. */
  readonly states: ReadonlyMap<string, ZoneState>;
  /** Zones whose tainting rate changes, and to what. */
  readonly rates: ReadonlyMap<string, number>;
  /** 'enter': every zone just became FullDisruption (lift NoExecute taints everywhere); 'leave': some node is Ready again (restart the nodes' grace periods). */
  readonly mode?: 'enter' | 'leave';
}

/**
 * handleDisruption for one pass: `prev` is the remembered zone states, `readiness` this pass's
 * counted nodes per zone. A zone seen for the first time starts Initial; one without counted nodes
 * is forgotten. "All fully disrupted" needs at least one counted zone, so an empty cluster is never
 * in disruption mode.
 */
export function planDisruption(
  prev: ReadonlyMap<string, ZoneState>,
  readiness: ReadonlyMap<string, readonly (string | undefined)[]>,
  limits: EvictionLimits,
): DisruptionPlan {
  const next = new Map<string, ZoneState>();
  for (const [zone, statuses] of readiness)
    next.set(zone, computeZoneState(statuses, limits.unhealthyZoneThreshold).state);
  const known = new Map<string, ZoneState>();
  for (const zone of readiness.keys()) known.set(zone, prev.get(zone) ?? 'Initial');
  const allAre = [...next.values()].every((s) => s === 'FullDisruption');
  const allWere = [...known.values()].every((s) => s === 'FullDisruption');
  const rate = (zone: string): number =>
    zoneEvictionRate(next.get(zone) ?? 'Normal', readiness.get(zone)?.length ?? 0, limits);
  if (allAre && allWere) return { states: known, rates: new Map() };
  if (allAre) {
    return {
      states: new Map([...known.keys()].map((z) => [z, 'FullDisruption'])),
      rates: new Map([...known.keys()].map((z) => [z, 0])),
      mode: 'enter',
    };
  }
  if (allWere) return { states: next, rates: new Map([...known.keys()].map((z) => [z, rate(z)])), mode: 'leave' };
  const rates = new Map<string, number>();
  for (const [zone, state] of next) if (known.get(zone) !== state) rates.set(zone, rate(zone));
  return { states: next, rates };
}

const isNoExecute = (key: string) => (t: Taint) => t.key === key && t.effect === 'NoExecute';

/**
 * What processTaintBaseEviction does with a node this pass: Ready False or Unknown and already
 * carrying the opposite NoExecute taint → swap it at once (not rate-limited: the node was already
 * judged); otherwise → queue it for its zone's rate limiter (`requeue`: its taint is missing, so
 * it is queued afresh even if it was handed out before); Ready True → lift its NoExecute taints and
 * forget it; no Ready condition yet → nothing.
 */
export type NoExecuteStep =
  | { readonly kind: 'none' }
  | { readonly kind: 'swapNow' }
  | { readonly kind: 'queue'; readonly requeue: boolean }
  | { readonly kind: 'reachable' };

export function noExecuteStep(node: Node): NoExecuteStep {
  const status = nodeReadyCondition(node)?.status;
  if (status === undefined) return { kind: 'none' };
  if (status === 'True') return { kind: 'reachable' };
  const [want, opposite] =
    status === 'False' ? [TAINT_NOT_READY, TAINT_UNREACHABLE] : [TAINT_UNREACHABLE, TAINT_NOT_READY];
  const taints = node.spec?.taints ?? [];
  if (taints.some(isNoExecute(opposite))) return { kind: 'swapNow' };
  return { kind: 'queue', requeue: !taints.some(isNoExecute(want)) };
}

/**
 * SwapNodeControllerTaint for the Ready condition: the NoExecute taint it calls for (timeAdded now;
 * evictions count from it) in place of the opposite one; null when there is nothing to change or the
 * node is Ready (or has not reported) after all.
 */
export function swappedNoExecuteTaints(node: Node, nowMs: number): Taint[] | null {
  const status = nodeReadyCondition(node)?.status;
  if (status !== 'False' && status !== 'Unknown') return null;
  const [want, opposite] =
    status === 'False' ? [TAINT_NOT_READY, TAINT_UNREACHABLE] : [TAINT_UNREACHABLE, TAINT_NOT_READY];
  const current = node.spec?.taints ?? [];
  const kept = current.filter((t) => !isNoExecute(opposite)(t));
  if (kept.some(isNoExecute(want))) return kept.length === current.length ? null : kept;
  return [...kept, { key: want, effect: 'NoExecute', timeAdded: metaTime(nowMs) }];
}

/** markNodeAsReachable: the node's taints without the NoExecute not-ready / unreachable ones; null when it has neither. */
export function withoutNoExecuteLifecycleTaints(node: Node): Taint[] | null {
  const current = node.spec?.taints ?? [];
  const kept = current.filter((t) => !isNoExecute(TAINT_NOT_READY)(t) && !isNoExecute(TAINT_UNREACHABLE)(t));
  return kept.length === current.length ? null : kept;
}
