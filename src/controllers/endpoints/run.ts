/**
 * The endpoints and EndpointSlice controllers on the shared runtime, as one reconcile per Service:
 * the Endpoints of the Service's name and its one IPv4 EndpointSlice follow the pods its selector
 * matches (decide.ts). A deleted Service's Endpoints go with it; its slices go through their owner
 * reference (the garbage collector).
 */
import type { Pod, Service } from 'kubernetes-types/core/v1.js';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import { newController, objectOf, watch, type RestClient } from '../../client/index.js';

import { metaNamespaceKey, splitNamespacedKey } from '../../kube/keys.js';

import { newLogger } from '../../util/log.js';

import type { MetricsRegistry } from '../../util/metrics.js';

import { newControllerInformers, queueOwnKey, type ControllerInformers, mapToKeys } from '../informers.js';

import {
  MANAGED_BY_LABEL,
  SLICE_CONTROLLER_NAME,
  desiredEndpoints,
  desiredSliceContent,
  managesEndpoints,
  newSlice,
  selectedPods,
  sliceContents,
  sliceLabels,
} from './decide.js';
import { jsonEqual } from '../../util/jsonequal.js';
import { SERVICE_NAME_LABEL } from '../../kube/names.js';

const log = newLogger('endpoints');

export interface EndpointsControllerOptions {
  readonly client: RestClient;
  readonly signal: AbortSignal;
  readonly informers?: ControllerInformers;
  readonly workers?: number;
  readonly metrics?: MetricsRegistry;
}

/** Runs the endpoints and EndpointSlice controllers until `signal` aborts. */
export async function runEndpointsController(o: EndpointsControllerOptions): Promise<void> {
  const { client } = o;
  const { pods, services, endpoints, endpointSlices } = o.informers ?? newControllerInformers(client);
  const epApi = client.resource('Endpoints');
  const sliceApi = client.resource('EndpointSlice');

  const servicesOf = (p: Pod): string[] =>
    services.lister
      .list(p.metadata?.namespace ?? '')
      .filter((s) => selectedPods(s, [p]).length > 0)
      .map(metaNamespaceKey);
  const onPod = mapToKeys(servicesOf, { includeOld: true });
  const slicesOf = (svc: { metadata?: { namespace?: string; name?: string } }): EndpointSlice[] =>
    endpointSlices.lister
      .list(svc.metadata?.namespace ?? '')
      .filter(
        (s) =>
          s.metadata?.labels?.[SERVICE_NAME_LABEL] === svc.metadata?.name &&
          s.metadata?.labels?.[MANAGED_BY_LABEL] === SLICE_CONTROLLER_NAME,
      );

  const controller = newController<string>({
    name: 'endpoints',
    workers: o.workers ?? 2,
    metrics: o.metrics,
    log,
    sources: [
      watch(services, queueOwnKey),
      watch(pods, onPod),
      watch(endpoints, (q) => ({
        onDelete: (x) => q.add(metaNamespaceKey(objectOf(x))),
        onUpdate: (_, e) => q.add(metaNamespaceKey(e)),
      })),
      watch(endpointSlices, (q) => ({
        onDelete: (x) => {
          const s = objectOf(x);
          const svc = s.metadata?.labels?.[SERVICE_NAME_LABEL];
          if (svc) q.add(`${s.metadata?.namespace ?? ''}/${svc}`);
        },
      })),
    ],
    reconcile: async (key) => {
      const [ns, name] = splitNamespacedKey(key);
      const svc = services.lister.get(ns, name);
      if (!svc) {
        if (endpoints.lister.get(ns, name)) await epApi.deleteIfExists(name, { namespace: ns });
        return;
      }
      if (!managesEndpoints(svc)) return;
      const nsPods = pods.lister.list(ns);
      await syncEndpoints(svc, nsPods);
      await syncSlice(svc, nsPods);
    },
  });

  async function syncEndpoints(svc: Service, nsPods: readonly Pod[]): Promise<void> {
    const want = desiredEndpoints(svc, nsPods);
    const ns = svc.metadata?.namespace;
    const cur = endpoints.lister.get(ns ?? '', svc.metadata?.name ?? '');
    if (!cur) {
      await epApi.create(want, { namespace: ns });
      return;
    }
    if (
      jsonEqual(cur.subsets ?? [], want.subsets ?? []) &&
      jsonEqual(cur.metadata?.labels ?? {}, want.metadata?.labels ?? {})
    )
      return;
    const next = { ...cur, metadata: { ...cur.metadata, labels: want.metadata?.labels } };
    if (want.subsets) next.subsets = want.subsets;
    else delete next.subsets;
    await epApi.update(next, { namespace: ns });
  }

  async function syncSlice(svc: Service, nsPods: readonly Pod[]): Promise<void> {
    const ns = svc.metadata?.namespace;
    const want = sliceContents(desiredSliceContent(svc, nsPods));
    const have = slicesOf(svc).sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
    for (const s of have.slice(want.length)) await sliceApi.deleteIfExists(s.metadata!.name!, { namespace: ns });
    for (const [i, content] of want.entries()) {
      const cur = have[i];
      if (!cur) {
        await sliceApi.create(newSlice(svc, content), { namespace: ns });
        continue;
      }
      const labels = { ...(cur.metadata?.labels ?? {}), ...sliceLabels(svc) };
      if (
        jsonEqual(cur.endpoints ?? [], content.endpoints ?? []) &&
        jsonEqual(cur.ports ?? [], content.ports ?? []) &&
        jsonEqual(cur.metadata?.labels ?? {}, labels)
      )
        continue;
      await sliceApi.update(
        {
          ...cur,
          metadata: { ...cur.metadata, labels },
          endpoints: content.endpoints ?? [],
          ports: content.ports ?? [],
        },
        { namespace: ns },
      );
    }
  }

  await controller.run(o.signal);
}
