/**
 * kube-apiserver's kubernetes-service controller with the lease endpoint reconciler
 * (`--endpoint-reconciler-type=lease`), run by every API server process: every interval it renews
 * its own master lease, creates the `default/kubernetes` Service if absent, and points its
 * Endpoints and EndpointSlice at the addresses of the live leases. A server that stops removes its
 * lease and reconciles once more; one that dies drops out when its lease expires. Deleting the
 * Service, Endpoints or slice triggers a reconcile at once (upstream waits for the next interval).
 */
import type { Endpoints, Service } from 'kubernetes-types/core/v1.js';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import { informerFor, newController, watch, type Enqueuer, type RestClient, type Source } from '../../client/index.js';
import type { Store } from '../../store/store.js';
import { realClock, type Clock } from '../../util/backoff.js';
import { AlreadyExistsError, toStowageError, UnavailableError } from '../../util/errors.js';
import { newLogger } from '../../util/log.js';
import type { MetricsRegistry } from '../../util/metrics.js';
import { SERVICE_NAME_LABEL } from '../../kube/names.js';
import {
  desiredEndpoints,
  desiredSlice,
  KUBERNETES_SERVICE_NAME,
  KUBERNETES_SERVICE_NAMESPACE,
  kubernetesService,
  strayKubernetesSlices,
} from './decide.js';
import { newStoreMasterLeases } from './masterleases.js';

const log = newLogger('kubernetes-service');

/** DefaultEndpointReconcilerInterval and DefaultEndpointReconcilerTTL of kube-apiserver. */
export const DEFAULT_ENDPOINT_RECONCILER_INTERVAL_MS = 10_000;
export const DEFAULT_ENDPOINT_RECONCILER_TTL_MS = 15_000;

export interface KubernetesServiceOptions {
  /** The API server's own loopback client (upstream: system:apiserver in system:masters). */
  readonly client: RestClient;
  /** Where master leases live: the API server's store. */
  readonly store: Store;
  readonly signal: AbortSignal;
  /** The first address of --service-cluster-ip-range. */
  readonly serviceIp: string;
  /** This server's advertise address and secure port: its endpoint. */
  readonly advertiseAddress: string;
  readonly securePort: number;
  readonly intervalMs?: number;
  readonly ttlMs?: number;
  readonly clock?: Clock;
  readonly metrics?: MetricsRegistry;
}

interface Current {
  readonly service?: Service;
  readonly endpoints?: Endpoints;
  readonly slices: readonly EndpointSlice[];
}

const KEY = `${KUBERNETES_SERVICE_NAMESPACE}/${KUBERNETES_SERVICE_NAME}`;
const ignoreAlreadyExists = (e: unknown): void => {
  if (!(e instanceof AlreadyExistsError)) throw e;
};

/** Runs until `signal` aborts, then takes this server's endpoint out (bounded by two intervals). */
export async function runKubernetesServiceController(o: KubernetesServiceOptions): Promise<void> {
  const { client } = o;
  const clock = o.clock ?? realClock;
  const intervalMs = o.intervalMs ?? DEFAULT_ENDPOINT_RECONCILER_INTERVAL_MS;
  const leases = newStoreMasterLeases({ store: o.store, ttlMs: o.ttlMs ?? DEFAULT_ENDPOINT_RECONCILER_TTL_MS, clock });
  const services = client.resource('Service');
  const endpoints = client.resource('Endpoints');
  const slices = client.resource('EndpointSlice');
  const ns = { namespace: KUBERNETES_SERVICE_NAMESPACE };
  const byName = { ...ns, fieldSelector: `metadata.name=${KUBERNETES_SERVICE_NAME}` };
  const sliceSelector = { ...ns, labelSelector: `${SERVICE_NAME_LABEL}=${KUBERNETES_SERVICE_NAME}` };

  const serviceInformer = informerFor(client, 'Service', byName);
  const endpointsInformer = informerFor(client, 'Endpoints', byName);
  const sliceInformer = informerFor(client, 'EndpointSlice', sliceSelector);
  // Reads come from these caches, never a consistent LIST per interval: each such LIST costs every
  // watch of the API server a progress request on etcd. A stale cache only costs a Conflict and a retry.
  const current = (): Current => ({
    service: serviceInformer.lister.get(KUBERNETES_SERVICE_NAMESPACE, KUBERNETES_SERVICE_NAME),
    endpoints: endpointsInformer.lister.get(KUBERNETES_SERVICE_NAMESPACE, KUBERNETES_SERVICE_NAME),
    slices: sliceInformer.lister.list(KUBERNETES_SERVICE_NAMESPACE),
  });

  /** The Endpoints and slices after the lease list; `reconcilePorts` also resets their ports. */
  const syncEndpoints = async (cur: Current, reconcilePorts: boolean, signal: AbortSignal): Promise<void> => {
    const ips = await leases.list();
    // The caller renewed its own lease just before: none listed means the store is wrong, not that no server lives.
    if (ips.length === 0)
      throw new UnavailableError(
        'no master IPs were listed in storage, refusing to erase all endpoints for the kubernetes service',
      );
    const ep = desiredEndpoints(cur.endpoints, ips, o.securePort, reconcilePorts);
    if (ep) {
      log.info('resetting endpoints for the kubernetes service', { addresses: ips.join(',') });
      await (cur.endpoints
        ? endpoints.update(ep, { ...ns, signal })
        : endpoints.create(ep, { ...ns, signal }).catch(ignoreAlreadyExists));
    }
    for (const s of strayKubernetesSlices(cur.slices))
      await slices.deleteIfExists(s.metadata?.name ?? '', { ...ns, signal });
    const curSlice = cur.slices.find((s) => strayKubernetesSlices([s]).length === 0);
    const slice = desiredSlice(curSlice, ips, o.securePort, reconcilePorts);
    if (slice)
      await (curSlice
        ? slices.update(slice, { ...ns, signal })
        : slices.create(slice, { ...ns, signal }).catch(ignoreAlreadyExists));
  };

  let firstSync = true;
  const reconcile = async (key: string, signal: AbortSignal): Promise<{ requeueAfterMs: number }> => {
    try {
      return await sync(key, signal);
    } catch (e) {
      // Upstream's loop runs every interval whatever failed: no error may stop the lease renewal.
      const err = toStowageError(e);
      throw err.retryable ? err : new UnavailableError(err.message, { cause: err });
    }
  };
  const sync = async (_key: string, signal: AbortSignal): Promise<{ requeueAfterMs: number }> => {
    // Renew first, whatever fails after: then at least the other servers keep this one listed.
    await leases.update(o.advertiseAddress);
    const cur = current();
    // Absent from the cache may be a cache behind our own create: asked again before creating, else the
    // second create fails on the ClusterIP (allocated), not on the name.
    if (!cur.service && !(await services.getIfExists(KUBERNETES_SERVICE_NAME, { ...ns, signal }))) {
      await services.create(kubernetesService(o.serviceIp, o.securePort), { ...ns, signal }).catch(ignoreAlreadyExists);
    }
    // Ports are reset when a server starts (upstream: its RemoveEndpoints at start); a restart may change the port.
    await syncEndpoints(cur, firstSync, signal);
    firstSync = false;
    return { requeueAfterMs: intervalMs };
  };

  const onChange = (q: Enqueuer<string>) => ({ onUpdate: () => q.add(KEY), onDelete: () => q.add(KEY) });
  const start: Source<string> = { informers: [], start: (q) => q.add(KEY) };
  const controller = newController<string>({
    name: 'kubernetes-service',
    // A failed round is retried with backoff, but never later than the next round would have run.
    rateLimit: { initialMs: Math.min(500, intervalMs), capMs: intervalMs },
    clock: o.clock,
    metrics: o.metrics,
    log,
    sources: [
      start,
      watch(serviceInformer, onChange),
      watch(endpointsInformer, onChange),
      watch(sliceInformer, onChange),
    ],
    reconcile,
  });
  await controller.run(o.signal);
  // Bounded as upstream's Stop: a store that cannot be reached must not hold up the shutdown.
  const bound = AbortSignal.timeout(intervalMs * 2);
  const timedOut = new Promise<void>((resolve) => bound.addEventListener('abort', () => resolve(), { once: true }));
  await Promise.race([removeOwnEndpoint(o.advertiseAddress, bound), timedOut]);

  async function removeOwnEndpoint(ip: string, signal: AbortSignal): Promise<void> {
    try {
      await leases.remove(ip);
      // The caches stopped with the controller: read once more from the API.
      const cur: Current = {
        endpoints: await endpoints.getIfExists(KUBERNETES_SERVICE_NAME, { ...ns, signal }),
        slices: (await slices.list({ ...sliceSelector, signal })).items,
      };
      await syncEndpoints(cur, true, signal);
    } catch (e) {
      // The last server to stop leaves its address listed, as upstream refuses to erase them all.
      if (e instanceof UnavailableError)
        return log.info('no other API server listed; the kubernetes service endpoints stay as they are');
      log.warn('could not remove this server from the kubernetes service endpoints', {
        error: e instanceof Error ? e.message : String(e),
      });
    }
  }
}
