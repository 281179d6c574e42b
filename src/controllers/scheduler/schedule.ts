/**
 * One scheduling cycle for one pod, pure: PreFilter (claims), Filter (every node, kube's plugin
 * order), a simple score (fewest attachable volumes, then name), and kube's FitError message.
 */
import { nodeFilter } from './nodes.js';
import { classifyClaims, readWriteOncePodConflict, volumeFilter, volumesOnNode, type PodVolumes } from './volumes.js';
import { type ClusterView, type NodeFailure, type Pod } from './types.js';
import { nameOf } from '../../kube/meta.js';

export type ScheduleDecision =
  | { readonly kind: 'fit'; readonly node: string; readonly volumes: PodVolumes }
  | { readonly kind: 'unschedulable'; readonly message: string };

/** One node's Filter outcome: the failure with its reasons, or the volume decisions when it fits. */
export interface NodeVerdict {
  readonly node: string;
  readonly result: NodeFailure | PodVolumes;
}

export type FilterOutcome =
  | { readonly kind: 'preFilterReject'; readonly message: string }
  | { readonly kind: 'filtered'; readonly nodes: readonly NodeVerdict[] };

/** PreFilter and Filter for every node: what schedulePod decides from, and what `stowage why` shows. */
export function filterNodes(pod: Pod, view: ClusterView): FilterOutcome {
  const pre = classifyClaims(pod, view);
  if (pre.kind === 'reject') return { kind: 'preFilterReject', message: pre.message };
  const rwop = readWriteOncePodConflict(pod, view);
  return {
    kind: 'filtered',
    nodes: view.nodes().map((n) => ({
      node: nameOf(n),
      result: nodeFilter(pod, n) ?? volumeFilter(pod, n, rwop, pre.bound, pre.delayed, view),
    })),
  };
}

export function isNodeFailure(r: NodeFailure | PodVolumes): r is NodeFailure {
  return 'code' in r;
}

export function schedulePod(pod: Pod, view: ClusterView): ScheduleDecision {
  const numNodes = view.nodes().length;
  const outcome = filterNodes(pod, view);
  if (outcome.kind === 'preFilterReject')
    return { kind: 'unschedulable', message: fitErrorMessage(numNodes, outcome.message, []) };
  const failures: NodeFailure[] = [];
  const fits: Array<{ node: string; volumes: PodVolumes; score: number }> = [];
  for (const { node, result } of outcome.nodes) {
    if (isNodeFailure(result)) failures.push(result);
    else fits.push({ node, volumes: result, score: 0 });
  }
  if (fits.length === 0) return { kind: 'unschedulable', message: fitErrorMessage(numNodes, null, failures) };
  if (fits.length > 1) for (const f of fits) f.score = volumesOnNode(f.node, view); // scoring a lone candidate is wasted work
  fits.sort((a, b) => a.score - b.score || (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
  const best = fits[0]!;
  return { kind: 'fit', node: best.node, volumes: best.volumes };
}

function histogram(entries: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const e of entries) counts.set(e, (counts.get(e) ?? 0) + 1);
  return [...counts]
    .map(([r, n]) => `${n} ${r}`)
    .sort()
    .join(', ');
}

/**
 * framework.FitError.Error(): "0/N nodes are available: <PreFilter message | sorted reason
 * histogram>. preemption: 0/N nodes are available: <what preemption concluded per node>."
 * Stowage never preempts; the tail says what kube's DefaultPreemption would on a cluster without
 * lower-priority pods.
 */
export function fitErrorMessage(
  numNodes: number,
  preFilterMessage: string | null,
  failures: readonly NodeFailure[],
): string {
  if (numNodes === 0) return 'no nodes available to schedule pods';
  const head = `0/${numNodes} nodes are available:`;
  const body = preFilterMessage ?? histogram(failures.flatMap((f) => f.reasons));
  const verdicts = preFilterMessage
    ? Array.from({ length: numNodes }, () => 'Preemption is not helpful for scheduling')
    : failures.map((f) =>
        f.code === 'UnschedulableAndUnresolvable'
          ? 'Preemption is not helpful for scheduling'
          : 'No preemption victims found for incoming pod',
      );
  // The preemption message is itself a FitError text ending in "." and gets the separator's "." again:
  // Kubernetes really prints "..".
  return `${head} ${body}. preemption: ${head} ${histogram(verdicts)}..`;
}
