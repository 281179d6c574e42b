/**
 * Why a pod is not Running, as the first blocking step of its path: scheduling (the scheduler's
 * own PreFilter/Filter verdict per node, controllers/scheduler filterNodes), its claims' binding,
 * attach (the attach/detach controller's VolumeAttachment), the node's mounts (the volume manager's
 * FailedMount events), the sandbox, init containers, then image pulls and containers.
 */
import type { ContainerStatus } from 'kubernetes-types/core/v1.js';
import { attachmentName } from '../controllers/attachdetach/types.js';
import { attachRequired } from '../controllers/attachdetach/desired.js';
import { filterNodes, isNodeFailure } from '../controllers/scheduler/schedule.js';
import { DEFAULT_SCHEDULER_NAME, podClaimNames } from '../controllers/scheduler/types.js';
import { isClaimFullyBound } from '../controllers/scheduler/volumes.js';
import { explainClaim } from './claim.js';
import { clusterViewOf, eventTime, type ExplainSource, type Pod } from './source.js';
import { explanation, type Explanation, type Finding, type ObjectRef } from './types.js';

/** Event reasons of the node's volume manager when it cannot attach, mount or map a volume. */
const MOUNT_FAILURES = new Set(['FailedMount', 'FailedMapVolume', 'FailedAttachVolume']);

export function explainPod(pod: Pod, s: ExplainSource): Explanation {
  const ns = pod.metadata?.namespace ?? '';
  const target: ObjectRef = { kind: 'Pod', namespace: ns, name: pod.metadata?.name ?? '' };
  const phase = pod.status?.phase ?? 'Pending';
  if (phase === 'Succeeded') return explanation(target, phase, true, 'all containers exited successfully');
  if (phase === 'Failed')
    return explanation(target, phase, false, `failed: ${pod.status?.reason ?? ''} ${pod.status?.message ?? ''}`.trim());
  if (pod.metadata?.deletionTimestamp)
    return explanation(target, phase, false, 'being deleted: containers are stopping and volumes being unmounted');
  if (!pod.spec?.nodeName) return explainUnscheduled(target, pod, s);
  return explainAssigned(target, pod, s);
}

function explainUnscheduled(target: ObjectRef, pod: Pod, s: ExplainSource): Explanation {
  const scheduler = pod.spec?.schedulerName ?? DEFAULT_SCHEDULER_NAME;
  if (scheduler !== DEFAULT_SCHEDULER_NAME)
    return explanation(target, 'Pending', false, `waiting for scheduler "${scheduler}", which Stowage does not run`);
  const outcome = filterNodes(pod, clusterViewOf(s));
  const ns = target.namespace ?? '';
  if (outcome.kind === 'preFilterReject') {
    const findings: Finding[] = [];
    const related: ObjectRef[] = [];
    for (const name of podClaimNames(pod)) {
      const c = s.claim(ns, name);
      if (c && isClaimFullyBound(c)) continue;
      const ref = { kind: 'PersistentVolumeClaim', namespace: ns, name };
      related.push(ref);
      findings.push({
        code: 'ClaimNotBound',
        message: c ? `claim ${name}: ${explainClaim(c, s).summary}` : `claim ${name} does not exist`,
        object: ref,
      });
    }
    return explanation(target, 'Pending', false, `unschedulable: ${outcome.message}`, findings, related);
  }
  if (outcome.nodes.length === 0) return explanation(target, 'Pending', false, 'unschedulable: there are no nodes');
  const findings: Finding[] = [];
  const fits: string[] = [];
  for (const { node, result } of outcome.nodes) {
    if (!isNodeFailure(result)) fits.push(node);
    else
      findings.push({
        code: result.code,
        message: `node ${node}: ${result.reasons.join('; ')}`,
        object: { kind: 'Node', name: node },
      });
  }
  if (fits.length === 0)
    return explanation(target, 'Pending', false, `unschedulable: no node of ${outcome.nodes.length} fits`, findings);
  const cond = pod.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
  const extra = cond?.message ? ` (last attempt: ${cond.message})` : '';
  return explanation(
    target,
    'Pending',
    false,
    `fits node(s) ${fits.join(', ')}; waiting for the scheduler to bind it and its volumes${extra}`,
    findings,
  );
}

/** Waiting reasons the kubelet reports before volumes and sandbox are ready. */
const CREATING = new Set(['', 'ContainerCreating', 'PodInitializing']);

function started(st: readonly ContainerStatus[] | undefined): boolean {
  return (st ?? []).some((c) => c.state?.running !== undefined || c.state?.terminated !== undefined);
}

function explainAssigned(target: ObjectRef, pod: Pod, s: ExplainSource): Explanation {
  const phase = pod.status?.phase ?? 'Pending';
  const node = pod.spec?.nodeName ?? '';
  const anyStarted = started(pod.status?.initContainerStatuses) || started(pod.status?.containerStatuses);
  // A container waiting for another reason (an image pull...) means its volumes are set up.
  const creating = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])].every(
    (c) => !c.state?.waiting || CREATING.has(c.state.waiting.reason ?? ''),
  );
  if (!anyStarted && creating) {
    const v = volumeBlock(target, pod, s, node);
    if (v) return v;
    const sandbox = pod.status?.conditions?.find((c) => c.type === 'PodReadyToStartContainers');
    if (sandbox?.status === 'False') {
      const last = lastWarning(s, target, (r) => /sandbox/i.test(r));
      return explanation(target, phase, false, `waiting for the pod sandbox on node ${node}${last ? `: ${last}` : ''}`);
    }
  }
  for (const c of pod.status?.initContainerStatuses ?? []) {
    if (c.state?.terminated?.exitCode === 0) continue;
    const f = containerFinding(c, 'init container');
    if (f) return explanation(target, phase, false, f.message, [f]);
  }
  const findings = (pod.status?.containerStatuses ?? []).flatMap((c) => {
    const f = containerFinding(c, 'container');
    return f ? [f] : [];
  });
  const first = findings[0];
  if (first) return explanation(target, phase, false, first.message, findings);
  const ready = pod.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
  if (phase === 'Running')
    return explanation(
      target,
      phase,
      ready,
      ready ? `running on node ${node}` : `running on node ${node}, not ready yet`,
    );
  return explanation(target, phase, false, `assigned to node ${node}; the node has not started it yet`);
}

/** A container that is waiting, or terminated with an error, as a finding. */
function containerFinding(c: ContainerStatus, what: string): Finding | undefined {
  const w = c.state?.waiting;
  if (w) {
    const reason = w.reason ?? 'Waiting';
    return { code: reason, message: `${what} ${c.name} is waiting: ${reason}${w.message ? ` (${w.message})` : ''}` };
  }
  const t = c.state?.terminated;
  if (t && t.exitCode !== 0)
    return {
      code: t.reason ?? 'Error',
      message: `${what} ${c.name} exited with code ${t.exitCode}${t.message ? `: ${t.message}` : ''}`,
    };
  return undefined;
}

function lastWarning(s: ExplainSource, target: ObjectRef, reason: (r: string) => boolean): string | undefined {
  const evs = s
    .eventsFor(target.kind, target.namespace ?? '', target.name)
    .filter((e) => e.type === 'Warning' && reason(e.reason ?? ''));
  const last = evs[evs.length - 1];
  return last ? `${last.reason ?? ''}: ${last.message ?? ''}` : undefined;
}

/** The first volume step not done for a scheduled pod: a claim not bound, an attach, a mount. */
function volumeBlock(target: ObjectRef, pod: Pod, s: ExplainSource, node: string): Explanation | undefined {
  const ns = target.namespace ?? '';
  const phase = pod.status?.phase ?? 'Pending';
  for (const name of podClaimNames(pod)) {
    const ref = { kind: 'PersistentVolumeClaim', namespace: ns, name };
    const c = s.claim(ns, name);
    if (!c) return explanation(target, phase, false, `waiting for claim ${name}, which does not exist`, [], [ref]);
    if (!isClaimFullyBound(c)) {
      const why = explainClaim(c, s).summary;
      return explanation(target, phase, false, `waiting for claim ${name} to be bound: ${why}`, [], [ref]);
    }
    const pvName = c.spec?.volumeName ?? '';
    const csi = s.volume(pvName)?.spec?.csi;
    if (!csi || !attachRequired(s.csiDriver(csi.driver))) continue;
    const vaName = attachmentName(csi.volumeHandle, csi.driver, node);
    const vaRef = { kind: 'VolumeAttachment', name: vaName };
    const va = s.attachment(vaName);
    if (!va)
      return explanation(
        target,
        phase,
        false,
        `waiting for the attach/detach controller to create VolumeAttachment ${vaName} (volume ${pvName} on node ${node})`,
      );
    if (va.status?.attached !== true) {
      const err = va.status?.attachError?.message;
      return explanation(
        target,
        phase,
        false,
        err
          ? `attaching volume ${pvName} to node ${node} failed: ${err}`
          : `waiting for ${csi.driver}'s attacher to attach volume ${pvName} to node ${node}`,
        err ? [{ code: 'AttachError', message: err, object: vaRef }] : [],
        [vaRef],
      );
    }
  }
  const failed = lastFailedNodeCall(s, pod);
  if (failed) return failed(target, phase);
  const evs = s
    .eventsFor('Pod', ns, target.name)
    .filter((e) => MOUNT_FAILURES.has(e.reason ?? ''))
    .sort((a, b) => eventTime(a) - eventTime(b));
  const last = evs[evs.length - 1];
  if (last)
    return explanation(
      target,
      phase,
      false,
      `the node cannot set up a volume (${last.reason ?? ''}): ${last.message ?? ''}`,
      [{ code: last.reason ?? '', message: last.message ?? '' }],
    );
  return undefined;
}

/**
 * The driver's own answer when the node's last Node* call for one of the pod's volumes failed
 * (the trace keeps it even when the event was aggregated away).
 */
function lastFailedNodeCall(
  s: ExplainSource,
  pod: Pod,
): ((target: ObjectRef, phase: string) => Explanation) | undefined {
  const ns = pod.metadata?.namespace ?? '';
  for (const name of podClaimNames(pod)) {
    const pvName = s.claim(ns, name)?.spec?.volumeName ?? '';
    const handle = s.volume(pvName)?.spec?.csi?.volumeHandle;
    if (!handle) continue;
    const node = s.csiCalls(handle).filter((c) => c.method.startsWith('/csi.v1.Node/') && !c.method.endsWith('Stats'));
    const last = node[node.length - 1];
    if (!last || last.code === 'OK') continue;
    const method = last.method.split('/')[2] ?? last.method;
    const message = `${method} of volume ${pvName} failed: ${last.code}: ${last.error ?? ''}`;
    return (target, phase) =>
      explanation(target, phase, false, `the node cannot set up a volume: ${message}`, [
        {
          code: last.code,
          message: `${last.driver} answered ${method} at ${new Date(last.startMs).toISOString()} with ${last.code}: ${last.error ?? ''}`,
        },
      ]);
  }
  return undefined;
}
