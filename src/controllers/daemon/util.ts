/**
 * The daemon controller's pod rules (kube's pkg/controller/daemon/util and the node predicates of
 * daemon_controller.go): the tolerations every daemon pod gets, the node-affinity term that pins a
 * pod to its node, whether a node should run (or keep running) the set's pod, which node a pod is
 * for, and whether a pod is of the current revision. Pure.
 */
import type { DaemonSet } from 'kubernetes-types/apps/v1.js';
import type { Affinity, Node, Pod, PodSpec, PodTemplateSpec, Taint, Toleration } from 'kubernetes-types/core/v1.js';
import { scaledIntOrPercent } from '../../kube/intorpercent.js';
import {
  TAINT_DISK_PRESSURE,
  TAINT_MEMORY_PRESSURE,
  TAINT_NETWORK_UNAVAILABLE,
  TAINT_NOT_READY,
  TAINT_PID_PRESSURE,
  TAINT_UNREACHABLE,
  TAINT_UNSCHEDULABLE,
} from '../../kube/names.js';
import { tolerates } from '../../kube/node.js';
import { nodeSelectorTermsMatch } from '../../kube/nodeselector.js';
import { CONTROLLER_REVISION_HASH_LABEL } from '../../kube/workloads.js';

/** The label with the set's template generation on the pods it makes (deprecated upstream, still written). */
export const POD_TEMPLATE_GENERATION_LABEL = 'pod-template-generation';
/** apps/v1 keeps the template generation in this annotation of the set. */
export const TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';

/**
 * AddOrUpdateDaemonPodTolerations: a daemon pod stays on a not-ready or unreachable node (no
 * tolerationSeconds: never evicted), runs under memory, disk and PID pressure and on cordoned
 * nodes, and a host-network one where the network is not set up yet.
 */
export function daemonTolerations(spec: PodSpec): Toleration[] {
  const add: Toleration[] = [
    { key: TAINT_NOT_READY, operator: 'Exists', effect: 'NoExecute' },
    { key: TAINT_UNREACHABLE, operator: 'Exists', effect: 'NoExecute' },
    { key: TAINT_DISK_PRESSURE, operator: 'Exists', effect: 'NoSchedule' },
    { key: TAINT_MEMORY_PRESSURE, operator: 'Exists', effect: 'NoSchedule' },
    { key: TAINT_PID_PRESSURE, operator: 'Exists', effect: 'NoSchedule' },
    { key: TAINT_UNSCHEDULABLE, operator: 'Exists', effect: 'NoSchedule' },
  ];
  if (spec.hostNetwork) add.push({ key: TAINT_NETWORK_UNAVAILABLE, operator: 'Exists', effect: 'NoSchedule' });
  const out = [...(spec.tolerations ?? [])];
  for (const t of add) {
    // AddOrUpdateTolerationInPodSpec: an equal toleration (key, operator, value, effect) is replaced, not repeated.
    const same = out.findIndex(
      (x) =>
        (x.key ?? '') === t.key &&
        (x.operator ?? 'Equal') === t.operator &&
        (x.value ?? '') === '' &&
        (x.effect ?? '') === t.effect,
    );
    if (same >= 0) out[same] = t;
    else out.push(t);
  }
  return out;
}

/**
 * ReplaceDaemonSetPodNodeNameNodeAffinity: the pod's required node affinity becomes the single
 * term `metadata.name In [node]` (its own terms were checked against the node already); preferred
 * terms and other affinities are kept. The scheduler then binds the pod to that node.
 */
export function pinToNode(affinity: Affinity | undefined, node: string): Affinity {
  const required = {
    nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }],
  };
  return {
    ...affinity,
    nodeAffinity: { ...affinity?.nodeAffinity, requiredDuringSchedulingIgnoredDuringExecution: required },
  };
}

/**
 * GetTargetNodeName: the pod's spec.nodeName, else the node its pinning term names; undefined for
 * a pod that names no single node (the controller ignores it).
 */
export function targetNodeName(p: Pod): string | undefined {
  if (p.spec?.nodeName) return p.spec.nodeName;
  const terms = p.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (terms?.length !== 1) return undefined;
  const fields = terms[0]?.matchFields;
  const f = fields?.length === 1 ? fields[0] : undefined;
  if (f?.key !== 'metadata.name' || f.operator !== 'In' || f.values?.length !== 1) return undefined;
  return f.values[0];
}

/** The set's template generation (its annotation), undefined when absent or unreadable. */
export function templateGeneration(ds: DaemonSet): number | undefined {
  const v = ds.metadata?.annotations?.[TEMPLATE_GENERATION_ANNOTATION];
  if (v === undefined) return undefined;
  const n = Number(v);
  return Number.isInteger(n) ? n : undefined;
}

/** IsPodUpdated: the pod carries the current revision's hash, or the set's template generation. */
export function isPodUpdated(p: Pod, hash: string, generation: number | undefined): boolean {
  const labels = p.metadata?.labels ?? {};
  const templateMatches = generation !== undefined && labels[POD_TEMPLATE_GENERATION_LABEL] === String(generation);
  return (hash !== '' && labels[CONTROLLER_REVISION_HASH_LABEL] === hash) || templateMatches;
}

/** CreatePodTemplate: the set's template with the daemon tolerations and the generation and hash labels. */
export function daemonPodTemplate(ds: DaemonSet, hash: string): PodTemplateSpec {
  const t = structuredClone(ds.spec?.template ?? {});
  const spec: PodSpec = t.spec ?? { containers: [] };
  spec.tolerations = daemonTolerations(spec);
  const generation = templateGeneration(ds);
  t.metadata = {
    ...t.metadata,
    labels: {
      ...t.metadata?.labels,
      ...(generation !== undefined ? { [POD_TEMPLATE_GENERATION_LABEL]: String(generation) } : {}),
      ...(hash ? { [CONTROLLER_REVISION_HASH_LABEL]: hash } : {}),
    },
  };
  t.spec = spec;
  return t;
}

/** v1helper.FindMatchingUntoleratedTaint over the taints `filter` keeps. */
function untolerated(taints: readonly Taint[], tolerations: readonly Toleration[], filter: (t: Taint) => boolean) {
  return taints.find((t) => filter(t) && !tolerations.some((x) => tolerates(x, t)));
}

export interface NodeVerdict {
  /** A daemon pod should be created on the node when it has none. */
  readonly shouldRun: boolean;
  /** A daemon pod already there may stay (false: delete it). */
  readonly shouldContinueRunning: boolean;
}

/**
 * NodeShouldRunDaemonPod: the set's pod (with the daemon tolerations) fits the node's name, its
 * nodeSelector and required node affinity, and tolerates its NoSchedule and NoExecute taints. A
 * node it does not fit for taints alone keeps a pod already there unless a NoExecute taint is not
 * tolerated. A cordoned node runs daemon pods: they tolerate the unschedulable taint.
 */
export function nodeShouldRunDaemonPod(ds: DaemonSet, node: Node): NodeVerdict {
  const name = node.metadata?.name ?? '';
  const spec = ds.spec?.template?.spec;
  if (spec?.nodeName && spec.nodeName !== name) return { shouldRun: false, shouldContinueRunning: false };
  const labels = node.metadata?.labels ?? {};
  const selectorFits = Object.entries(spec?.nodeSelector ?? {}).every(([k, v]) => labels[k] === v);
  const required = spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  const affinityFits = !required || nodeSelectorTermsMatch(required.nodeSelectorTerms ?? [], node);
  if (!selectorFits || !affinityFits) return { shouldRun: false, shouldContinueRunning: false };
  const tolerations = daemonTolerations(spec ?? { containers: [] });
  const taints = node.spec?.taints ?? [];
  const blocking = untolerated(taints, tolerations, (t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute');
  if (!blocking) return { shouldRun: true, shouldContinueRunning: true };
  return {
    shouldRun: false,
    shouldContinueRunning: !untolerated(taints, tolerations, (t) => t.effect === 'NoExecute'),
  };
}

/** podByCreationTimestampAndPhase: scheduled first, then oldest, then by name. */
export function byCreationAndPhase(a: Pod, b: Pod): number {
  const sa = a.spec?.nodeName ? 0 : 1;
  const sb = b.spec?.nodeName ? 0 : 1;
  if (sa !== sb) return sa - sb;
  const ta = a.metadata?.creationTimestamp ?? '';
  const tb = b.metadata?.creationTimestamp ?? '';
  if (ta !== tb) return Date.parse(ta) - Date.parse(tb);
  return (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? '');
}

/** The RollingUpdate bounds against `desired` nodes (UnavailableCount, SurgeCount; rounded up). */
export function rollingBounds(ds: DaemonSet, desired: number): { maxSurge: number; maxUnavailable: number } {
  const s = ds.spec?.updateStrategy;
  if (s?.type !== 'RollingUpdate' && s?.type !== undefined) return { maxSurge: 0, maxUnavailable: 0 };
  let maxUnavailable = scaledIntOrPercent(s?.rollingUpdate?.maxUnavailable ?? 1, desired, true);
  const maxSurge = scaledIntOrPercent(s?.rollingUpdate?.maxSurge ?? 0, desired, true);
  // An impossible configuration (both zero once scaled) falls back to one unavailable pod.
  if (desired > 0 && maxUnavailable === 0 && maxSurge === 0) maxUnavailable = 1;
  return { maxSurge, maxUnavailable };
}

/** AllowsSurge: RollingUpdate with a non-zero maxSurge. */
export function allowsSurge(ds: DaemonSet): boolean {
  const s = ds.spec?.updateStrategy;
  return (
    (s?.type ?? 'RollingUpdate') === 'RollingUpdate' && scaledIntOrPercent(s?.rollingUpdate?.maxSurge, 1, true) > 0
  );
}
