/**
 * The namespace lifecycle controller (kube-controller-manager's "namespace" controller): once a
 * Namespace has a deletionTimestamp, delete every object in it through the API; when none is
 * left, drop the `kubernetes` entry of spec.finalizers through the finalize subresource, which
 * lets the namespace go. Content still present (objects held by finalizers or graceful deletion)
 * is a retryable error: the namespace is looked at again with backoff, as upstream.
 */
import type { Namespace } from 'kubernetes-types/core/v1.js';
import { KINDS, newController, objectPath, watch, type KindName, type RestClient } from '../../client/index.js';
import { NotFoundError, UnavailableError, ignoreNotFound } from '../../util/errors.js';
import { newLogger } from '../../util/log.js';
import type { MetricsRegistry } from '../../util/metrics.js';
import { newControllerInformers, type ControllerInformers } from '../informers.js';
import { discoverDeletableResources, type ApiResource } from '../garbagecollector/discovery.js';

const log = newLogger('namespace-controller');

/** The finalizer the namespace controller owns (FinalizerKubernetes). */
export const NAMESPACE_FINALIZER = 'kubernetes';

// Upstream backs off from 5 ms to 60 s and shortens the wait by the remaining pods' grace periods;
// with no estimate here, the cap is lower so that a namespace goes soon after its last object.
const RATE_LIMIT = { initialMs: 5, capMs: 5_000 };

export interface NamespaceControllerOptions {
  readonly client: RestClient;
  readonly signal: AbortSignal;
  /** Informers shared with other controllers; default: own ones. */
  readonly informers?: ControllerInformers;
  readonly workers?: number;
  readonly metrics?: MetricsRegistry;
}

/** Every kind this API serves inside namespaces (the upstream controller asks discovery). */
const NAMESPACED_KINDS = (Object.keys(KINDS) as KindName[]).filter((k) => KINDS[k].namespaced);

const STATIC_RESOURCES = new Set(NAMESPACED_KINDS.map((k) => `${KINDS[k].group}/${KINDS[k].plural}`));

/**
 * Namespaced kinds the server serves beyond the built-in ones (CustomResourceDefinitions'),
 * found through discovery each time as upstream's namespace controller does.
 */
async function customNamespacedResources(client: RestClient, signal: AbortSignal): Promise<ApiResource[]> {
  const all = await discoverDeletableResources(client, signal);
  return all.filter((r) => r.namespaced && !STATIC_RESOURCES.has(`${r.group}/${r.plural}`));
}

/** Runs the namespace controller until `signal` aborts. */
export async function runNamespaceController(o: NamespaceControllerOptions): Promise<void> {
  const { client } = o;
  const { namespaces } = o.informers ?? newControllerInformers(client);
  const nsApi = client.resource('Namespace');

  /** Deletes what is not being deleted yet; returns how many objects are still in the namespace. */
  const deleteContent = async (namespace: string, signal: AbortSignal): Promise<number> => {
    let remaining = 0;
    const apis = [
      ...NAMESPACED_KINDS.map((kind) => client.resource(kind)),
      ...(await customNamespacedResources(client, signal)).map((r) => client.dynamic(r.kind, r)),
    ];
    for (const api of apis) {
      const items = (await api.list({ namespace, signal })).items;
      for (const obj of items) {
        if (obj.metadata?.deletionTimestamp) continue;
        await api.deleteIfExists(obj.metadata?.name ?? '', { namespace, signal });
      }
      // Count again: immediate deletions are gone now.
      if (items.length > 0) remaining += (await api.list({ namespace, signal })).items.length;
    }
    return remaining;
  };

  const controller = newController<string>({
    name: 'namespace',
    workers: o.workers ?? 2,
    rateLimit: RATE_LIMIT,
    metrics: o.metrics,
    log,
    sources: [
      watch(namespaces, (q) => {
        const onNamespace = (ns: Namespace): void => {
          if (ns.metadata?.deletionTimestamp) q.add(ns.metadata.name ?? '');
        };
        return { onAdd: onNamespace, onUpdate: (_, ns) => onNamespace(ns) };
      }),
    ],
    reconcile: async (name, signal) => {
      if (!namespaces.lister.get(name)?.metadata?.deletionTimestamp) return;
      const left = await deleteContent(name, signal);
      if (left > 0) throw new UnavailableError(`namespace ${name} still has ${left} object(s) being deleted`);
      let cur: Namespace;
      try {
        cur = await nsApi.get(name, { signal });
      } catch (e) {
        if (e instanceof NotFoundError) return;
        throw e;
      }
      const finalizers = cur.spec?.finalizers ?? [];
      if (!finalizers.includes(NAMESPACE_FINALIZER)) return;
      const body: Namespace = {
        ...cur,
        spec: { ...cur.spec, finalizers: finalizers.filter((f) => f !== NAMESPACE_FINALIZER) },
      };
      try {
        await client.http.json({
          method: 'PUT',
          path: objectPath(KINDS.Namespace, name, undefined, 'finalize'),
          body,
          signal,
        });
      } catch (e) {
        ignoreNotFound(e);
      }
    },
  });
  await controller.run(o.signal);
}
