/**
 * The attach/detach reconciler as a pure function of desired and actual state (kube's
 * reconciler.go, one pass): what to report in node.status.volumesAttached, which
 * VolumeAttachments to delete, which to create, and which pods to warn about Multi-Attach.
 *
 * Order of the returned operations is the order to execute them: a volume leaves the node's
 * volumesAttached before its detach starts (so the kubelet stops trusting it), deletes before
 * creates (a volume moving between nodes frees its old slot first).
 */
import type { ActualAttachment, AttachedVolume, DesiredAttachment, PodRef } from './types.js';

export interface NodeState {
  readonly name: string;
  /** Deleted, or out of service past its lease: detach without waiting for an unmount. */
  readonly gone: boolean;
  readonly managed: boolean;
  /** Ready condition True. A node not ready but not gone may still be writing to its volumes. */
  readonly ready: boolean;
  readonly volumesInUse: readonly string[];
  readonly volumesAttached: readonly AttachedVolume[];
}

export type AttachOp =
  | { readonly kind: 'nodeStatus'; readonly nodeName: string; readonly volumesAttached: readonly AttachedVolume[] }
  | {
      readonly kind: 'delete';
      readonly name: string;
      readonly nodeName: string;
      readonly pvName: string;
      readonly force: boolean;
    }
  | { readonly kind: 'create'; readonly attachment: DesiredAttachment }
  | { readonly kind: 'multiAttach'; readonly pod: PodRef; readonly attachment: string; readonly message: string }
  | { readonly kind: 'awaitingFencing'; readonly pod: PodRef; readonly attachment: string; readonly message: string };

export interface ReconcileInput {
  readonly desired: ReadonlyMap<string, DesiredAttachment>;
  readonly actual: readonly ActualAttachment[];
  /** Nodes that exist, by name. A VolumeAttachment's node missing here is deleted. */
  readonly nodes: ReadonlyMap<string, NodeState>;
}

const byName = <T extends { name: string }>(a: T, b: T): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** reconciler.reportMultiAttachError: names pods in the viewer's namespace only, counts the others. */
export function multiAttachMessage(pvName: string, viewer: PodRef, blocking: readonly PodRef[]): string {
  let msg: string;
  if (blocking.length === 0)
    msg = "Volume is already exclusively attached to one node and can't be attached to another";
  else {
    const local = blocking.filter((p) => p.namespace === viewer.namespace).map((p) => p.name);
    const others = blocking.length - local.length;
    if (local.length > 0)
      msg = `Volume is already used by pod(s) ${local.join(', ')}${others > 0 ? ` and ${others} pod(s) in different namespaces` : ''}`;
    else msg = `Volume is already used by ${others} pod(s) in different namespaces`;
  }
  return `Multi-Attach error for volume "${pvName}" ${msg}`;
}

/**
 * Why a volume stays on a node that stopped answering: Kubernetes would force-detach it after
 * 6 minutes (maxWaitForUnmountDuration) whether or not the node still writes to it; Stowage waits
 * for proof that it does not — the out-of-service taint, or the node coming back and unmounting.
 */
export function awaitingFencingMessage(pvName: string, nodes: readonly string[]): string {
  return (
    `Volume "${pvName}" is still attached to node(s) ${nodes.join(', ')}, which is not ready and not known to be shut down: ` +
    'it is not detached while that node may still write to it. Once the node is shut down, taint it ' +
    'node.kubernetes.io/out-of-service=nodeshutdown:NoExecute (non-graceful node shutdown) to detach the volume at once.'
  );
}

export function reconcileAttachments(i: ReconcileInput): AttachOp[] {
  const deletes: AttachOp[] = [];
  const creates: AttachOp[] = [];
  const warnings: AttachOp[] = [];
  const leaving = new Set<string>();
  const actualByName = new Map(i.actual.map((a) => [a.name, a]));

  for (const a of [...i.actual].sort(byName)) {
    if (a.deleting || i.desired.has(a.name)) continue;
    const node = i.nodes.get(a.nodeName);
    const gone = !node || node.gone;
    if (!gone && !node.managed) continue; // the node's own kubelet manages its attachments
    // Detaching a volume still mounted would pull it from under a running filesystem: wait for the unmount.
    if (!gone && a.uniqueName !== undefined && node.volumesInUse.includes(a.uniqueName)) continue;
    leaving.add(a.name);
    deletes.push({ kind: 'delete', name: a.name, nodeName: a.nodeName, pvName: a.pvName, force: gone });
  }

  // A volume counts as attached to a node from VolumeAttachment creation until the object is gone.
  const attachedTo = new Map<string, Set<string>>();
  const mark = (pv: string, node: string): void => {
    let s = attachedTo.get(pv);
    if (!s) attachedTo.set(pv, (s = new Set()));
    s.add(node);
  };
  for (const a of i.actual) mark(a.pvName, a.nodeName);

  for (const d of [...i.desired.values()].sort(byName)) {
    if (actualByName.has(d.name)) continue; // exists (or is still being detached: the name frees up later)
    const others = [...(attachedTo.get(d.pvName) ?? [])].filter((n) => n !== d.nodeName);
    if (!d.multiAttachAllowed && others.length > 0) {
      const blocking = [...i.desired.values()]
        .filter((x) => x.pvName === d.pvName && others.includes(x.nodeName))
        .flatMap((x) => x.pods);
      for (const p of d.pods)
        warnings.push({
          kind: 'multiAttach',
          pod: p,
          attachment: d.name,
          message: multiAttachMessage(d.pvName, p, blocking),
        });
      const unfenced = others.filter((n) => i.nodes.get(n)?.ready === false && !i.nodes.get(n)?.gone).sort();
      if (unfenced.length > 0)
        for (const p of d.pods)
          warnings.push({
            kind: 'awaitingFencing',
            pod: p,
            attachment: d.name,
            message: awaitingFencingMessage(d.pvName, unfenced),
          });
      continue;
    }
    creates.push({ kind: 'create', attachment: d });
    mark(d.pvName, d.nodeName);
  }

  const statuses: AttachOp[] = [];
  for (const n of [...i.nodes.values()].sort(byName)) {
    if (n.gone || !n.managed) continue;
    const names = new Set<string>();
    for (const a of i.actual) {
      if (a.nodeName !== n.name || !a.attached || a.deleting || leaving.has(a.name) || a.uniqueName === undefined)
        continue;
      names.add(a.uniqueName);
    }
    const want = [...names].sort().map((name) => ({ name, devicePath: '' }));
    const have = new Set(n.volumesAttached.map((v) => v.name));
    if (have.size !== want.length || want.some((v) => !have.has(v.name)))
      statuses.push({ kind: 'nodeStatus', nodeName: n.name, volumesAttached: want });
  }
  return [...statuses, ...deletes, ...creates, ...warnings];
}
