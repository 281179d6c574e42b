/**
 * The objects a pod or a PersistentVolume names (podutil.VisitPodSecretNames / VisitPodConfigmapNames
 * and the PV's secret references): what the Node authorizer lets a node read once the pod is bound to it.
 */
import type { PersistentVolume, Pod } from 'kubernetes-types/core/v1.js';
import { podVolumeClaimName } from './ephemeral.js';

export interface PodReferences {
  readonly secrets: ReadonlySet<string>;
  readonly configMaps: ReadonlySet<string>;
  /** Claims of persistentVolumeClaim and generic ephemeral volumes. */
  readonly claims: ReadonlySet<string>;
}

/** Names (in the pod's namespace) of the Secrets, ConfigMaps and claims `pod` references. */
export function podReferences(pod: Pod): PodReferences {
  const secrets = new Set<string>();
  const configMaps = new Set<string>();
  const claims = new Set<string>();
  const add = (s: Set<string>, n: string | undefined): void => void (n ? s.add(n) : undefined);
  const spec = pod.spec;
  for (const s of spec?.imagePullSecrets ?? []) add(secrets, s.name);
  const containers = [
    ...(spec?.initContainers ?? []),
    ...(spec?.containers ?? []),
    ...(spec?.ephemeralContainers ?? []),
  ];
  for (const c of containers) {
    for (const e of c.envFrom ?? []) {
      add(secrets, e.secretRef?.name);
      add(configMaps, e.configMapRef?.name);
    }
    for (const e of c.env ?? []) {
      add(secrets, e.valueFrom?.secretKeyRef?.name);
      add(configMaps, e.valueFrom?.configMapKeyRef?.name);
    }
  }
  for (const v of spec?.volumes ?? []) {
    add(secrets, v.secret?.secretName);
    add(configMaps, v.configMap?.name);
    for (const p of v.projected?.sources ?? []) {
      add(secrets, p.secret?.name);
      add(configMaps, p.configMap?.name);
    }
    add(secrets, v.csi?.nodePublishSecretRef?.name);
    add(secrets, v.cephfs?.secretRef?.name);
    add(secrets, v.iscsi?.secretRef?.name);
    add(secrets, v.rbd?.secretRef?.name);
    add(secrets, v.flexVolume?.secretRef?.name);
    add(secrets, v.scaleIO?.secretRef?.name);
    add(secrets, v.storageos?.secretRef?.name);
    add(secrets, v.azureFile?.secretName);
    add(claims, podVolumeClaimName(pod, v));
  }
  return { secrets, configMaps, claims };
}

/** `namespace/name` of every Secret a PersistentVolume names (CSI secret refs and the in-tree ones). */
export function pvSecretKeys(pv: PersistentVolume): string[] {
  const out: string[] = [];
  const add = (ref: { name?: string; namespace?: string } | undefined, defaultNs = ''): void => {
    if (ref?.name) out.push(`${ref.namespace ?? defaultNs}/${ref.name}`);
  };
  const s = pv.spec;
  const csi = s?.csi;
  add(csi?.controllerPublishSecretRef);
  add(csi?.controllerExpandSecretRef);
  add(csi?.nodePublishSecretRef);
  add(csi?.nodeStageSecretRef);
  add(csi?.nodeExpandSecretRef);
  add(s?.cephfs?.secretRef);
  add(s?.flexVolume?.secretRef);
  add(s?.iscsi?.secretRef);
  add(s?.rbd?.secretRef);
  add(s?.scaleIO?.secretRef);
  add(s?.storageos?.secretRef);
  if (s?.azureFile?.secretName)
    out.push(`${s.azureFile.secretNamespace ?? s.claimRef?.namespace ?? 'default'}/${s.azureFile.secretName}`);
  return out;
}
