import { tryParseQuantity, compareQuantities } from '../../kube/quantity.js';
import { listAt, objectAt } from './corehelpers.js';
import type { KubeObject } from './types.js';
import { TAINT_NOT_READY, TAINT_UNREACHABLE } from '../../kube/names.js';

/**
 * Pod defaulting as kube-apiserver applies it to a decoded v1 Pod (`SetDefaults_Pod`,
 * `SetDefaults_PodSpec`, `SetDefaults_Container`, probes, volumes), plus the tolerations the
 * DefaultTolerationSeconds admission plugin adds on create and the QoS class set on create.
 * Everything here is idempotent: applying it twice changes nothing.
 */

type Obj = Record<string, unknown>;

function setDefault(o: Obj, key: string, value: unknown): void {
  if (o[key] === undefined || o[key] === null) o[key] = value;
}

/** `Always` for `:latest` or an untagged image, `IfNotPresent` for any other tag or a digest. */
export function defaultPullPolicy(image: string): 'Always' | 'IfNotPresent' {
  if (image.includes('@')) return 'IfNotPresent';
  const last = image.slice(image.lastIndexOf('/') + 1);
  const colon = last.lastIndexOf(':');
  if (colon < 0) return 'Always';
  return last.slice(colon + 1) === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultProbe(p: Obj | undefined): void {
  if (!p) return;
  setDefault(p, 'timeoutSeconds', 1);
  setDefault(p, 'periodSeconds', 10);
  setDefault(p, 'successThreshold', 1);
  setDefault(p, 'failureThreshold', 3);
  const http = objectAt(p, 'httpGet');
  if (http) {
    setDefault(http, 'path', '/');
    setDefault(http, 'scheme', 'HTTP');
  }
}

function defaultContainer(c: Obj, hostNetwork: boolean): void {
  setDefault(c, 'terminationMessagePath', '/dev/termination-log');
  setDefault(c, 'terminationMessagePolicy', 'File');
  // Like kube, even a missing image gets a policy (an unparseable reference has no "latest" tag).
  setDefault(
    c,
    'imagePullPolicy',
    typeof c.image === 'string' && c.image !== '' ? defaultPullPolicy(c.image) : 'IfNotPresent',
  );
  for (const port of listAt(c, 'ports')) {
    setDefault(port, 'protocol', 'TCP');
    if (hostNetwork && port.hostPort === undefined) port.hostPort = port.containerPort;
  }
  for (const key of ['livenessProbe', 'readinessProbe', 'startupProbe']) defaultProbe(objectAt(c, key));
  for (const env of listAt(c, 'env')) {
    const fieldRef = objectAt(objectAt(env, 'valueFrom'), 'fieldRef');
    if (fieldRef) setDefault(fieldRef, 'apiVersion', 'v1');
  }
  // Requests default to limits, resource by resource.
  const resources = objectAt(c, 'resources');
  const limits = objectAt(resources, 'limits');
  if (resources && limits && Object.keys(limits).length) {
    const requests = objectAt(resources, 'requests') ?? {};
    for (const [k, v] of Object.entries(limits)) if (requests[k] === undefined) requests[k] = v;
    resources.requests = requests;
  }
}

const VOLUME_SOURCES_WITH_MODE = ['secret', 'configMap', 'downwardAPI', 'projected'] as const;

function defaultVolume(v: Obj): void {
  const sources = Object.keys(v).filter((k) => k !== 'name');
  if (sources.length === 0) v.emptyDir = {};
  for (const k of VOLUME_SOURCES_WITH_MODE) {
    const src = objectAt(v, k);
    if (src) setDefault(src, 'defaultMode', 0o644);
  }
  const hostPath = objectAt(v, 'hostPath');
  if (hostPath) setDefault(hostPath, 'type', '');
  const fieldRefs = [...listAt(objectAt(v, 'downwardAPI'), 'items')];
  for (const item of fieldRefs) {
    const fieldRef = objectAt(item, 'fieldRef');
    if (fieldRef) setDefault(fieldRef, 'apiVersion', 'v1');
  }
}

/** Applies Kubernetes' v1 Pod defaults in place (create and update). */
export function applyPodDefaults(pod: KubeObject): void {
  if (!objectAt(pod, 'spec')) pod.spec = {};
  const spec = objectAt(pod, 'spec') as Obj;
  setDefault(spec, 'dnsPolicy', 'ClusterFirst');
  setDefault(spec, 'restartPolicy', 'Always');
  setDefault(spec, 'terminationGracePeriodSeconds', 30);
  setDefault(spec, 'securityContext', {});
  setDefault(spec, 'schedulerName', 'default-scheduler');
  setDefault(spec, 'enableServiceLinks', true);
  const hostNetwork = spec.hostNetwork === true;
  for (const c of [...listAt(spec, 'initContainers'), ...listAt(spec, 'containers')]) defaultContainer(c, hostNetwork);
  for (const v of listAt(spec, 'volumes')) defaultVolume(v);
}

/**
 * Priority admission without PriorityClasses: priority 0 and the default preemption policy on
 * create; on update a client that omits them keeps the stored values (they cannot change).
 */
export function admitPriority(pod: KubeObject, old?: KubeObject): void {
  const spec = objectAt(pod, 'spec');
  if (!spec) return;
  const oldSpec = old ? objectAt(old, 'spec') : undefined;
  for (const [key, fallback] of [
    ['priority', 0],
    ['preemptionPolicy', 'PreemptLowerPriority'],
  ] as const) {
    if (spec[key] !== undefined && spec[key] !== null) continue;
    if (!old) spec[key] = fallback;
    else if (oldSpec?.[key] !== undefined) spec[key] = oldSpec[key];
  }
}

/**
 * DefaultTolerationSeconds admission (create and update): tolerate not-ready / unreachable nodes
 * for 300 s unless the pod already tolerates them.
 */
export const DEFAULT_TOLERATION_SECONDS = 300;
const NODE_TAINTS = [TAINT_NOT_READY, TAINT_UNREACHABLE] as const;

export function addDefaultTolerations(pod: KubeObject): void {
  const spec = objectAt(pod, 'spec');
  if (!spec) return;
  const tolerations = listAt(spec, 'tolerations');
  const tolerates = (key: string) =>
    tolerations.some((t) => {
      const effect = t.effect ?? '';
      const effectOk = effect === '' || effect === 'NoExecute';
      const keyOk = t.key === key || ((t.key ?? '') === '' && t.operator === 'Exists');
      return effectOk && keyOk;
    });
  const add = NODE_TAINTS.filter((k) => !tolerates(k)).map((key) => ({
    key,
    operator: 'Exists',
    effect: 'NoExecute',
    tolerationSeconds: DEFAULT_TOLERATION_SECONDS,
  }));
  if (add.length) spec.tolerations = [...tolerations, ...add];
}

/**
 * The pod's QoS class, as `qos.GetPodQOS`: BestEffort without any non-zero cpu/memory request or
 * limit; Guaranteed when every container limits both cpu and memory and requests equal limits;
 * Burstable otherwise.
 */
export function podQosClass(pod: KubeObject): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const spec = objectAt(pod, 'spec');
  const containers = [...listAt(spec, 'initContainers'), ...listAt(spec, 'containers')];
  let any = false;
  let guaranteed = true;
  for (const c of containers) {
    const resources = objectAt(c, 'resources');
    const req = objectAt(resources, 'requests') ?? {};
    const lim = objectAt(resources, 'limits') ?? {};
    for (const r of ['cpu', 'memory']) {
      const q = nonZero(req[r]);
      const l = nonZero(lim[r]);
      if (q || l) any = true;
      if (!l) guaranteed = false;
      else if (q && compareQuantities(q, l) !== 0) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

function nonZero(v: unknown) {
  const q = tryParseQuantity(v);
  return q && q.nanos !== 0n ? q : undefined;
}
