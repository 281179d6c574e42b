/**
 * A StatefulSet pod's stable identity and storage (stateful_set_utils.go): the pod `<set>-<ordinal>`
 * with its hostname, subdomain and identity labels; one claim `<template>-<set>-<ordinal>` per
 * volumeClaimTemplates entry; and the owner references the claim retention policy asks for. Pure.
 */
import type { StatefulSet } from 'kubernetes-types/apps/v1.js';
import type { OwnerReference } from 'kubernetes-types/meta/v1.js';
import type { PersistentVolumeClaim, Pod, PodTemplateSpec, Volume } from 'kubernetes-types/core/v1.js';
import {
  CONTROLLER_REVISION_HASH_LABEL,
  newControllerRef,
  POD_INDEX_LABEL,
  STATEFULSET_POD_NAME_LABEL,
} from '../../kube/workloads.js';

const ORDINAL_RE = /^(.*)-([0-9]+)$/;

/** The parent name and ordinal of a pod name (`web-2` → web, 2), or undefined when it has none. */
export function parseOrdinal(podName: string): { parent: string; ordinal: number } | undefined {
  const m = ORDINAL_RE.exec(podName);
  if (!m) return undefined;
  const ordinal = Number(m[2]);
  return Number.isSafeInteger(ordinal) ? { parent: m[1]!, ordinal } : undefined;
}

/** The pod's ordinal in `set`, or -1 for a pod not named after it. */
export function podOrdinal(set: StatefulSet, pod: Pod): number {
  const p = parseOrdinal(pod.metadata?.name ?? '');
  return p && p.parent === set.metadata?.name ? p.ordinal : -1;
}

export function startOrdinal(set: StatefulSet): number {
  return set.spec?.ordinals?.start ?? 0;
}

/** The ordinals the set wants: [start, start + replicas). */
export function inOrdinalRange(set: StatefulSet, ordinal: number): boolean {
  const start = startOrdinal(set);
  return ordinal >= start && ordinal < start + (set.spec?.replicas ?? 1);
}

export function podName(set: StatefulSet, ordinal: number): string {
  return `${set.metadata?.name ?? ''}-${ordinal}`;
}

export function claimName(template: string, set: StatefulSet, ordinal: number): string {
  return `${template}-${podName(set, ordinal)}`;
}

/** The revision a pod was made from (its controller-revision-hash label). */
export function podRevision(pod: Pod): string {
  return pod.metadata?.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? '';
}

/**
 * The claims of the pod at `ordinal` (getPersistentVolumeClaims): each template's claim, labelled
 * with the template's labels and the set's selector labels.
 */
export function podClaims(set: StatefulSet, ordinal: number): PersistentVolumeClaim[] {
  const matchLabels = set.spec?.selector?.matchLabels ?? {};
  return (set.spec?.volumeClaimTemplates ?? []).map((t) => {
    const name = claimName(t.metadata?.name ?? '', set, ordinal);
    return {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name,
        namespace: set.metadata?.namespace,
        labels: { ...(t.metadata?.labels ?? {}), ...matchLabels },
        ...(t.metadata?.annotations ? { annotations: { ...t.metadata.annotations } } : {}),
      },
      spec: structuredClone(t.spec ?? {}),
    };
  });
}

/**
 * newVersionedStatefulSetPod: the pod at `ordinal` from `template` (the current or the update
 * revision's), with its identity, its claims as volumes and the revision label.
 */
export function newPod(set: StatefulSet, template: PodTemplateSpec, revision: string, ordinal: number): Pod {
  const name = podName(set, ordinal);
  const claimVolumes: Volume[] = (set.spec?.volumeClaimTemplates ?? []).map((t) => ({
    name: t.metadata?.name ?? '',
    persistentVolumeClaim: { claimName: claimName(t.metadata?.name ?? '', set, ordinal) },
  }));
  const claimVolumeNames = new Set(claimVolumes.map((v) => v.name));
  const spec = structuredClone(template.spec ?? { containers: [] });
  // A claim template replaces a template volume of the same name (updateStorage).
  spec.volumes = [...(spec.volumes ?? []).filter((v) => !claimVolumeNames.has(v.name)), ...claimVolumes];
  if (spec.volumes.length === 0) delete spec.volumes;
  spec.hostname = name;
  if (set.spec?.serviceName) spec.subdomain = set.spec.serviceName;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: set.metadata?.namespace,
      labels: {
        ...(template.metadata?.labels ?? {}),
        [STATEFULSET_POD_NAME_LABEL]: name,
        [POD_INDEX_LABEL]: String(ordinal),
        [CONTROLLER_REVISION_HASH_LABEL]: revision,
      },
      ...(template.metadata?.annotations ? { annotations: { ...template.metadata.annotations } } : {}),
      ownerReferences: [newControllerRef(set, 'apps/v1', 'StatefulSet')],
    },
    spec,
  };
}

type Owner = {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata?: { readonly name?: string; readonly uid?: string };
};

function refTo(o: Owner): OwnerReference {
  return { apiVersion: o.apiVersion, kind: o.kind, name: o.metadata?.name ?? '', uid: o.metadata?.uid ?? '' };
}

/**
 * The owner references a claim should carry under the set's persistentVolumeClaimRetentionPolicy
 * (updateClaimOwnerRefForSetAndPod, v1.30): whenDeleted Delete → owned by the set while its pod's
 * ordinal is wanted; whenScaled Delete → owned by its pod once the ordinal is scaled away (the
 * garbage collector then deletes the claim with the pod). Other owners stay as they are.
 */
export function claimOwnerReferences(
  set: StatefulSet,
  claim: PersistentVolumeClaim,
  pod: Pod | undefined,
  scaledDown: boolean,
): OwnerReference[] {
  const policy = set.spec?.persistentVolumeClaimRetentionPolicy ?? {};
  const deleteWithSet = policy.whenDeleted === 'Delete';
  const deleteOnScale = policy.whenScaled === 'Delete';
  const setUid = set.metadata?.uid;
  const podUid = pod?.metadata?.uid;
  let refs = [...(claim.metadata?.ownerReferences ?? [])];
  const add = (o: Owner): void => {
    if (o.metadata?.uid && !refs.some((r) => r.uid === o.metadata?.uid)) refs.push(refTo(o));
  };
  const remove = (uid: string | undefined): void => {
    if (uid) refs = refs.filter((r) => r.uid !== uid);
  };
  const setOwner: Owner = { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: set.metadata };
  const podOwner: Owner | undefined = pod ? { apiVersion: 'v1', kind: 'Pod', metadata: pod.metadata } : undefined;
  if (deleteWithSet && !(deleteOnScale && scaledDown)) add(setOwner);
  else remove(setUid);
  if (deleteOnScale && scaledDown) {
    if (podOwner) add(podOwner);
  } else remove(podUid);
  return refs;
}
