/**
 * The garbage collector's runtime: discovers the deletable resources, builds the owner graph over
 * their informers (sharing the controller manager's where it has one), and reconciles objects on
 * the shared controller runtime. Owners missing from the cache are confirmed with a live GET
 * before a dependent is deleted because of them (upstream's isDangling); deletes carry the
 * dependent's uid as a precondition.
 */
import type { OwnerReference } from 'kubernetes-types/meta/v1.js';
import { KINDS, apiVersionOf, type KindName } from '../../client/kinds.js';
import { newController, watch, type Enqueuer } from '../../client/controller.js';
import { newEventRecorder, type EventRecorder } from '../../client/events.js';
import { newInformer, objectOf, stripManagedFields, type Informer } from '../../client/informer.js';
import { listerWatcherFor } from '../../client/reflector.js';
import type { KubeObjectLike, RestClient } from '../../client/rest.js';
import { realClock } from '../../util/backoff.js';
import { NotFoundError, UnavailableError, toStowageError, assertNever, ignoreNotFound } from '../../util/errors.js';
import { newLogger } from '../../util/log.js';
import type { MetricsRegistry } from '../../util/metrics.js';
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from '../../kube/names.js';
import type { ControllerInformers } from '../informers.js';
import {
  decideDeleting,
  decideOwned,
  isDeletingDependents,
  unblocked,
  withoutOwners,
  type GcAction,
  type OwnerState,
} from './decide.js';
import { discoverDeletableResources, type ApiResource } from './discovery.js';
import { OwnerGraph, ownerUids, resourceId, type GraphItem } from './graph.js';

const log = newLogger('garbagecollector');

export interface GarbageCollectorOptions {
  readonly client: RestClient;
  readonly signal: AbortSignal;
  /** The controller manager's informers, reused for the kinds they cover. */
  readonly informers?: ControllerInformers;
  readonly metrics?: MetricsRegistry;
  /** kube-controller-manager's --concurrent-gc-syncs default. */
  readonly workers?: number;
}

const DISCOVERY_RETRY_MS = 2_000;

// Upstream re-reads discovery every 30 s and starts monitors for new resources; ours looks every
// 5 s so that the kinds of a new CustomResourceDefinition are followed soon after they are served.
const REDISCOVERY_MS = 5_000;

/** Runs the garbage collector until `signal` aborts. */
export async function runGarbageCollector(o: GarbageCollectorOptions): Promise<void> {
  const resources = await discoverWithRetry(o.client, o.signal);
  if (!resources) return;
  await runWith(o, resources, o.signal);
}

/**
 * Re-reads discovery every REDISCOVERY_MS: a resource found for the first time gets its own
 * informer, added to the graph and feeding the running controller's queue; one no longer served
 * is stopped and dropped.
 */
function followDiscovery(
  client: RestClient,
  graph: OwnerGraph,
  q: Enqueuer<string>,
  initial: readonly ApiResource[],
  signal: AbortSignal,
): void {
  const added = new Map<string, { resource: ApiResource; stop: AbortController }>();
  const known = new Set(initial.map(resourceId));
  const start = (resource: ApiResource): void => {
    const stop = new AbortController();
    signal.addEventListener('abort', () => stop.abort(), { once: true });
    const informer = newInformer<KubeObjectLike>({
      name: resource.kind,
      lw: listerWatcherFor(client.dynamic(resource.kind, resource)),
    });
    graph.add({ resource, informer });
    informer.addEventHandler(graphChanges(graph, resource, q));
    added.set(resourceId(resource), { resource, stop });
    void informer
      .run(stop.signal)
      .catch((e: unknown) => log.warn('informer ended', { error: toStowageError(e).message }));
    log.info('following a resource found through discovery', { resource: resourceId(resource) });
  };
  void (async () => {
    for (;;) {
      try {
        await realClock.sleep(REDISCOVERY_MS, signal);
      } catch {
        return; // stopped
      }
      let found: ApiResource[];
      try {
        found = await discoverDeletableResources(client, signal);
      } catch (e) {
        if (signal.aborted) return;
        log.warn('discovery failed', { error: toStowageError(e).message });
        continue;
      }
      const ids = new Set(found.map(resourceId));
      for (const r of found) if (!known.has(resourceId(r)) && !added.has(resourceId(r))) start(r);
      for (const [id, a] of added) {
        if (ids.has(id)) continue;
        a.stop.abort();
        graph.remove(a.resource);
        added.delete(id);
        log.info('no longer following a resource gone from discovery', { resource: id });
      }
    }
  })();
}

async function runWith(
  o: GarbageCollectorOptions,
  resources: readonly ApiResource[],
  signal: AbortSignal,
): Promise<void> {
  const { client } = o;
  const shared = o.informers ? sharedInformers(o.informers) : new Map<string, Informer<KubeObjectLike>>();
  const graph = new OwnerGraph(
    resources.map((resource) => ({
      resource,
      informer:
        shared.get(resourceId(resource)) ??
        newInformer<KubeObjectLike>({
          name: resource.kind,
          lw: listerWatcherFor(client.dynamic(resource.kind, resource)),
          transform: stripManagedFields,
        }),
    })),
  );
  log.info('watching resources found through discovery', { resources: resources.map(resourceId).join(' ') });
  const recorder = newEventRecorder({ client, component: 'garbage-collector-controller' });

  const controller = newController<string>({
    name: 'garbagecollector',
    workers: o.workers ?? 20,
    metrics: o.metrics,
    log,
    sources: graph.entries().map(({ resource, informer }) => watch(informer, (q) => graphChanges(graph, resource, q))),
    reconcile: async (key) => {
      const item = graph.getByKey(key);
      if (!item) return;
      const dependents = graph.dependentsOf(item.obj.metadata?.uid ?? '');
      let action = decideDeleting(
        item.obj,
        dependents.map((d) => d.obj),
      );
      if (!action) {
        const owners = await ownerStates(client, graph, item);
        reportInvalidNamespaceOwnerRefs(recorder, graph, item, owners);
        action = decideOwned(
          item.obj,
          owners,
          dependents.map((d) => d.obj),
        );
      }
      await execute(client, item, action, dependents, controller);
    },
  });
  followDiscovery(client, graph, controller, resources, signal);
  try {
    await controller.run(signal);
  } finally {
    await recorder.close();
  }
}

/**
 * Upstream's OwnerRefInvalidNamespace warning on the dependent: a cluster-scoped object naming a
 * namespaced kind, or a reference whose uid is an object in another namespace (owners of a
 * namespaced object live in its namespace or are cluster-scoped; such a reference is dangling).
 */
function reportInvalidNamespaceOwnerRefs(
  recorder: EventRecorder,
  graph: OwnerGraph,
  item: GraphItem,
  owners: ReadonlyMap<string, OwnerState>,
): void {
  const ns = item.obj.metadata?.namespace ?? '';
  for (const ref of item.obj.metadata?.ownerReferences ?? []) {
    const state = owners.get(ref.uid);
    const seenIn = state === 'dangling' ? graph.keyOfUid(ref.uid)?.split('/')[2] : undefined;
    const elsewhere = seenIn !== undefined && seenIn !== '' && seenIn !== ns;
    if (state !== 'invalidScope' && !elsewhere) continue;
    const m = item.obj.metadata;
    recorder.event(
      {
        kind: item.resource.kind,
        apiVersion: apiVersionOf(item.resource),
        namespace: m?.namespace,
        name: m?.name,
        uid: m?.uid,
      },
      'Warning',
      'OwnerRefInvalidNamespace',
      `ownerRef [${ref.apiVersion}/${ref.kind}, namespace: ${ns}, name: ${ref.name}, uid: ${ref.uid}] does not exist in namespace "${ns}"`,
    );
  }
}

/** Handlers: which keys an object's change puts in the queue (upstream's processGraphChanges). */
function graphChanges(graph: OwnerGraph, resource: ApiResource, q: Enqueuer<string>) {
  const enqueueUids = (uids: readonly string[]): void => {
    for (const uid of uids) {
      const k = graph.keyOfUid(uid);
      if (k) q.add(k);
    }
  };
  const changed = (obj: KubeObjectLike, old?: KubeObjectLike): void => {
    const key = graph.observe(resource, obj);
    const deleting = !!obj.metadata?.deletionTimestamp;
    if (
      ownerUids(obj).length ||
      (deleting && (obj.metadata?.finalizers ?? []).some((f) => f === ORPHAN_FINALIZER || f === FOREGROUND_FINALIZER))
    )
      q.add(key);
    // An owner waiting in the foreground re-checks its blocking dependents when one changes.
    enqueueUids([...ownerUids(obj), ...(old ? ownerUids(old) : [])]);
    // A dependent re-classifies its owner once that owner is being deleted.
    if (deleting) for (const d of graph.dependentsOf(obj.metadata?.uid ?? '')) q.add(d.key);
  };
  return {
    onAdd: (obj: KubeObjectLike) => changed(obj),
    onUpdate: (old: KubeObjectLike, obj: KubeObjectLike) => changed(obj, old),
    onDelete: (x: KubeObjectLike | { tombstone: true; key: string; obj: KubeObjectLike }) => {
      const obj = objectOf(x);
      graph.forget(obj);
      for (const d of graph.dependentsOf(obj.metadata?.uid ?? '')) q.add(d.key);
      enqueueUids(ownerUids(obj));
    },
  };
}

/** The state of each owner of a live object; nothing is looked up for objects without owners. */
async function ownerStates(client: RestClient, graph: OwnerGraph, item: GraphItem): Promise<Map<string, OwnerState>> {
  const out = new Map<string, OwnerState>();
  if (item.obj.metadata?.deletionTimestamp) return out;
  for (const ref of item.obj.metadata?.ownerReferences ?? [])
    out.set(ref.uid, await ownerState(client, graph, item, ref));
  return out;
}

async function ownerState(
  client: RestClient,
  graph: OwnerGraph,
  item: GraphItem,
  ref: OwnerReference,
): Promise<OwnerState> {
  const r = graph.resourceFor(ref);
  // Upstream retries an owner kind the server does not serve (it may be installed later).
  if (!r) throw new UnavailableError(`no resource serves ${ref.apiVersion} ${ref.kind} (owner of ${item.key})`);
  // A cluster-scoped object cannot have a namespaced owner; a namespaced owner lives in the dependent's namespace.
  if (r.namespaced && !item.resource.namespaced) return 'invalidScope';
  const ns = r.namespaced ? item.obj.metadata?.namespace : undefined;
  let owner = graph.get(r, ns, ref.name);
  if (owner?.metadata?.uid !== ref.uid) {
    // The cache may lag behind a just-created owner: only the API server may say it is gone.
    try {
      owner = await client.dynamic(r.kind, r).get(ref.name, { namespace: ns });
    } catch (e) {
      if (e instanceof NotFoundError) return 'dangling';
      throw e;
    }
    if (owner.metadata?.uid !== ref.uid) return 'dangling';
  }
  return isDeletingDependents(owner) ? 'waiting' : 'solid';
}

/** The one place the collector writes. Every write is conditional on what was decided from. */
async function execute(
  client: RestClient,
  item: GraphItem,
  a: GcAction,
  dependents: readonly GraphItem[],
  q: Enqueuer<string>,
): Promise<void> {
  const uid = item.obj.metadata?.uid ?? '';
  switch (a.kind) {
    case 'none':
      return;
    case 'orphanDependents':
      for (const d of dependents) await patchMeta(client, d, { ownerReferences: withoutOwners(d.obj, [uid]) ?? null });
      await removeFinalizer(client, item, ORPHAN_FINALIZER);
      log.info('orphaned dependents', { owner: item.key, dependents: dependents.length });
      return;
    case 'removeForegroundFinalizer':
      await removeFinalizer(client, item, FOREGROUND_FINALIZER);
      log.info('no blocking dependents left; foreground deletion completes', { owner: item.key });
      return;
    case 'waitForDependents':
      // Their own reconcile deletes them; make sure they are looked at (upstream re-queues them).
      for (const d of dependents) if (a.blocking.includes(d.obj) && !isDeletingDependents(d.obj)) q.add(d.key);
      return;
    case 'removeOwnerReferences':
      await patchMeta(client, item, { ownerReferences: withoutOwners(item.obj, a.uids) ?? null });
      log.info('removed references to owners that are gone or deleting', { item: item.key, owners: a.uids.join(',') });
      return;
    case 'delete':
      if (a.unblock) await patchMeta(client, item, { ownerReferences: unblocked(item.obj) });
      await deleteItem(client, item, a.policy);
      return;
    case 'invalidOwnerScope':
      log.warn('cluster-scoped object refers to a namespaced owner; ignored', {
        item: item.key,
        owners: a.refs.map((r) => `${r.kind}/${r.name}`).join(','),
      });
      return;
    default:
      assertNever(a);
  }
}

async function deleteItem(
  client: RestClient,
  item: GraphItem,
  policy: 'Orphan' | 'Background' | 'Foreground',
): Promise<void> {
  const m = item.obj.metadata;
  try {
    await client.dynamic(item.resource.kind, item.resource).delete(m?.name ?? '', {
      namespace: m?.namespace,
      propagationPolicy: policy,
      preconditions: { uid: m?.uid },
    });
    log.info('deleted object whose owners are gone', { item: item.key, propagationPolicy: policy });
  } catch (e) {
    ignoreNotFound(e);
  }
}

async function removeFinalizer(client: RestClient, item: GraphItem, finalizer: string): Promise<void> {
  const left = (item.obj.metadata?.finalizers ?? []).filter((f) => f !== finalizer);
  await patchMeta(client, item, { finalizers: left.length ? left : null });
}

/** A merge patch of metadata fields, conditional on the resourceVersion the decision read. */
async function patchMeta(client: RestClient, item: GraphItem, meta: Record<string, unknown>): Promise<void> {
  const m = item.obj.metadata;
  try {
    await client
      .dynamic(item.resource.kind, item.resource)
      .patch(
        m?.name ?? '',
        'merge',
        { metadata: { ...meta, uid: m?.uid, resourceVersion: m?.resourceVersion } },
        { namespace: m?.namespace },
      );
  } catch (e) {
    ignoreNotFound(e);
  }
}

async function discoverWithRetry(client: RestClient, signal: AbortSignal): Promise<ApiResource[] | undefined> {
  for (;;) {
    try {
      return await discoverDeletableResources(client, signal);
    } catch (e) {
      if (signal.aborted) return undefined;
      log.warn('discovery failed; retrying', { error: toStowageError(e).message });
    }
    try {
      await realClock.sleep(DISCOVERY_RETRY_MS, signal);
    } catch {
      return undefined;
    }
  }
}

/** The controller manager's informers by resource, for the kinds the collector would watch anyway. */
function sharedInformers(i: ControllerInformers): Map<string, Informer<KubeObjectLike>> {
  const pairs: Array<[KindName, Informer<KubeObjectLike>]> = [
    ['PersistentVolume', i.pvs],
    ['PersistentVolumeClaim', i.pvcs],
    ['StorageClass', i.classes],
    ['Node', i.nodes],
    ['Pod', i.pods],
    ['CSIDriver', i.csiDrivers],
    ['CSINode', i.csiNodes],
    ['VolumeAttachment', i.attachments],
    ['CSIStorageCapacity', i.capacities],
    ['Namespace', i.namespaces],
  ];
  return new Map(pairs.map(([k, inf]) => [resourceId(KINDS[k]), inf]));
}
