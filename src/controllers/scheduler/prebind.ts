/**
 * PreBind's wait (kube's checkBindings), pure: after pre-binding volumes and selecting a node for
 * provisioning, is every claim of the pod bound, still on its way, or was the work undone (the
 * provisioner cleared selected-node to ask for rescheduling, a pre-bound PV was taken back)?
 */
import { isVolumeBoundToClaim } from '../persistentvolume/match.js';
import { ANN_SELECTED_NODE, podClaimNames, type ClusterView, type Pod } from './types.js';
import { isClaimFullyBound } from './volumes.js';

export type VolumeBindingState =
  { readonly kind: 'bound' } | { readonly kind: 'waiting' } | { readonly kind: 'undone'; readonly reason: string };

export function volumeBindingState(
  pod: Pod,
  node: string,
  view: ClusterView,
  claimVersions: Readonly<Record<string, number>> = {},
): VolumeBindingState {
  const ns = pod.metadata?.namespace ?? '';
  let waiting = false;
  for (const name of podClaimNames(pod)) {
    const c = view.claim(ns, name);
    if (!c) return { kind: 'undone', reason: `persistentvolumeclaim "${name}" not found` };
    if (isClaimFullyBound(c)) continue;
    waiting = true;
    if (Number(c.metadata?.resourceVersion ?? 0) < (claimVersions[`${ns}/${name}`] ?? 0)) continue; // informer behind our own write
    const selected = c.metadata?.annotations?.[ANN_SELECTED_NODE];
    if (selected === node) continue;
    if (selected !== undefined)
      return { kind: 'undone', reason: `selected node of claim ${name} changed to ${selected}` };
    if ((c.spec?.volumeName ?? '') !== '') continue; // the PV controller is completing a bind
    if (view.volumes().some((v) => isVolumeBoundToClaim(v, c))) continue;
    return { kind: 'undone', reason: `selectedNode annotation reset for PVC "${name}"` };
  }
  return waiting ? { kind: 'waiting' } : { kind: 'bound' };
}
