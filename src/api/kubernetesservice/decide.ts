/**
 * What kube-apiserver's kubernetes-service controller and lease endpoint reconciler want, as pure
 * functions: the `default/kubernetes` Service, its Endpoints and its EndpointSlice listing the
 * advertise addresses of the live API servers. Each returns undefined when nothing must be written.
 */
import type { EndpointPort, Endpoints, Service } from 'kubernetes-types/core/v1.js';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import { SERVICE_NAME_LABEL } from '../../kube/names.js';
import { jsonEqual } from '../../util/jsonequal.js';

export const KUBERNETES_SERVICE_NAMESPACE = 'default';
export const KUBERNETES_SERVICE_NAME = 'kubernetes';
/** The Service's port; it targets each API server's secure port. */
export const KUBERNETES_SERVICE_PORT = 443;
const PORT_NAME = 'https';
/** discovery.LabelSkipMirror: the mirroring controller must not copy these Endpoints into slices (the reconciler writes its own). */
export const SKIP_MIRROR_LABEL = 'endpointslice.kubernetes.io/skip-mirror';

/** The Service as kube-apiserver creates it when absent (never updated afterwards). */
export function kubernetesService(clusterIp: string, securePort: number): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: KUBERNETES_SERVICE_NAME,
      namespace: KUBERNETES_SERVICE_NAMESPACE,
      labels: { component: 'apiserver', provider: 'kubernetes' },
    },
    spec: {
      type: 'ClusterIP',
      clusterIP: clusterIp,
      ipFamilyPolicy: 'SingleStack',
      sessionAffinity: 'None',
      ports: [{ name: PORT_NAME, protocol: 'TCP', port: KUBERNETES_SERVICE_PORT, targetPort: securePort }],
    },
  };
}

function endpointPorts(securePort: number): EndpointPort[] {
  return [{ name: PORT_NAME, port: securePort, protocol: 'TCP' }];
}

/**
 * The Endpoints for `ips` (sorted): one subset, labels exactly skip-mirror. Ports are written when
 * absent, and replaced only when `reconcilePorts` (as upstream does when a server starts or stops).
 */
export function desiredEndpoints(
  current: Endpoints | undefined,
  ips: readonly string[],
  securePort: number,
  reconcilePorts: boolean,
): Endpoints | undefined {
  const curPorts = current?.subsets?.length === 1 ? current.subsets[0]!.ports : undefined;
  const ports = !curPorts?.length || reconcilePorts ? endpointPorts(securePort) : curPorts;
  const want: Endpoints = {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: {
      ...(current?.metadata ?? { name: KUBERNETES_SERVICE_NAME, namespace: KUBERNETES_SERVICE_NAMESPACE }),
      labels: { [SKIP_MIRROR_LABEL]: 'true' },
    },
    subsets: [{ addresses: [...ips].sort().map((ip) => ({ ip })), ports }],
  };
  if (current && jsonEqual(current.subsets, want.subsets) && jsonEqual(current.metadata?.labels, want.metadata?.labels))
    return undefined;
  return want;
}

/** The one EndpointSlice `kubernetes` (addressType IPv4, each address ready), or undefined when `current` already says so. */
export function desiredSlice(
  current: EndpointSlice | undefined,
  ips: readonly string[],
  securePort: number,
  reconcilePorts: boolean,
): EndpointSlice | undefined {
  const ports = !current?.ports?.length || reconcilePorts ? endpointPorts(securePort) : current.ports;
  const want: EndpointSlice = {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      ...(current?.metadata ?? { name: KUBERNETES_SERVICE_NAME, namespace: KUBERNETES_SERVICE_NAMESPACE }),
      labels: { [SERVICE_NAME_LABEL]: KUBERNETES_SERVICE_NAME },
    },
    addressType: 'IPv4',
    endpoints: [...ips].sort().map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
    ports,
  };
  if (
    current &&
    jsonEqual(current.endpoints, want.endpoints) &&
    jsonEqual(current.ports, want.ports) &&
    jsonEqual(current.metadata?.labels, want.metadata?.labels)
  )
    return undefined;
  return want;
}

/** Slices labelled for the Service that are not its one IPv4 slice: upstream deletes them. */
export function strayKubernetesSlices(slices: readonly EndpointSlice[]): EndpointSlice[] {
  return slices.filter(
    (s) =>
      s.metadata?.labels?.[SERVICE_NAME_LABEL] === KUBERNETES_SERVICE_NAME &&
      !(s.metadata.name === KUBERNETES_SERVICE_NAME && s.addressType === 'IPv4'),
  );
}

const isLoopbackOrUnspecified = (ip: string): boolean =>
  ip === '0.0.0.0' || ip === '::' || ip === '::1' || ip.startsWith('127.');

/**
 * The address this API server publishes (kube-apiserver's --advertise-address defaulting): the
 * flag; else the bind address unless it is loopback or unspecified; else the host's address.
 * Without any host address (a bare network namespace) the loopback bind address is published:
 * kube-apiserver would refuse to start, but Stowage's pods share the host's network, so loopback
 * is where they reach it, and the node's InternalIP falls back the same way.
 */
export function advertiseAddress(o: {
  readonly flag?: string;
  readonly bindAddress: string;
  readonly hostAddress?: string;
}): string {
  if (o.flag) return o.flag;
  if (!isLoopbackOrUnspecified(o.bindAddress)) return o.bindAddress;
  if (o.hostAddress) return o.hostAddress;
  return o.bindAddress.startsWith('127.') ? o.bindAddress : '127.0.0.1';
}
