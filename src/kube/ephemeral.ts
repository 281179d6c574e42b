/**
 * Generic ephemeral volumes (pkg/volume/util/ephemeral): the claim of a pod's `ephemeral` volume
 * is `<pod>-<volume>` in the pod's namespace, and it serves the pod only when the pod controls it.
 */

interface Named {
  readonly metadata?: { readonly name?: string; readonly namespace?: string; readonly uid?: string } | undefined;
}
interface Owned {
  readonly metadata?:
    { readonly ownerReferences?: ReadonlyArray<{ readonly uid: string; readonly controller?: boolean }> } | undefined;
}
interface PodVolumeLike {
  readonly name: string;
  readonly persistentVolumeClaim?: { readonly claimName: string };
  readonly ephemeral?: object;
}

/** The claim name of a generic ephemeral volume (ephemeral.VolumeClaimName). */
export function ephemeralClaimName(podName: string, volumeName: string): string {
  return `${podName}-${volumeName}`;
}

/** The claim a pod volume uses: its persistentVolumeClaim, or the ephemeral volume's claim. */
export function podVolumeClaimName(pod: Named, v: PodVolumeLike): string | undefined {
  if (v.persistentVolumeClaim?.claimName) return v.persistentVolumeClaim.claimName;
  if (v.ephemeral) return ephemeralClaimName(pod.metadata?.name ?? '', v.name);
  return undefined;
}

/** metav1.IsControlledBy: the object's controller reference names `ownerUid`. */
export function isControlledBy(obj: Owned, ownerUid: string | undefined): boolean {
  return !!ownerUid && (obj.metadata?.ownerReferences ?? []).some((r) => r.controller === true && r.uid === ownerUid);
}

/** ephemeral.VolumeIsForPod's refusal: the claim exists but the pod does not control it. */
export function claimNotForPodMessage(claim: Named, pod: Named): string {
  const ns = claim.metadata?.namespace ?? '';
  return `PVC ${ns}/${claim.metadata?.name ?? ''} was not created for pod ${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''} (pod is not owner)`;
}
