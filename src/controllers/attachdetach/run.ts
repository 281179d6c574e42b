/**
 * Runtime of the attach/detach controller. The whole world is one key: every informer event
 * enqueues "sync", and a sync recomputes desired state, diffs it against VolumeAttachments and
 * node statuses (reconcile.ts) and executes the operations. Level-triggered, so it is correct
 * from any starting state and after any restart; a resync timer and lease-expiry deadlines cover
 * changes no event announces (time passing).
 */
import { newEventRecorder, newWorkQueue, objectOf, runWorkers, waitForCacheSync, type RestClient } from '../../client/index.js';
import { newControllerInformers, runControllerInformers, type ControllerInformers } from '../informers.js';
import { childAbortController } from '../../util/abort.js';
import { realClock, type Clock } from '../../util/backoff.js';
import { AlreadyExistsError, NotFoundError, toStowageError } from '../../util/errors.js';
import { newLogger } from '../../util/log.js';
import { desiredAttachments, isControllerManaged } from './desired.js';
import { attachEvents } from './events.js';
import { nodeLiveness, type NodeLiveness } from './nodehealth.js';
import { reconcileAttachments, type AttachOp, type NodeState } from './reconcile.js';
import { NODE_LEASE_NAMESPACE, uniqueVolumeName, type ActualAttachment, type PodRef, type VolumeAttachment } from './types.js';

const log = newLogger('attachdetach');
const SYNC = 'sync';
const CREATED_MEMORY_MS = 60_000; // far beyond any informer lag; only bounds memory of objects deleted unseen

export interface AttachDetachOptions {
  readonly client: RestClient;
  readonly signal: AbortSignal;
  /** How long past its lease's expiry an out-of-service node must stay silent before its volumes are force-detached. */
  readonly nodeGoneGraceMs?: number;
  /** Full re-sync period (safety net; events drive normal operation). */
  readonly resyncMs?: number;
  /** API writes in flight at once per sync. */
  readonly concurrency?: number;
  readonly clock?: Clock;
  /** Informers shared with other controllers (the caller runs them); default: own ones. */
  readonly informers?: ControllerInformers;
}

function podRefObject(p: PodRef): { kind: string; apiVersion: string; namespace: string; name: string; uid: string } {
  return { kind: 'Pod', apiVersion: 'v1', namespace: p.namespace, name: p.name, uid: p.uid };
}

async function inBatches<T>(items: readonly T[], n: number, fn: (t: T) => Promise<void>): Promise<unknown[]> {
  const errors: unknown[] = [];
  for (let i = 0; i < items.length; i += n) {
    const rs = await Promise.allSettled(items.slice(i, i + n).map(fn));
    for (const r of rs) if (r.status === 'rejected') errors.push(r.reason);
  }
  return errors;
}

/** Runs the attach/detach controller until `signal` aborts. */
export async function runAttachDetachController(o: AttachDetachOptions): Promise<void> {
  const { client } = o;
  const clock = o.clock ?? realClock;
  const graceMs = o.nodeGoneGraceMs ?? 0;
  const resyncMs = o.resyncMs ?? 60_000;
  const concurrency = o.concurrency ?? 16;
  const inf = o.informers ?? newControllerInformers(client);
  const { pods, nodes, pvs: volumes, pvcs: claims, csiDrivers: drivers, attachments, nodeLeases: leases } = inf;
  const informers = [pods, nodes, volumes, claims, drivers, attachments, leases];
  const queue = newWorkQueue<string>({ name: 'attachdetach' });
  const enqueue = (): void => queue.add(SYNC);
  // VolumeAttachments this controller created that the informer may not show yet. Without them a
  // sync right after a create would not see the volume attached to its node, and could attach a
  // ReadWriteOnce volume to a second node. Entries leave once the informer has the object (or after
  // CREATED_MEMORY_MS, should someone else delete it before we ever see it).
  const created = new Map<string, { a: ActualAttachment; at: number }>();

  const handler = { onAdd: enqueue, onUpdate: enqueue, onDelete: enqueue };
  pods.addEventHandler(handler);
  nodes.addEventHandler(handler);
  volumes.addEventHandler(handler);
  claims.addEventHandler(handler);
  drivers.addEventHandler(handler);
  attachments.addEventHandler({
    onAdd: (va) => {
      created.delete(va.metadata?.name ?? '');
      enqueue();
    },
    onUpdate: enqueue,
    onDelete: (x) => {
      created.delete(objectOf(x).metadata?.name ?? '');
      enqueue();
    },
  });
  leases.addEventHandler(handler);
  const recorder = newEventRecorder({ client, component: 'attachdetach-controller' });
  const vaApi = client.resource('VolumeAttachment');
  const nodeApi = client.resource('Node');
  // Events already told, so that a standing condition is reported once (kube's MultiAttachErrorReported).
  let multiAttachReported = new Set<string>();
  let attachReported = new Set<string>();

  const actualOf = (va: VolumeAttachment): ActualAttachment | null => {
    const pvName = va.spec?.source?.persistentVolumeName;
    if (!pvName) return null; // inline (migrated) volumes are not ours
    const csi = volumes.lister.get(pvName)?.spec?.csi;
    return {
      name: va.metadata?.name ?? '',
      pvName,
      nodeName: va.spec.nodeName,
      attacher: va.spec.attacher,
      attached: va.status?.attached === true,
      deleting: va.metadata?.deletionTimestamp !== undefined,
      ...(csi ? { uniqueName: uniqueVolumeName(csi.driver, csi.volumeHandle) } : {}),
    };
  };

  const execute = async (op: AttachOp): Promise<void> => {
    switch (op.kind) {
      case 'nodeStatus':
        try {
          await nodeApi.patchStatus(op.nodeName, 'merge', { status: { volumesAttached: op.volumesAttached } });
        } catch (e) {
          if (!(e instanceof NotFoundError)) throw e;
        }
        return;
      case 'delete':
        log.info(op.force ? 'detaching from a gone node' : 'detaching', { attachment: op.name, volume: op.pvName, node: op.nodeName });
        try {
          await vaApi.delete(op.name);
        } catch (e) {
          if (!(e instanceof NotFoundError)) throw e;
        }
        created.delete(op.name);
        return;
      case 'create': {
        const a = op.attachment;
        log.info('attaching', { attachment: a.name, volume: a.pvName, node: a.nodeName });
        try {
          await vaApi.create({
            apiVersion: 'storage.k8s.io/v1',
            kind: 'VolumeAttachment',
            metadata: { name: a.name },
            spec: { attacher: a.driver, nodeName: a.nodeName, source: { persistentVolumeName: a.pvName } },
          });
        } catch (e) {
          if (!(e instanceof AlreadyExistsError)) throw e;
        }
        created.set(a.name, {
          a: { name: a.name, pvName: a.pvName, nodeName: a.nodeName, attacher: a.driver, attached: false, deleting: false, uniqueName: a.uniqueName },
          at: clock.now(),
        });
        return;
      }
      case 'multiAttach':
        recorder.event(podRefObject(op.pod), 'Warning', 'FailedAttachVolume', op.message);
        return;
    }
  };

  const sync = async (): Promise<{ requeueAfterMs: number }> => {
    const now = clock.now();
    const liveness = new Map<string, NodeLiveness>();
    const live = (name: string): NodeLiveness => {
      let l = liveness.get(name);
      if (!l) liveness.set(name, (l = nodeLiveness(nodes.lister.get(name), leases.lister.get(NODE_LEASE_NAMESPACE, name), now, graceMs)));
      return l;
    };
    const desired = desiredAttachments({
      pods: pods.lister.list(),
      claim: (ns, name) => claims.lister.get(ns, name),
      volume: (name) => volumes.lister.get(name),
      csiDriver: (name) => drivers.lister.get(name),
      node: (name) => nodes.lister.get(name),
      isGone: (name) => live(name).kind === 'gone',
    });
    const actual = attachments.lister.list().flatMap((va) => actualOf(va) ?? []);
    for (const [name, c] of created) {
      if (attachments.lister.get(name) || now - c.at > CREATED_MEMORY_MS) created.delete(name);
      else actual.push(c.a);
    }
    const nodeStates = new Map<string, NodeState>();
    for (const n of nodes.lister.list()) {
      const name = n.metadata?.name ?? '';
      nodeStates.set(name, {
        name,
        gone: live(name).kind === 'gone',
        managed: isControllerManaged(n),
        volumesInUse: n.status?.volumesInUse ?? [],
        volumesAttached: (n.status?.volumesAttached ?? []).map((v) => ({ name: v.name, devicePath: v.devicePath })),
      });
    }
    const ops = reconcileAttachments({ desired, actual, nodes: nodeStates });
    const errors: unknown[] = [];
    // Phase by phase, as ordered by the reconciler; writes within a phase run concurrently.
    for (const kind of ['nodeStatus', 'delete', 'create'] as const) {
      errors.push(...(await inBatches(ops.filter((x) => x.kind === kind), concurrency, execute)));
    }
    const warned = new Set<string>();
    for (const op of ops) {
      if (op.kind !== 'multiAttach') continue;
      const key = `${op.pod.uid}/${op.attachment}`;
      warned.add(key);
      if (!multiAttachReported.has(key)) await execute(op);
    }
    multiAttachReported = warned;
    const told = attachEvents(desired, attachments.lister.list(), attachReported);
    attachReported = told.reported;
    for (const e of told.events) recorder.event(podRefObject(e.pod), e.type, e.reason, e.message);
    if (errors.length > 0) throw toStowageError(errors[0]);
    let next = resyncMs;
    for (const l of liveness.values()) if (l.kind === 'dying') next = Math.min(next, Math.max(1, l.goneAtMs - now));
    return { requeueAfterMs: next };
  };

  const stop = childAbortController(o.signal);
  const runs = o.informers ? [] : runControllerInformers(inf, stop.signal);
  try {
    await waitForCacheSync(stop.signal, ...informers);
    queue.add(SYNC);
    await runWorkers(queue, 1, sync, { signal: stop.signal, log });
  } catch {
    // aborted before the caches synced
  } finally {
    await Promise.allSettled(runs);
    await recorder.close();
  }
}
