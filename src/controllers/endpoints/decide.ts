/**
 * What the endpoints and EndpointSlice controllers write for one Service, as a pure function of the
 * Service and the pods of its namespace: the Endpoints of the same name (ready pods in `addresses`,
 * others in `notReadyAddresses`) and the EndpointSlice's endpoints with their ready, serving and
 * terminating conditions. Stowage pods share their node's network: a pod's IP is its node's.
 */
import type {
  EndpointAddress,
  EndpointPort,
  EndpointSubset,
  Endpoints,
  Pod,
  Service,
  ServicePort,
} from 'kubernetes-types/core/v1.js';
import type { Endpoint, EndpointPort as SlicePort, EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import { matchesLabels, labelSelectorFromObject, NOTHING } from '../../kube/selectors.js';
import { isPodReady, newControllerRef } from '../../kube/workloads.js';
import { SERVICE_NAME_LABEL } from '../../kube/names.js';

export const MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';
export const SLICE_CONTROLLER_NAME = 'endpointslice-controller.k8s.io';
export const HEADLESS_LABEL = 'service.kubernetes.io/headless';

/** The pods a Service selects; a Service without a selector has its Endpoints written by someone else. */
export function selectedPods(svc: Service, pods: readonly Pod[]): Pod[] {
  const sel = svc.spec?.selector;
  if (!sel || Object.keys(sel).length === 0) return [];
  let selector = NOTHING;
  try {
    selector = labelSelectorFromObject({ matchLabels: sel });
  } catch {
    return [];
  }
  return pods.filter(
    (p) => p.metadata?.namespace === svc.metadata?.namespace && matchesLabels(selector, p.metadata?.labels),
  );
}

/** Whether the endpoints controllers manage this Service's endpoints (it has a selector and is not ExternalName). */
export function managesEndpoints(svc: Service): boolean {
  return !!svc.spec?.selector && Object.keys(svc.spec.selector).length > 0 && svc.spec.type !== 'ExternalName';
}

/** podutil.FindPort: the container port a Service's targetPort names, or the number itself. */
export function findPort(pod: Pod, port: ServicePort): number | undefined {
  const target = port.targetPort ?? port.port;
  if (typeof target === 'number') return target;
  for (const c of pod.spec?.containers ?? []) {
    for (const cp of c.ports ?? [])
      if (cp.name === target && (cp.protocol ?? 'TCP') === (port.protocol ?? 'TCP')) return cp.containerPort;
  }
  return undefined;
}

/**
 * A pod's address: its podIP, else its node's — Stowage pods share the node's network (as
 * hostNetwork pods do), and a volume-only pod reports only the node's address.
 */
export function podAddress(p: Pod): string {
  return p.status?.podIP || p.status?.hostIP || '';
}

/** shouldPodBeInEndpoints: an address, not finished; a terminating pod only when the Service publishes not-ready addresses. */
function inEndpoints(svc: Service, p: Pod, includeTerminating: boolean): boolean {
  if (!podAddress(p)) return false;
  if (p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') return false;
  if (p.metadata?.deletionTimestamp && !includeTerminating && !svc.spec?.publishNotReadyAddresses) return false;
  return true;
}

function address(p: Pod, svc: Service): EndpointAddress {
  const a: EndpointAddress = {
    ip: podAddress(p),
    targetRef: { kind: 'Pod', namespace: p.metadata?.namespace, name: p.metadata?.name, uid: p.metadata?.uid },
  };
  if (p.spec?.nodeName) a.nodeName = p.spec.nodeName;
  if (p.spec?.hostname && p.spec.subdomain === svc.metadata?.name) a.hostname = p.spec.hostname;
  return a;
}

const byIpThenName = (a: EndpointAddress, b: EndpointAddress): number =>
  a.ip.localeCompare(b.ip) || (a.targetRef?.name ?? '').localeCompare(b.targetRef?.name ?? '');

/** The subsets of a Service's Endpoints: one per distinct set of ports, addresses sorted (kube's RepackSubsets). */
export function endpointSubsets(svc: Service, pods: readonly Pod[]): EndpointSubset[] {
  const groups = new Map<string, { ports: EndpointPort[]; ready: EndpointAddress[]; notReady: EndpointAddress[] }>();
  for (const p of selectedPods(svc, pods)) {
    if (!inEndpoints(svc, p, false)) continue;
    const ports: EndpointPort[] = [];
    for (const sp of svc.spec?.ports ?? []) {
      const port = findPort(p, sp);
      if (port === undefined) continue;
      ports.push({
        ...(sp.name ? { name: sp.name } : {}),
        port,
        protocol: sp.protocol ?? 'TCP',
        ...(sp.appProtocol ? { appProtocol: sp.appProtocol } : {}),
      });
    }
    // A Service with ports whose target this pod lacks gets no endpoint from it; a headless one without ports gets addresses only.
    if ((svc.spec?.ports ?? []).length > 0 && ports.length === 0) continue;
    const key = JSON.stringify(ports);
    const g = groups.get(key) ?? { ports, ready: [], notReady: [] };
    groups.set(key, g);
    const ready = isPodReady(p) || !!svc.spec?.publishNotReadyAddresses;
    (ready ? g.ready : g.notReady).push(address(p, svc));
  }
  return [...groups.values()].map((g) => ({
    ...(g.ready.length ? { addresses: g.ready.sort(byIpThenName) } : {}),
    ...(g.notReady.length ? { notReadyAddresses: g.notReady.sort(byIpThenName) } : {}),
    ...(g.ports.length ? { ports: g.ports } : {}),
  }));
}

function serviceLabels(svc: Service): Record<string, string> {
  const labels = { ...(svc.metadata?.labels ?? {}) };
  if (svc.spec?.clusterIP === 'None') labels[HEADLESS_LABEL] = '';
  return labels;
}

/** The Endpoints object the endpoints controller keeps for a Service. */
export function desiredEndpoints(svc: Service, pods: readonly Pod[]): Endpoints {
  const subsets = endpointSubsets(svc, pods);
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name: svc.metadata?.name, namespace: svc.metadata?.namespace, labels: serviceLabels(svc) },
    ...(subsets.length ? { subsets } : {}),
  };
}

/** The endpoints and ports of the Service's IPv4 EndpointSlice (terminating pods kept with their conditions). */
export function desiredSliceContent(svc: Service, pods: readonly Pod[]): Pick<EndpointSlice, 'endpoints' | 'ports'> {
  const ports: SlicePort[] = [];
  const endpoints: Endpoint[] = [];
  for (const p of selectedPods(svc, pods)) {
    if (!inEndpoints(svc, p, true)) continue;
    if (ports.length === 0) {
      for (const sp of svc.spec?.ports ?? []) {
        const port = findPort(p, sp);
        if (port !== undefined)
          ports.push({
            name: sp.name ?? '',
            port,
            protocol: sp.protocol ?? 'TCP',
            ...(sp.appProtocol ? { appProtocol: sp.appProtocol } : {}),
          });
      }
    }
    const terminating = !!p.metadata?.deletionTimestamp;
    const ready = isPodReady(p);
    endpoints.push({
      addresses: [podAddress(p)],
      conditions: {
        ready: (ready && !terminating) || !!svc.spec?.publishNotReadyAddresses,
        serving: ready,
        terminating,
      },
      ...(p.spec?.nodeName ? { nodeName: p.spec.nodeName } : {}),
      targetRef: { kind: 'Pod', namespace: p.metadata?.namespace, name: p.metadata?.name, uid: p.metadata?.uid },
    });
  }
  endpoints.sort((a, b) => (a.targetRef?.name ?? '').localeCompare(b.targetRef?.name ?? ''));
  return { endpoints, ports };
}

/** kube-controller-manager's --max-endpoints-per-slice default. */
export const MAX_ENDPOINTS_PER_SLICE = 100;

/** The slices' contents: the endpoints in runs of at most `max`, each with the ports (one slice when there are none). */
export function sliceContents(
  content: Pick<EndpointSlice, 'endpoints' | 'ports'>,
  max = MAX_ENDPOINTS_PER_SLICE,
): Array<Pick<EndpointSlice, 'endpoints' | 'ports'>> {
  const out: Array<Pick<EndpointSlice, 'endpoints' | 'ports'>> = [];
  for (let i = 0; i < content.endpoints.length; i += max)
    out.push({ endpoints: content.endpoints.slice(i, i + max), ports: content.ports });
  return out.length ? out : [{ endpoints: [], ports: content.ports }];
}

/** A new EndpointSlice for the Service (named `<service>-<random>` by the server), owned by it. */
export function newSlice(svc: Service, content: Pick<EndpointSlice, 'endpoints' | 'ports'>): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      generateName: `${svc.metadata?.name ?? ''}-`,
      namespace: svc.metadata?.namespace,
      labels: sliceLabels(svc),
      ownerReferences: [newControllerRef(svc, 'v1', 'Service')],
    },
    addressType: 'IPv4',
    ...content,
  };
}

export function sliceLabels(svc: Service): Record<string, string> {
  return {
    ...serviceLabels(svc),
    [SERVICE_NAME_LABEL]: svc.metadata?.name ?? '',
    [MANAGED_BY_LABEL]: SLICE_CONTROLLER_NAME,
  };
}
