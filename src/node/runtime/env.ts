/**
 * A container's environment as the kubelet's makeEnvironmentVariables builds it: envFrom first
 * (configMaps and secrets, with their prefix), then env in order, each value expanded against the
 * variables before it; fieldRef and resourceFieldRef from the pod and the node. Pure.
 */
import type { Container, EnvVar, Pod } from 'kubernetes-types/core/v1.js';
import { quantityNanos } from '../../kube/quantity.js';

/** `$(VAR)` references expanded from `env` as Kubernetes does; `$$(VAR)` escapes; unknown names stay as written. */
export function expandVars(s: string, env: ReadonlyMap<string, string>): string {
  return s.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (all, name: string | undefined) => {
    if (all === '$$') return '$';
    return name !== undefined && env.has(name) ? env.get(name)! : all;
  });
}

/** The node's allocatable resources: the values of limits a container does not set. */
export interface NodeAllocatable {
  readonly cpu: string;
  readonly memory: string;
  readonly 'ephemeral-storage'?: string;
}

/** What env values come from besides the spec. A configMap or secret getter answers undefined when the object does not exist. */
export interface EnvSources {
  /** The node's addresses (pods are on the host network: they are the pod's addresses too). */
  readonly hostIPs: readonly string[];
  readonly configMap: (namespace: string, name: string) => Readonly<Record<string, string>> | undefined;
  /** The secret's data, decoded. */
  readonly secret: (namespace: string, name: string) => Readonly<Record<string, string>> | undefined;
  readonly allocatable?: NodeAllocatable;
}

/** An env var or mount that cannot be resolved; the container waits with reason CreateContainerConfigError and this message. */
export class ContainerConfigError extends Error {}

/** The configMaps and secrets (names) a container's env and envFrom read. */
export function referencedObjects(c: Container): { configMaps: string[]; secrets: string[] } {
  const configMaps = new Set<string>();
  const secrets = new Set<string>();
  for (const f of c.envFrom ?? []) {
    if (f.configMapRef?.name) configMaps.add(f.configMapRef.name);
    if (f.secretRef?.name) secrets.add(f.secretRef.name);
  }
  for (const e of c.env ?? []) {
    if (e.valueFrom?.configMapKeyRef?.name) configMaps.add(e.valueFrom.configMapKeyRef.name);
    if (e.valueFrom?.secretKeyRef?.name) secrets.add(e.valueFrom.secretKeyRef.name);
  }
  return { configMaps: [...configMaps], secrets: [...secrets] };
}

function fieldValue(pod: Pod, fieldPath: string, hostIPs: readonly string[]): string {
  const m = pod.metadata ?? {};
  const label = /^metadata\.labels\['(.+)'\]$/.exec(fieldPath);
  if (label) return m.labels?.[label[1]!] ?? '';
  const ann = /^metadata\.annotations\['(.+)'\]$/.exec(fieldPath);
  if (ann) return m.annotations?.[ann[1]!] ?? '';
  switch (fieldPath) {
    case 'metadata.name':
      return m.name ?? '';
    case 'metadata.namespace':
      return m.namespace ?? '';
    case 'metadata.uid':
      return m.uid ?? '';
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? '';
    case 'status.hostIP':
    case 'status.podIP':
      return hostIPs[0] ?? '';
    // The plural fields are comma-joined, as the kubelet writes them.
    case 'status.hostIPs':
    case 'status.podIPs':
      return hostIPs.join(',');
    default:
      throw new ContainerConfigError(`unsupported fieldRef ${fieldPath}`);
  }
}

const RESOURCE_FIELDS = [
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
] as const;

/**
 * The kubelet's ExtractContainerResourceValue: the quantity divided by the divisor, rounded up
 * (cpu in millis, the others in units). A limit the container does not set is the node's
 * allocatable; a request it does not set defaults to its limit (API defaulting), else 0.
 */
export function resourceFieldValue(
  pod: Pod,
  self: Container,
  ref: { containerName?: string; resource: string; divisor?: string | number },
  allocatable?: NodeAllocatable,
): string {
  const c = ref.containerName
    ? [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find((x) => x.name === ref.containerName)
    : self;
  if (!c) throw new ContainerConfigError(`container ${ref.containerName} not found in pod`);
  const field = RESOURCE_FIELDS.find((f) => f === ref.resource);
  if (!field) throw new ContainerConfigError(`unsupported container resource : ${ref.resource}`);
  const [kind, name] = field.split('.') as ['limits' | 'requests', 'cpu' | 'memory' | 'ephemeral-storage'];
  const limit = c.resources?.limits?.[name] ?? allocatable?.[name];
  const q = kind === 'limits' ? limit : (c.resources?.requests?.[name] ?? c.resources?.limits?.[name]);
  const divisor = quantityNanos(ref.divisor ?? '1');
  if (divisor <= 0n) throw new ContainerConfigError(`invalid divisor ${String(ref.divisor)} for ${ref.resource}`);
  const n = quantityNanos(q);
  // cpu: ceil(milli / divisor milli); others: ceil(value / divisor value) — both a ceiling of the nano ratio.
  return String((n + divisor - 1n) / divisor);
}

// Since Kubernetes 1.30 any printable ASCII but '=' is a valid env var name.
const validEnvName = (n: string): boolean => n !== '' && /^[\x20-\x3c\x3e-\x7e]+$/.test(n);

/** Result of envFrom: the variables, and the keys skipped as invalid names (the kubelet's InvalidEnvironmentVariableNames event). */
export interface ContainerEnv {
  readonly env: Map<string, string>;
  readonly invalidKeys: readonly { readonly source: string; readonly keys: readonly string[] }[];
}

/** The container's environment in the kubelet's order. Throws ContainerConfigError with the kubelet's messages. */
export function containerEnv(pod: Pod, c: Container, src: EnvSources): ContainerEnv {
  const ns = pod.metadata?.namespace ?? 'default';
  const env = new Map<string, string>();
  const invalidKeys: { source: string; keys: string[] }[] = [];
  for (const f of c.envFrom ?? []) {
    const ref = f.configMapRef ?? f.secretRef;
    const kind = f.configMapRef ? 'configmap' : 'secret';
    if (!ref) continue;
    const data = f.configMapRef ? src.configMap(ns, ref.name ?? '') : src.secret(ns, ref.name ?? '');
    if (!data) {
      if (ref.optional === true) continue;
      throw new ContainerConfigError(`${kind} "${ref.name ?? ''}" not found`);
    }
    const invalid: string[] = [];
    for (const [k, v] of Object.entries(data)) {
      const name = `${f.prefix ?? ''}${k}`;
      if (!validEnvName(name)) invalid.push(name);
      else env.set(name, v);
    }
    if (invalid.length > 0)
      invalidKeys.push({
        source: `${f.configMapRef ? 'configMap' : 'secret'} ${ns}/${ref.name ?? ''}`,
        keys: invalid.sort(),
      });
  }
  for (const e of (c.env ?? []) as EnvVar[]) {
    const from = e.valueFrom;
    let v: string | undefined;
    if (!from) v = expandVars(e.value ?? '', env);
    else if (from.fieldRef) v = fieldValue(pod, from.fieldRef.fieldPath, src.hostIPs);
    else if (from.resourceFieldRef) v = resourceFieldValue(pod, c, from.resourceFieldRef, src.allocatable);
    else if (from.configMapKeyRef) v = keyOf('ConfigMap', src.configMap, ns, from.configMapKeyRef);
    else if (from.secretKeyRef) v = keyOf('Secret', src.secret, ns, from.secretKeyRef);
    else throw new ContainerConfigError(`env ${e.name}: unsupported valueFrom`);
    if (v !== undefined) env.set(e.name, v);
  }
  return { env, invalidKeys };
}

function keyOf(
  kind: 'ConfigMap' | 'Secret',
  get: EnvSources['configMap'],
  ns: string,
  r: { name?: string; key: string; optional?: boolean },
): string | undefined {
  const data = get(ns, r.name ?? '');
  if (!data) {
    if (r.optional === true) return undefined;
    throw new ContainerConfigError(`${kind.toLowerCase()} "${r.name ?? ''}" not found`);
  }
  const v = data[r.key];
  if (v === undefined && r.optional !== true)
    throw new ContainerConfigError(`couldn't find key ${r.key} in ${kind} ${ns}/${r.name ?? ''}`);
  return v;
}

/** A volumeMount's subPathExpr expanded with the container's env; the result must stay inside the volume. */
export function expandSubPathExpr(expr: string, env: ReadonlyMap<string, string>): string {
  const out = expandVars(expr, env);
  if (out.startsWith('/') || out.split('/').includes('..'))
    throw new ContainerConfigError(
      `failed to prepare subPath for volumeMount: subPathExpr ${expr} expands to ${out}, which is not a relative path inside the volume`,
    );
  return out;
}
