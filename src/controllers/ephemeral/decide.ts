/**
 * The ephemeral-volume controller's decision (pkg/controller/volume/ephemeral): for each pod
 * volume with `ephemeral.volumeClaimTemplate`, the claim `<pod>-<volume>` is created from the
 * template, controlled by the pod (so the garbage collector deletes it with the pod, and the
 * pod's deletion in the foreground waits for it); a claim of that name the pod does not control
 * is refused, never adopted.
 */
import type { PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import { claimNotForPodMessage, ephemeralClaimName, isControlledBy } from '../../kube/ephemeral.js';

export type EphemeralAction =
  | { readonly kind: 'create'; readonly volume: string; readonly claim: PersistentVolumeClaim }
  | { readonly kind: 'notForPod'; readonly volume: string; readonly message: string };

export type ClaimLookup = (namespace: string, name: string) => PersistentVolumeClaim | undefined;

/** What to do for each ephemeral volume of `pod`; nothing for a pod being deleted. */
export function ephemeralActions(pod: Pod, claim: ClaimLookup): EphemeralAction[] {
  if (pod.metadata?.deletionTimestamp) return [];
  const ns = pod.metadata?.namespace ?? '';
  const podName = pod.metadata?.name ?? '';
  const out: EphemeralAction[] = [];
  for (const v of pod.spec?.volumes ?? []) {
    const template = v.ephemeral?.volumeClaimTemplate;
    if (!template) continue;
    const name = ephemeralClaimName(podName, v.name);
    const existing = claim(ns, name);
    if (existing) {
      if (!isControlledBy(existing, pod.metadata?.uid))
        out.push({ kind: 'notForPod', volume: v.name, message: claimNotForPodMessage(existing, pod) });
      continue;
    }
    out.push({
      kind: 'create',
      volume: v.name,
      claim: {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: {
          name,
          namespace: ns,
          ownerReferences: [
            {
              apiVersion: 'v1',
              kind: 'Pod',
              name: podName,
              uid: pod.metadata?.uid ?? '',
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
          ...(template.metadata?.labels ? { labels: { ...template.metadata.labels } } : {}),
          ...(template.metadata?.annotations ? { annotations: { ...template.metadata.annotations } } : {}),
        },
        spec: structuredClone(template.spec),
      },
    });
  }
  return out;
}

/** Whether the pod has any generic ephemeral volume (the controller ignores the others). */
export function hasEphemeralVolumes(pod: Pod): boolean {
  return (pod.spec?.volumes ?? []).some((v) => v.ephemeral !== undefined);
}
