import type { PersistentVolume, PersistentVolumeClaim, Pod, Volume } from 'kubernetes-types/core/v1.js';
import type { CSIDriver } from 'kubernetes-types/storage/v1.js';
import { quantityBytes } from '../../../kube/quantity.js';
import { claimNotForPodMessage, isControlledBy, podVolumeClaimName } from '../../../kube/ephemeral.js';
import type { PodVolumeInput } from '../cache/desired-state.js';
import { sha256Hex } from '../operations/paths.js';
import { csiVolumeName, podUid, volumeName, type CsiAccessMode, type PodRef, type SubPathMount, type VolumeMode } from '../types.js';

/** Cached objects the populator resolves pod volumes against. */
export interface PopulatorLookups {
  claim(namespace: string, name: string): PersistentVolumeClaim | undefined;
  volume(name: string): PersistentVolume | undefined;
  csiDriver(name: string): CSIDriver | undefined;
}

/** A pod volume that cannot be mounted yet (or ever): becomes a Warning event, the pod stays Pending. */
export interface VolumeProblem {
  readonly outerSpecName: string;
  readonly reason: 'FailedMount';
  readonly message: string;
}

export interface ResolvedPod {
  readonly volumes: ReadonlyArray<PodVolumeInput & { readonly resizeNeeded: boolean; readonly requiresRepublish?: boolean }>;
  readonly problems: readonly VolumeProblem[];
}

export function podRefOf(pod: Pod): PodRef {
  return { uid: podUid(pod.metadata?.uid ?? ''), namespace: pod.metadata?.namespace ?? 'default', name: pod.metadata?.name ?? '' };
}

/** Pods whose volumes must not be (or stay) mounted: terminated or being deleted. */
export function podIsTerminating(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return pod.metadata?.deletionTimestamp !== undefined || phase === 'Succeeded' || phase === 'Failed';
}

function bytes(q: string | undefined): number | undefined {
  if (q === undefined) return undefined;
  try {
    return Number(quantityBytes(q));
  } catch {
    return undefined;
  }
}

/** PV access modes → CSI access mode (kubelet's mapping, single-node forms for RWO/RWOP). */
export function csiAccessMode(modes: readonly string[] | undefined): CsiAccessMode {
  const m = modes ?? [];
  if (m.includes('ReadWriteOncePod')) return 'SINGLE_NODE_SINGLE_WRITER';
  if (m.includes('ReadWriteOnce')) return 'SINGLE_NODE_WRITER';
  if (m.includes('ReadWriteMany')) return 'MULTI_NODE_MULTI_WRITER';
  if (m.includes('ReadOnlyMany')) return 'MULTI_NODE_READER_ONLY';
  return 'SINGLE_NODE_WRITER';
}

const SUPPORTED = 'persistentVolumeClaim (a PV with a csi source), csi, emptyDir and hostPath';

function sourceName(v: Volume): string {
  return Object.keys(v).find((k) => k !== 'name') ?? 'none';
}

function subPathsFor(pod: Pod, outer: string): SubPathMount[] {
  const out: SubPathMount[] = [];
  for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
    (c.volumeMounts ?? []).forEach((m, index) => {
      if (m.name === outer && m.subPath) out.push({ container: c.name, index, subPath: m.subPath, readOnly: m.readOnly === true });
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
  const volumes: Array<PodVolumeInput & { resizeNeeded: boolean; requiresRepublish?: boolean }> = [];
  const problems: VolumeProblem[] = [];
  const problem = (outer: string, message: string): void => void problems.push({ outerSpecName: outer, reason: 'FailedMount', message });
  for (const v of pod.spec?.volumes ?? []) {
    const base = { pod: ref, outerSpecName: v.name, subPaths: subPathsFor(pod, v.name), ...(fsGroup !== undefined ? { fsGroup } : {}) };
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
      const csi = pv.spec?.csi;
      if (!csi) {
        const src = Object.keys(pv.spec ?? {}).find((k) => !['capacity', 'accessModes', 'claimRef', 'persistentVolumeReclaimPolicy', 'storageClassName', 'mountOptions', 'volumeMode', 'nodeAffinity', 'volumeAttributesClassName'].includes(k));
        problem(v.name, `volume "${v.name}": PersistentVolume ${pvName} has an unsupported source (${src ?? 'none'}); Stowage mounts ${SUPPORTED}`);
        continue;
      }
      const mode: VolumeMode = pv.spec?.volumeMode === 'Block' ? 'Block' : 'Filesystem';
      const capacity = pv.spec?.capacity?.['storage'];
      const capacityBytes = bytes(capacity);
      const claimBytes = bytes(pvc.status?.capacity?.['storage']);
      volumes.push({
        ...base,
        volume: csiVolumeName(csi.driver, csi.volumeHandle),
        pluginIsAttachable: l.csiDriver(csi.driver)?.spec.attachRequired ?? true,
        spec: {
          plugin: 'kubernetes.io/csi',
          specName: pvName,
          mode,
          readOnly: v.persistentVolumeClaim?.readOnly === true || csi.readOnly === true,
          csi: {
            driver: csi.driver,
            volumeHandle: csi.volumeHandle,
            fsType: csi.fsType ?? '',
            mountOptions: [...(pv.spec?.mountOptions ?? [])],
            volumeAttributes: { ...(csi.volumeAttributes ?? {}) },
            accessMode: csiAccessMode(pv.spec?.accessModes),
          },
          ...(capacity !== undefined ? { capacity } : {}),
          ...(capacityBytes !== undefined ? { capacityBytes } : {}),
          claim: { namespace: ns, name: claimName },
        },
        resizeNeeded: capacityBytes !== undefined && claimBytes !== undefined && capacityBytes > claimBytes,
        requiresRepublish: l.csiDriver(csi.driver)?.spec.requiresRepublish === true,
      });
    } else if (v.csi) {
      // Inline ephemeral: the kubelet names the volume per pod (csi-<sha256(podUID + name)>).
      const handle = `csi-${sha256Hex(ref.uid + v.name)}`;
      volumes.push({
        ...base,
        volume: csiVolumeName(v.csi.driver, handle),
        pluginIsAttachable: false,
        spec: {
          plugin: 'kubernetes.io/csi',
          specName: v.name,
          mode: 'Filesystem',
          readOnly: v.csi.readOnly === true,
          ephemeral: true,
          csi: { driver: v.csi.driver, volumeHandle: handle, fsType: v.csi.fsType ?? '', mountOptions: [], volumeAttributes: { ...(v.csi.volumeAttributes ?? {}) }, accessMode: 'SINGLE_NODE_WRITER' },
        },
        resizeNeeded: false,
      });
    } else if (v.emptyDir) {
      volumes.push({
        ...base,
        volume: volumeName(`kubernetes.io/empty-dir/${ref.uid}-${v.name}`),
        pluginIsAttachable: false,
        spec: { plugin: 'kubernetes.io/empty-dir', specName: v.name, mode: 'Filesystem', readOnly: false },
        resizeNeeded: false,
      });
    } else if (v.hostPath) {
      volumes.push({
        ...base,
        volume: volumeName(`kubernetes.io/host-path/${ref.uid}-${v.name}`),
        pluginIsAttachable: false,
        spec: { plugin: 'kubernetes.io/host-path', specName: v.name, mode: 'Filesystem', readOnly: false, hostPath: v.hostPath.path, ...(v.hostPath.type ? { hostPathType: v.hostPath.type } : {}) },
        resizeNeeded: false,
      });
    } else {
      problem(v.name, `volume "${v.name}" has an unsupported source (${sourceName(v)}); Stowage mounts ${SUPPORTED}`);
    }
  }
  return { volumes, problems };
}
