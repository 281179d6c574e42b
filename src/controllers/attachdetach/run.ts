/**
 * Runtime of the attach/detach controller, keyed per volume-node pair (kube's reconciler works
 * attachment by attachment too): informer events enqueue the pairs they may affect, and a pair's
 * reconcile recomputes desired state for the pods of that volume and of that node, diffs it against
 * VolumeAttachments and node statuses (reconcile.ts) and executes the operations of that pair only,
 * after the node's volumesAttached. A failure requeues that pair alone. Level-triggered, so it is
 * correct from any starting state and after any restart; a resync and lease-expiry deadlines cover
 * changes no event announces (time passing).
 */
import { nodeReadyStatus } from '../../kube/node.js';
import { every, newController, newEventRecorder, objectOf, watch, type RestClient } from '../../client/index.js';
import { VA_NODE_INDEX, VA_VOLUME_INDEX, newControllerInformers, type ControllerInformers } from '../informers.js';
import { realClock, type Clock } from '../../util/backoff.js';
import { AlreadyExistsError, NotFoundError } from '../../util/errors.js';
import { newLogger } from '../../util/log.js';
import type { MetricsRegistry } from '../../util/metrics.js';
import { desiredAttachments, isControllerManaged } from './desired.js';
import { attachEvents } from './events.js';
import { attachFieldsChanged, newKeyFanout } from './fanout.js';
import { jsonEqual } from '../../util/jsonequal.js';
import { nodeKey, parseAttachKey } from './keys.js';
import { hasOutOfServiceTaint, nodeLiveness, type NodeLiveness } from './nodehealth.js';
import { reconcileAttachments, type AttachOp, type NodeState } from './reconcile.js';
import {
  NODE_LEASE_NAMESPACE,
  uniqueVolumeName,
  type ActualAttachment,
  type DesiredAttachment,
  type Pod,
  type PodRef,
  type VolumeAttachment,
} from './types.js';

const log = newLogger('attachdetach');
const CREATED_MEMORY_MS = 60_000; // far beyond any informer lag; only bounds memory of objects deleted unseen

export interface AttachDetachOptions {
  readonly client: RestClient;
  readonly signal: AbortSignal;
  /** How long past its lease's expiry an out-of-service node must stay silent before its volumes are force-detached. */
  readonly nodeGoneGraceMs?: number;
  /** Full re-sync period (safety net; events drive normal operation). */
  readonly resyncMs?: number;
  /** Pairs reconciled at once (each writes to the API). */
  readonly concurrency?: number;
  readonly clock?: Clock;
  /** Informers shared with other controllers; default: own ones. */
  readonly informers?: ControllerInformers;
  readonly metrics?: MetricsRegistry;
}

function podRefObject(p: PodRef): { kind: string; apiVersion: string; namespace: string; name: string; uid: string } {
  return { kind: 'Pod', apiVersion: 'v1', namespace: p.namespace, name: p.name, uid: p.uid };
}

/** Runs the attach/detach controller until `signal` aborts. */
export async function runAttachDetachController(o: AttachDetachOptions): Promise<void> {
  const { client } = o;
  const clock = o.clock ?? realClock;
  const graceMs = o.nodeGoneGraceMs ?? 0;
  const resyncMs = o.resyncMs ?? 60_000;
  const inf = o.informers ?? newControllerInformers(client);
  const { pods, nodes, pvs: volumes, pvcs: claims, csiDrivers: drivers, attachments, nodeLeases: leases } = inf;
  // VolumeAttachments this controller created (or is creating) that the informer may not show yet.
  // Without them a reconcile right after a create would not see the volume attached to its node,
  // and could attach a ReadWriteOnce volume to a second node. An entry is made in the same
  // synchronous step as the decision to create, so concurrent pairs of one volume see it; it leaves
  // once the informer has the object (or after CREATED_MEMORY_MS, should someone else delete it
  // before we ever see it), or when the create fails.
  const created = new Map<string, { a: ActualAttachment; at: number }>();
  const recorder = newEventRecorder({ client, component: 'attachdetach-controller' });
  const vaApi = client.resource('VolumeAttachment');
  const nodeApi = client.resource('Node');
  // Events already told, so that a standing condition is reported once (kube's MultiAttachErrorReported):
  // Multi-Attach by `podUID/attachment`, attach outcomes by attachEvents' state keys, per attachment.
  const multiAttachReported = new Map<string, Set<string>>();
  const attachReported = new Map<string, Set<string>>();

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

  const fan = newKeyFanout(inf);
  const { podsOfVolume, podsOnNode } = fan;

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
        log.info(op.force ? 'detaching from a gone node' : 'detaching', {
          attachment: op.name,
          volume: op.pvName,
          node: op.nodeName,
        });
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
        return;
      }
      case 'multiAttach':
      case 'awaitingFencing':
        recorder.event(podRefObject(op.pod), 'Warning', 'FailedAttachVolume', op.message);
        return;
    }
  };

  /** Desired, actual and node states of the pods and attachments of one volume and one node. */
  const world = (pvName: string | undefined, nodeName: string, now: number) => {
    const liveness = new Map<string, NodeLiveness>();
    const live = (name: string): NodeLiveness => {
      let l = liveness.get(name);
      if (!l)
        liveness.set(
          name,
          (l = nodeLiveness(nodes.lister.get(name), leases.lister.get(NODE_LEASE_NAMESPACE, name), now, graceMs)),
        );
      return l;
    };
    const relevant = new Set<Pod>(podsOnNode(nodeName));
    if (pvName) for (const p of podsOfVolume(pvName)) relevant.add(p);
    const desired = desiredAttachments({
      pods: [...relevant],
      claim: (ns, name) => claims.lister.get(ns, name),
      volume: (name) => volumes.lister.get(name),
      csiDriver: (name) => drivers.lister.get(name),
      node: (name) => nodes.lister.get(name),
      isGone: (name) => live(name).kind === 'gone',
    });
    const vas = new Set<VolumeAttachment>(attachments.byIndex(VA_NODE_INDEX, nodeName));
    if (pvName) for (const va of attachments.byIndex(VA_VOLUME_INDEX, pvName)) vas.add(va);
    const actual = [...vas].flatMap((va) => actualOf(va) ?? []);
    for (const [name, c] of created) {
      if (attachments.lister.get(name) || now - c.at > CREATED_MEMORY_MS) created.delete(name);
      else if (c.a.nodeName === nodeName || c.a.pvName === pvName) actual.push(c.a);
    }
    const nodeStates = new Map<string, NodeState>();
    for (const name of new Set([
      nodeName,
      ...actual.map((a) => a.nodeName),
      ...[...desired.values()].map((d) => d.nodeName),
    ])) {
      const n = nodes.lister.get(name);
      if (!n) continue;
      nodeStates.set(name, {
        name,
        gone: live(name).kind === 'gone',
        managed: isControllerManaged(n),
        ready: nodeReadyStatus(n) === 'True',
        volumesInUse: n.status?.volumesInUse ?? [],
        volumesAttached: (n.status?.volumesAttached ?? []).map((v) => ({ name: v.name, devicePath: v.devicePath })),
      });
    }
    const node = live(nodeName);
    return {
      desired,
      ops: reconcileAttachments({ desired, actual, nodes: nodeStates }),
      requeueAfterMs: node.kind === 'dying' ? Math.max(1, node.goneAtMs - now) : undefined,
    };
  };

  /** Reports each standing condition once: `now` are this attachment's current state keys. */
  const reportOnce = (told: Map<string, Set<string>>, attachment: string, now: ReadonlySet<string>): Set<string> => {
    const before = told.get(attachment) ?? new Set<string>();
    if (now.size > 0) told.set(attachment, new Set(now));
    else told.delete(attachment);
    return before;
  };

  const reconcilePair = async (pvName: string, nodeName: string): Promise<{ requeueAfterMs?: number }> => {
    const now = clock.now();
    const { desired, ops, requeueAfterMs } = world(pvName, nodeName, now);
    const status = ops.find((x) => x.kind === 'nodeStatus' && x.nodeName === nodeName);
    const mine = (x: AttachOp): boolean =>
      (x.kind === 'delete' && x.pvName === pvName && x.nodeName === nodeName) ||
      (x.kind === 'create' && x.attachment.pvName === pvName && x.attachment.nodeName === nodeName);
    const writes = ops.filter(mine);
    // Reserve before the first await: a concurrent reconcile of another node of this volume must see it attached here.
    for (const op of writes) {
      if (op.kind !== 'create') continue;
      const a = op.attachment;
      created.set(a.name, {
        a: {
          name: a.name,
          pvName,
          nodeName,
          attacher: a.driver,
          attached: false,
          deleting: false,
          uniqueName: a.uniqueName,
        },
        at: now,
      });
    }
    try {
      // The node's volumesAttached drops a volume before its detach starts (so the kubelet stops trusting it).
      if (status) await execute(status);
      for (const op of writes) await execute(op);
    } catch (e) {
      for (const op of writes)
        if (op.kind === 'create' && !attachments.lister.get(op.attachment.name)) created.delete(op.attachment.name);
      throw e;
    }
    const mineDesired = [...desired.values()].find((d) => d.pvName === pvName && d.nodeName === nodeName);
    await tell(mineDesired, ops);
    return requeueAfterMs === undefined ? {} : { requeueAfterMs };
  };

  const tell = async (d: DesiredAttachment | undefined, ops: readonly AttachOp[]): Promise<void> => {
    if (!d) return;
    const warnings = ops.filter(
      (x): x is Extract<AttachOp, { kind: 'multiAttach' | 'awaitingFencing' }> =>
        (x.kind === 'multiAttach' || x.kind === 'awaitingFencing') && x.attachment === d.name,
    );
    const told = (w: (typeof warnings)[number]): string => `${w.kind}/${w.pod.uid}`;
    const warned = reportOnce(multiAttachReported, d.name, new Set(warnings.map(told)));
    for (const w of warnings) if (!warned.has(told(w))) await execute(w);
    const va = attachments.lister.get(d.name);
    const outcome = attachEvents(new Map([[d.name, d]]), va ? [va] : [], attachReported.get(d.name) ?? new Set());
    reportOnce(attachReported, d.name, outcome.reported);
    for (const e of outcome.events) recorder.event(podRefObject(e.pod), e.type, e.reason, e.message);
  };

  const reconcileNode = async (nodeName: string): Promise<{ requeueAfterMs?: number }> => {
    const { ops, requeueAfterMs } = world(undefined, nodeName, clock.now());
    const status = ops.find((x) => x.kind === 'nodeStatus' && x.nodeName === nodeName);
    if (status) await execute(status);
    return requeueAfterMs === undefined ? {} : { requeueAfterMs };
  };

  const controller = newController<string>({
    name: 'attachdetach',
    workers: o.concurrency ?? 16,
    metrics: o.metrics,
    log,
    sources: [
      watch(pods, (q) => ({
        onAdd: (p) => fan.pod(q, p),
        onUpdate: (a, b) => {
          fan.pod(q, a);
          fan.pod(q, b);
        },
        onDelete: (x) => fan.pod(q, objectOf(x)),
      })),
      watch(nodes, (q) => ({
        onAdd: (n) => fan.node(q, n.metadata?.name ?? ''),
        // Heartbeats rewrite node status every few seconds: only what attach/detach reads counts.
        onUpdate: (a, b) => {
          const name = b.metadata?.name ?? '';
          // A node turning not ready (or back) changes what a pod elsewhere waiting for its volumes is told.
          if (nodeReadyStatus(a) !== nodeReadyStatus(b)) fan.volumesOf(q, name);
          if (attachFieldsChanged(a, b)) fan.node(q, name);
          else if (!jsonEqual(a.status?.volumesAttached, b.status?.volumesAttached)) q.add(nodeKey(name));
        },
        onDelete: (x) => fan.node(q, objectOf(x).metadata?.name ?? ''),
      })),
      // A lease renewal only matters to a node tainted out of service (its liveness decides a force detach).
      watch(leases, (q) => {
        const onLease = (name: string): void => {
          const n = nodes.lister.get(name);
          if (n && hasOutOfServiceTaint(n)) fan.node(q, name);
        };
        return {
          onAdd: (l) => onLease(l.metadata?.name ?? ''),
          onUpdate: (_, l) => onLease(l.metadata?.name ?? ''),
          onDelete: (x) => onLease(objectOf(x).metadata?.name ?? ''),
        };
      }),
      watch(volumes, (q) => ({
        onAdd: (v) => fan.volume(q, v.metadata?.name ?? ''),
        onUpdate: (_, v) => fan.volume(q, v.metadata?.name ?? ''),
        onDelete: (x) => fan.volume(q, objectOf(x).metadata?.name ?? ''),
      })),
      watch(claims, (q) => {
        const onClaim = (c: { spec?: { volumeName?: string } }): void => {
          if (c.spec?.volumeName) fan.volume(q, c.spec.volumeName);
        };
        return { onAdd: onClaim, onUpdate: (_, c) => onClaim(c), onDelete: (x) => onClaim(objectOf(x)) };
      }),
      watch(drivers, (q) => ({ onAdd: () => fan.all(q), onUpdate: () => fan.all(q), onDelete: () => fan.all(q) })),
      watch(attachments, (q) => {
        const onVa = (va: VolumeAttachment): void => {
          const pv = va.spec?.source?.persistentVolumeName;
          q.add(nodeKey(va.spec.nodeName));
          if (pv) fan.volume(q, pv); // a detach may free a ReadWriteOnce volume for the pod waiting on another node
        };
        return {
          onAdd: (va) => {
            created.delete(va.metadata?.name ?? '');
            onVa(va);
          },
          onUpdate: (_, va) => onVa(va),
          onDelete: (x) => {
            created.delete(objectOf(x).metadata?.name ?? '');
            onVa(objectOf(x));
          },
        };
      }),
      every(resyncMs, fan.all, clock),
    ],
    reconcile: async (key) => {
      const k = parseAttachKey(key);
      if (!k) return;
      return k.kind === 'pair' ? reconcilePair(k.pvName, k.nodeName) : reconcileNode(k.nodeName);
    },
  });
  try {
    await controller.run(o.signal);
  } finally {
    await recorder.close();
  }
}
