import type { Pod } from 'kubernetes-types/core/v1.js';
import { claimNotForPodMessage, isControlledBy, podVolumeClaimName } from '../../../kube/ephemeral.js';
import type { PodVolumeInput } from '../cache/desired-state.js';
import { isRefusal, type PopulatorLookups, type SpecSource } from '../plugins/plugin.js';
import { findPluginBySpec } from '../plugins/registry.js';
import { podUid, type PodRef, type SubPathMount } from '../types.js';

export type { PopulatorLookups } from '../plugins/plugin.js';

/** A pod volume that cannot be mounted yet (or ever): becomes a Warning event, the pod stays Pending. */
export interface VolumeProblem {
  readonly outerSpecName: string;
  readonly reason: 'FailedMount';
  readonly message: string;
}

export interface ResolvedPod {
  readonly volumes: ReadonlyArray<
    PodVolumeInput & { readonly resizeNeeded: boolean; readonly requiresRepublish?: boolean }
  >;
  readonly problems: readonly VolumeProblem[];
}

export function podRefOf(pod: Pod): PodRef {
  return {
    uid: podUid(pod.metadata?.uid ?? ''),
    namespace: pod.metadata?.namespace ?? 'default',
    name: pod.metadata?.name ?? '',
  };
}

/** Pods whose volumes must not be (or stay) mounted: terminated or being deleted. */
export function podIsTerminating(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return pod.metadata?.deletionTimestamp !== undefined || phase === 'Succeeded' || phase === 'Failed';
}

export { csiAccessMode } from './access-mode.js';

const SUPPORTED =
  'persistentVolumeClaim (csi, hostPath and local PVs), csi, emptyDir, hostPath, configMap, secret, downwardAPI and projected';

function sourceName(o: object): string {
  const skip = [
    'name',
    'capacity',
    'accessModes',
    'claimRef',
    'persistentVolumeReclaimPolicy',
    'storageClassName',
    'mountOptions',
    'volumeMode',
    'nodeAffinity',
    'volumeAttributesClassName',
  ];
  return Object.keys(o).find((k) => !skip.includes(k)) ?? 'none';
}

function subPathsFor(pod: Pod, outer: string): SubPathMount[] {
  const out: SubPathMount[] = [];
  for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
    (c.volumeMounts ?? []).forEach((m, index) => {
      if (m.name === outer && m.subPath)
        out.push({ container: c.name, index, subPath: m.subPath, readOnly: m.readOnly === true });
    });
  }
  return out;
}

/**
 * Resolves each pod volume to a desired-state entry, or to a problem that names the volume and the
 * cause (a claim not bound yet is a problem, retried on the next pass, not a crash).
 */
export function resolvePodVolumes(pod: Pod, l: PopulatorLookups): ResolvedPod {
  const ref = podRefOf(pod);
  const ns = ref.namespace;
  const fsGroup = pod.spec?.securityContext?.fsGroup;
  const policy = pod.spec?.securityContext?.fsGroupChangePolicy;
  const fsGroupChangePolicy: 'Always' | 'OnRootMismatch' | undefined =
    policy === 'Always' || policy === 'OnRootMismatch' ? policy : undefined;
  const volumes: Array<PodVolumeInput & { resizeNeeded: boolean; requiresRepublish?: boolean }> = [];
  const problems: VolumeProblem[] = [];
  const problem = (outer: string, message: string): void =>
    void problems.push({ outerSpecName: outer, reason: 'FailedMount', message });
  for (const v of pod.spec?.volumes ?? []) {
    const sa = pod.spec?.serviceAccountName;
    const base = {
      pod: ref,
      outerSpecName: v.name,
      subPaths: subPathsFor(pod, v.name),
      ...(fsGroup !== undefined ? { fsGroup } : {}),
      ...(fsGroupChangePolicy ? { fsGroupChangePolicy } : {}),
      ...(sa !== undefined ? { serviceAccountName: sa } : {}),
    };
    let src: SpecSource;
    // A generic ephemeral volume is its claim <pod>-<volume>, which the pod must control.
    const claimName = podVolumeClaimName(pod, v);
    if (claimName !== undefined) {
      const pvc = l.claim(ns, claimName);
      if (!pvc) {
        problem(v.name, `error processing PVC ${ns}/${claimName}: persistentvolumeclaim "${claimName}" not found`);
        continue;
      }
      if (v.ephemeral && !isControlledBy(pvc, pod.metadata?.uid)) {
        problem(v.name, claimNotForPodMessage(pvc, pod));
        continue;
      }
      if (v.ephemeral && !isControlledBy(pvc, pod.metadata?.uid)) {
        problem(v.name, claimNotForPodMessage(pvc, pod));
        continue;
      }
      if (pvc.metadata?.deletionTimestamp) {
        problem(v.name, `error processing PVC ${ns}/${claimName}: PVC is being deleted`);
        continue;
      }
      const pvName = pvc.spec?.volumeName;
      if (!pvName || pvc.status?.phase !== 'Bound') {
        problem(v.name, `error processing PVC ${ns}/${claimName}: PVC is not bound`);
        continue;
      }
      const pv = l.volume(pvName);
      if (!pv) {
        problem(v.name, `error processing PVC ${ns}/${claimName}: persistentvolume "${pvName}" not found`);
        continue;
      }
      if (pv.spec?.claimRef?.uid && pv.spec.claimRef.uid !== pvc.metadata?.uid) {
        problem(v.name, `error processing PVC ${ns}/${claimName}: PV ${pvName} is bound to another claim`);
        continue;
      }
      src = { kind: 'pv', pv, claim: pvc, volume: v };
    } else src = { kind: 'inline', volume: v };
    const match = findPluginBySpec(src);
    if ('none' in match) {
      const what =
        src.kind === 'pv'
          ? `PersistentVolume ${src.pv.metadata?.name ?? ''} has an unsupported source (${sourceName(src.pv.spec ?? {})})`
          : `volume "${v.name}" has an unsupported source (${sourceName(v)})`;
      problem(
        v.name,
        src.kind === 'pv'
          ? `volume "${v.name}": ${what}; Stowage mounts ${SUPPORTED}`
          : `${what}; Stowage mounts ${SUPPORTED}`,
      );
      continue;
    }
    if ('many' in match) {
      problem(v.name, `volume "${v.name}": multiple volume plugins matched: ${match.many.join(',')}`);
      continue;
    }
    const r = match.plugin.resolve(src, { pod, ref, lookups: l });
    if (isRefusal(r)) {
      problem(v.name, r.problem);
      continue;
    }
    const { resizeNeeded, requiresRepublish, ...rest } = r;
    volumes.push({
      ...base,
      ...rest,
      resizeNeeded: resizeNeeded ?? false,
      ...(requiresRepublish ? { requiresRepublish } : {}),
    });
  }
  return { volumes, problems };
}
