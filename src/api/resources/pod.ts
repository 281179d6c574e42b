import { patchMetaFor, schemaFor } from '../openapi/schemas.js';
import { keepSpec, keepStatus, listAt, objectAt, strAt } from './corehelpers.js';
import { nameIsDNSSubdomain, validateObjectMeta, validateObjectMetaUpdate } from './names.js';
import { addDefaultTolerations, admitPriority, applyPodDefaults, podQosClass } from './poddefaults.js';
import { validatePodSpec, validatePodSpecUpdate, validatePodStatus } from './podvalidation.js';
import { age, ageColumn, column, fieldDoc, nameColumn, timestampSince } from './printing.js';
import { badRequest, conflict } from '../status.js';
import type { ActionSubresource, KubeObject, ResourceDef } from './types.js';

type Obj = Record<string, unknown>;

const statusOf = (o: KubeObject): Obj | undefined => objectAt(o, 'status');
const specOf = (o: KubeObject): Obj | undefined => objectAt(o, 'spec');

/** Reason a node controller gives pods on an unreachable node. */
const NODE_UNREACHABLE_REASON = 'NodeLost';

function isRestartableInit(c: Obj | undefined): boolean {
  return c?.restartPolicy === 'Always';
}

function laterTime(a: string, b: unknown): string {
  if (typeof b !== 'string' || !b) return a;
  return !a || Date.parse(b) > Date.parse(a) ? b : a;
}

function terminatedFinishedAt(cs: Obj): unknown {
  return objectAt(objectAt(cs, 'lastState'), 'terminated')?.finishedAt;
}

/**
 * kubectl's pod READY / STATUS / RESTARTS as kube-apiserver's printer computes them: init
 * container progress (`Init:1/2`, `Init:CrashLoopBackOff`), the last waiting/terminated reason
 * of the containers, `Terminating` while deleting, and `N (Xm ago)` for restarts.
 */
export function podSummary(pod: KubeObject, now: number): { ready: string; status: string; restarts: string } {
  const spec = specOf(pod);
  const status = statusOf(pod);
  const containers = listAt(spec, 'containers');
  const initContainers = listAt(spec, 'initContainers');
  const initByName = new Map(initContainers.map((c) => [strAt(c, 'name'), c]));
  const total = containers.length + initContainers.filter(isRestartableInit).length;
  let ready = 0;
  let restarts = 0;
  let sidecarRestarts = 0;
  let lastRestart = '';
  let lastSidecarRestart = '';
  const phase = strAt(status, 'phase');
  let reason = strAt(status, 'reason') || phase;
  for (const c of listAt(status, 'conditions')) {
    if (c.type === 'PodScheduled' && c.reason === 'SchedulingGated') reason = 'SchedulingGated';
  }

  let initializing = false;
  const initStatuses = listAt(status, 'initContainerStatuses');
  for (const [i, cs] of initStatuses.entries()) {
    const count = typeof cs.restartCount === 'number' ? cs.restartCount : 0;
    restarts += count;
    lastRestart = laterTime(lastRestart, terminatedFinishedAt(cs));
    const sidecar = isRestartableInit(initByName.get(strAt(cs, 'name')));
    if (sidecar) {
      sidecarRestarts += count;
      lastSidecarRestart = laterTime(lastSidecarRestart, terminatedFinishedAt(cs));
    }
    const state = objectAt(cs, 'state');
    const terminated = objectAt(state, 'terminated');
    const waiting = objectAt(state, 'waiting');
    if (terminated && terminated.exitCode === 0) continue;
    if (sidecar && cs.started === true) {
      if (cs.ready === true) ready++;
      continue;
    }
    if (terminated) {
      const r = strAt(terminated, 'reason');
      if (r) reason = `Init:${r}`;
      else if (typeof terminated.signal === 'number' && terminated.signal !== 0)
        reason = `Init:Signal:${terminated.signal}`;
      else reason = `Init:ExitCode:${String(terminated.exitCode ?? 0)}`;
    } else if (waiting && strAt(waiting, 'reason') && strAt(waiting, 'reason') !== 'PodInitializing') {
      reason = `Init:${strAt(waiting, 'reason')}`;
    } else {
      reason = `Init:${i}/${initContainers.length}`;
    }
    initializing = true;
    break;
  }

  const initialized = listAt(status, 'conditions').some((c) => c.type === 'Initialized' && c.status === 'True');
  if (!initializing || initialized) {
    restarts = sidecarRestarts;
    lastRestart = lastSidecarRestart;
    let hasRunning = false;
    const statuses = listAt(status, 'containerStatuses');
    for (let i = statuses.length - 1; i >= 0; i--) {
      const cs = statuses[i] as Obj;
      restarts += typeof cs.restartCount === 'number' ? cs.restartCount : 0;
      lastRestart = laterTime(lastRestart, terminatedFinishedAt(cs));
      const state = objectAt(cs, 'state');
      const waiting = objectAt(state, 'waiting');
      const terminated = objectAt(state, 'terminated');
      if (waiting && strAt(waiting, 'reason')) reason = strAt(waiting, 'reason');
      else if (terminated && strAt(terminated, 'reason')) reason = strAt(terminated, 'reason');
      else if (terminated) {
        reason =
          typeof terminated.signal === 'number' && terminated.signal !== 0
            ? `Signal:${terminated.signal}`
            : `ExitCode:${String(terminated.exitCode ?? 0)}`;
      } else if (cs.ready === true && objectAt(state, 'running')) {
        hasRunning = true;
        ready++;
      }
    }
    if (reason === 'Completed' && hasRunning) {
      const podReady = listAt(status, 'conditions').some((c) => c.type === 'Ready' && c.status === 'True');
      reason = podReady ? 'Running' : 'NotReady';
    }
  }

  if (pod.metadata.deletionTimestamp && strAt(status, 'reason') === NODE_UNREACHABLE_REASON) reason = 'Unknown';
  else if (pod.metadata.deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed') reason = 'Terminating';

  let restartsText = String(restarts);
  if (restarts !== 0 && lastRestart) restartsText = `${restarts} (${timestampSince(lastRestart, now)} ago)`;
  return { ready: `${ready}/${total}`, status: reason, restarts: restartsText };
}

function readinessGates(pod: KubeObject): string {
  const gates = listAt(specOf(pod), 'readinessGates');
  if (gates.length === 0) return '<none>';
  const conditions = listAt(statusOf(pod), 'conditions');
  let trueCount = 0;
  for (const g of gates) {
    const c = conditions.find((x) => x.type === g.conditionType);
    if (c?.status === 'True') trueCount++;
  }
  return `${trueCount}/${gates.length}`;
}

export const podResource: ResourceDef = {
  group: '',
  version: 'v1',
  kind: 'Pod',
  listKind: 'PodList',
  plural: 'pods',
  singular: 'pod',
  namespaced: true,
  shortNames: ['po'],
  categories: ['all'],
  hasStatus: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  schema: schemaFor('', 'v1', 'Pod'),
  fieldSelectors: {
    'spec.nodeName': (o) => strAt(specOf(o), 'nodeName'),
    'spec.restartPolicy': (o) => strAt(specOf(o), 'restartPolicy'),
    'spec.schedulerName': (o) => strAt(specOf(o), 'schedulerName'),
    'spec.serviceAccountName': (o) => strAt(specOf(o), 'serviceAccountName'),
    'spec.hostNetwork': (o) => String(specOf(o)?.hostNetwork === true),
    'status.phase': (o) => strAt(statusOf(o), 'phase'),
    'status.podIP': (o) => strAt(statusOf(o), 'podIP'),
    'status.nominatedNodeName': (o) => strAt(statusOf(o), 'nominatedNodeName'),
  },
  columns: [
    nameColumn(),
    column('Ready', 'The aggregate readiness state of this pod for accepting traffic.'),
    column('Status', 'The aggregate status of the containers in this pod.'),
    column(
      'Restarts',
      'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
    ),
    ageColumn(),
    column('IP', fieldDoc('', 'Pod', ['status', 'podIP']), { wide: true }),
    column('Node', fieldDoc('', 'Pod', ['spec', 'nodeName']), { wide: true }),
    column('Nominated Node', fieldDoc('', 'Pod', ['status', 'nominatedNodeName']), { wide: true }),
    column('Readiness Gates', fieldDoc('', 'Pod', ['spec', 'readinessGates']), { wide: true }),
  ],
  row(o, now) {
    const s = podSummary(o, now);
    const ips = listAt(statusOf(o), 'podIPs');
    return [
      o.metadata.name ?? '',
      s.ready,
      s.status,
      s.restarts,
      age(o, now),
      strAt(ips[0], 'ip') || '<none>',
      strAt(specOf(o), 'nodeName') || '<none>',
      strAt(statusOf(o), 'nominatedNodeName') || '<none>',
      readinessGates(o),
    ];
  },

  defaults: applyPodDefaults,
  prepareForCreate(obj) {
    applyPodDefaults(obj);
    obj.status = { phase: 'Pending', qosClass: podQosClass(obj) };
  },
  prepareForUpdate(obj, old) {
    applyPodDefaults(obj);
    keepStatus(obj, old);
  },
  mutatingAdmission(obj, old) {
    admitPriority(obj, old);
    addDefaultTolerations(obj);
  },
  prepareForStatusUpdate(obj, old) {
    keepSpec(obj, old);
    // The status writer (a kubelet) may not touch owner references.
    if (old.metadata.ownerReferences === undefined) delete obj.metadata.ownerReferences;
    else obj.metadata.ownerReferences = structuredClone(old.metadata.ownerReferences);
  },
  validateCreate(obj) {
    return [
      ...validateObjectMeta(obj.metadata, { namespaced: true, nameFn: nameIsDNSSubdomain }),
      ...validatePodSpec(obj),
    ];
  },
  validateUpdate(obj, old) {
    return [
      ...validateObjectMetaUpdate(obj.metadata, old.metadata),
      ...validatePodSpec(obj),
      ...validatePodSpecUpdate(obj, old),
    ];
  },
  validateStatusUpdate(obj, old) {
    return [...validateObjectMetaUpdate(obj.metadata, old.metadata), ...validatePodStatus(obj, old)];
  },
  patchMeta: patchMetaFor('', 'v1', 'Pod'),
  subresources: [
    binding(),
    { type: 'eviction', name: 'eviction', bodyKind: { group: 'policy', version: 'v1', kind: 'Eviction' } },
    { type: 'stream', name: 'log', kind: { group: '', version: 'v1', kind: 'Pod' }, verbs: ['get'] },
    {
      type: 'stream',
      name: 'exec',
      kind: { group: '', version: 'v1', kind: 'PodExecOptions' },
      verbs: ['create', 'get'],
    },
    {
      type: 'stream',
      name: 'attach',
      kind: { group: '', version: 'v1', kind: 'PodAttachOptions' },
      verbs: ['create', 'get'],
    },
  ],
  gracefulDeletion: podGracePeriod,
  returnDeletedObject: true,
};

function bindingTarget(body: unknown): string {
  return strAt(objectAt(body, 'target'), 'name');
}

/** POST pods/<name>/binding: sets spec.nodeName once, as the scheduler does. */
function binding(): ActionSubresource {
  return {
    type: 'action',
    name: 'binding',
    bodyKind: { group: '', version: 'v1', kind: 'Binding' },
    validateBody(body) {
      if (!bindingTarget(body)) throw badRequest('target.name: Required value');
    },
    apply(current, body, name) {
      const cur = structuredClone(current);
      const spec = (cur.spec ?? {}) as { nodeName?: string };
      if (spec.nodeName) {
        throw conflict(
          { group: '', resource: 'pods/binding', name },
          `pod ${name} is already assigned to node "${spec.nodeName}"`,
        );
      }
      cur.spec = { ...spec, nodeName: bindingTarget(body) };
      return cur;
    },
  };
}

/**
 * Pods bound to a node are deleted gracefully: the node agent confirms with a grace-0 delete once
 * their volumes are gone. Unbound and finished pods, and an explicit grace 0, go at once.
 */
function podGracePeriod(obj: KubeObject, requested: number | undefined): number | undefined {
  const spec = (obj.spec ?? {}) as { nodeName?: string; terminationGracePeriodSeconds?: number };
  const phase = (obj.status as { phase?: string } | undefined)?.phase;
  if (!spec.nodeName || phase === 'Succeeded' || phase === 'Failed') return undefined;
  // A grace period of 0 on a pod already terminating shortens it to now (the node's final delete):
  // with finalizers left (foregroundDeletion) the pod stays, marked for deletion now.
  return requested ?? spec.terminationGracePeriodSeconds ?? 30;
}
