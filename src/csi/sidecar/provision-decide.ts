/**
 * Pure decisions of the provisioner: which claims are ours, what CreateVolume to send, which PV to
 * save for the answer. No I/O; the controller (provisioner.ts) gathers inputs and executes.
 */
import type { PersistentVolume, PersistentVolumeClaim, SecretReference } from 'kubernetes-types/core/v1.js';
import type { StorageClass } from 'kubernetes-types/storage/v1.js';
import type { CreateVolumeRequest, TopologyRequirement, Volume__Output, VolumeContentSource } from '../proto/types.js';
import { referenceTo } from '../../client/events.js';
import { InvalidError } from '../../util/errors.js';
import { provisionCapabilities } from './capabilities.js';
import {
  ANN_BETA_STORAGE_PROVISIONER,
  ANN_DELETION_SECRET_NAME,
  ANN_DELETION_SECRET_NAMESPACE,
  ANN_PROVISIONED_BY,
  ANN_SELECTED_NODE,
  ANN_STORAGE_PROVISIONER,
  ATTR_PROVISIONER_IDENTITY,
  PROVISIONER_FINALIZER,
  pvNameForClaim,
} from './names.js';
import { claimClass } from '../../kube/class.js';
import { bytesOf, bytesQuantity } from '../../kube/quantity.js';
import {
  FSTYPE_PARAM,
  driverParameters,
  resolveSecretRef,
  type SecretKind,
  type SecretRef,
  type TemplateContext,
} from './secrets.js';
import { nodeAffinityFrom } from './topology.js';

export type ClaimDecision =
  | { kind: 'skip'; why: string }
  | { kind: 'waitForClass'; className: string }
  | { kind: 'provision'; cls: StorageClass; pvName: string; selectedNode?: string };

/** Does the claim belong to this driver and still need a volume? (shouldProvision) */
export function decideClaim(
  claim: PersistentVolumeClaim,
  driver: string,
  cls: StorageClass | undefined,
  pvExists: (name: string) => boolean,
): ClaimDecision {
  const anns = claim.metadata?.annotations ?? {};
  const handedTo = anns[ANN_STORAGE_PROVISIONER] ?? anns[ANN_BETA_STORAGE_PROVISIONER];
  if (handedTo !== driver) return { kind: 'skip', why: 'not handed to this driver' };
  if (claim.spec?.volumeName) return { kind: 'skip', why: 'already bound to a volume' };
  if (claim.metadata?.deletionTimestamp) return { kind: 'skip', why: 'being deleted' };
  const uid = claim.metadata?.uid;
  if (!uid) return { kind: 'skip', why: 'no uid' };
  const pvName = pvNameForClaim(uid);
  // The deterministic name makes this the crash-recovery check: a saved PV means we are done.
  if (pvExists(pvName)) return { kind: 'skip', why: `volume ${pvName} already exists` };
  const className = claimClass(claim);
  if (!cls) return { kind: 'waitForClass', className };
  if (cls.provisioner !== driver) return { kind: 'skip', why: `class ${className} belongs to ${cls.provisioner}` };
  const selectedNode = anns[ANN_SELECTED_NODE];
  if (cls.volumeBindingMode === 'WaitForFirstConsumer' && !selectedNode)
    return { kind: 'skip', why: 'waiting for a selected node' };
  return { kind: 'provision', cls, pvName, ...(selectedNode ? { selectedNode } : {}) };
}

/** Secret references the PV carries (all kinds except the provisioner's). */
export interface PvSecretRefs {
  controllerPublish?: SecretRef;
  nodeStage?: SecretRef;
  nodePublish?: SecretRef;
  controllerExpand?: SecretRef;
  nodeExpand?: SecretRef;
}

export interface ProvisionPlan {
  /** CreateVolume without secrets and topology (the controller adds those after fetching them). */
  readonly request: CreateVolumeRequest;
  readonly requestBytes: bigint;
  readonly fsType: string;
  readonly provisionerSecret?: SecretRef;
  readonly refs: PvSecretRefs;
}

export interface PlanInput {
  readonly claim: PersistentVolumeClaim;
  readonly cls: StorageClass;
  readonly pvName: string;
  readonly singleNodeMultiWriter: boolean;
  readonly contentSource?: VolumeContentSource;
  readonly topology?: TopologyRequirement;
  /** `--extra-create-metadata`: tell the driver the claim's and the PV's names. */
  readonly extraCreateMetadata?: boolean;
}

export const PARAM_PVC_NAME = 'csi.storage.k8s.io/pvc/name';
export const PARAM_PVC_NAMESPACE = 'csi.storage.k8s.io/pvc/namespace';
export const PARAM_PV_NAME = 'csi.storage.k8s.io/pv/name';

/** CreateVolume for a claim; InvalidError for what the user must fix in the claim or class. */
export function planProvision(i: PlanInput): ProvisionPlan {
  const { claim, cls } = i;
  const params = cls.parameters ?? {};
  const requestBytes = bytesOf(claim.spec?.resources?.requests?.storage);
  if (requestBytes === undefined) throw new InvalidError('claim has no valid spec.resources.requests.storage');
  const limitBytes = bytesOf(claim.spec?.resources?.limits?.storage);
  const block = claim.spec?.volumeMode === 'Block';
  // A block claim gets no fsType, whatever the class says (as upstream).
  const fsType = block ? '' : (params[FSTYPE_PARAM] ?? '');
  const ctx: TemplateContext = {
    pvName: i.pvName,
    pvcName: claim.metadata?.name,
    pvcNamespace: claim.metadata?.namespace,
    pvcAnnotations: claim.metadata?.annotations,
  };
  const ref = (k: SecretKind): SecretRef | undefined => resolveSecretRef(k, params, ctx);
  const refs: PvSecretRefs = {};
  for (const k of ['controllerPublish', 'nodeStage', 'nodePublish', 'controllerExpand', 'nodeExpand'] as const) {
    const r = ref(k);
    if (r) refs[k] = r;
  }
  const provisionerSecret = ref('provisioner');
  const request: CreateVolumeRequest = {
    name: i.pvName,
    capacityRange: {
      requiredBytes: requestBytes.toString(),
      ...(limitBytes !== undefined ? { limitBytes: limitBytes.toString() } : {}),
    },
    volumeCapabilities: provisionCapabilities({
      accessModes: claim.spec?.accessModes ?? [],
      volumeMode: claim.spec?.volumeMode,
      fsType,
      mountOptions: cls.mountOptions,
      singleNodeMultiWriter: i.singleNodeMultiWriter,
    }),
    parameters: {
      ...driverParameters(params),
      ...(i.extraCreateMetadata
        ? {
            [PARAM_PVC_NAME]: claim.metadata?.name ?? '',
            [PARAM_PVC_NAMESPACE]: claim.metadata?.namespace ?? '',
            [PARAM_PV_NAME]: i.pvName,
          }
        : {}),
    },
    ...(i.contentSource ? { volumeContentSource: i.contentSource } : {}),
    ...(i.topology ? { accessibilityRequirements: i.topology } : {}),
  };
  return { request, requestBytes, fsType, refs, ...(provisionerSecret ? { provisionerSecret } : {}) };
}

/**
 * A clone source: the claim named by dataSource (or dataSourceRef), which must be in the same
 * namespace, bound, of the same class and volume mode, no larger than the new claim, and on this
 * driver. Undefined when the claim has no data source.
 */
export function cloneSource(
  claim: PersistentVolumeClaim,
  lookupClaim: (ns: string, name: string) => PersistentVolumeClaim | undefined,
  lookupPv: (name: string) => PersistentVolume | undefined,
  driver: string,
): VolumeContentSource | undefined {
  const ds = claim.spec?.dataSourceRef ?? claim.spec?.dataSource;
  if (!ds) return undefined;
  if ((ds.apiGroup ?? '') !== '' || ds.kind !== 'PersistentVolumeClaim') {
    throw new InvalidError(
      `data source ${ds.apiGroup ? ds.apiGroup + '/' : ''}${ds.kind} is not supported by this provisioner (only PersistentVolumeClaim)`,
    );
  }
  const ns = claim.metadata?.namespace ?? '';
  const refNs = 'namespace' in ds && typeof ds.namespace === 'string' ? ds.namespace : ns;
  if (refNs !== ns) throw new InvalidError('the source claim must be in the same namespace as the claim');
  const src = lookupClaim(ns, ds.name);
  if (!src) throw new InvalidError(`error getting PVC ${ns}/${ds.name} (specified as data source): not found`);
  if (src.metadata?.deletionTimestamp) throw new InvalidError(`the source PVC ${ds.name} is being deleted`);
  if (src.status?.phase !== 'Bound' || !src.spec?.volumeName)
    throw new InvalidError(`the PVC ${ds.name} is not yet bound to a PV, cannot clone it`);
  if (claimClass(src) !== claimClass(claim)) {
    throw new InvalidError('the source PVC and destination PVCs must be in the same storage class for cloning');
  }
  if ((src.spec.volumeMode ?? 'Filesystem') !== (claim.spec?.volumeMode ?? 'Filesystem')) {
    throw new InvalidError(`the source PVC and destination PVCs must have the same volume mode for cloning`);
  }
  const srcBytes = bytesOf(src.spec.resources?.requests?.storage) ?? 0n;
  const dstBytes = bytesOf(claim.spec?.resources?.requests?.storage) ?? 0n;
  if (dstBytes < srcBytes)
    throw new InvalidError('new PVC request must be greater than or equal in size to the specified PVC data source');
  const pv = lookupPv(src.spec.volumeName);
  if (!pv?.spec?.csi) throw new InvalidError(`the source PVC ${ds.name} is not bound to a CSI volume`);
  if (pv.spec.csi.driver !== driver)
    throw new InvalidError(`the source PVC ${ds.name} is on driver ${pv.spec.csi.driver}, not ${driver}`);
  return { volume: { volumeId: pv.spec.csi.volumeHandle } };
}

const toRef = (r: SecretRef | undefined): SecretReference | undefined =>
  r ? { name: r.name, namespace: r.namespace } : undefined;

/** The PV for a created volume. Its capacity is what the driver answered (or the request when it said 0). */
export function buildPv(o: {
  claim: PersistentVolumeClaim;
  cls: StorageClass;
  driver: string;
  plan: ProvisionPlan;
  pvName: string;
  volume: Volume__Output;
  /** Written to volumeAttributes under storage.kubernetes.io/csiProvisionerIdentity. */
  identity?: string;
}): PersistentVolume {
  const { claim, cls, plan, volume } = o;
  const capBytes = BigInt(volume.capacityBytes || 0) || plan.requestBytes;
  if (capBytes < plan.requestBytes) {
    throw new InvalidError(`created volume capacity ${capBytes} less than requested capacity ${plan.requestBytes}`);
  }
  const anns: Record<string, string> = { [ANN_PROVISIONED_BY]: o.driver };
  if (plan.provisionerSecret) {
    anns[ANN_DELETION_SECRET_NAME] = plan.provisionerSecret.name;
    anns[ANN_DELETION_SECRET_NAMESPACE] = plan.provisionerSecret.namespace;
  }
  const affinity = nodeAffinityFrom(volume.accessibleTopology);
  const r = plan.refs;
  const csi: NonNullable<NonNullable<PersistentVolume['spec']>['csi']> = {
    driver: o.driver,
    volumeHandle: volume.volumeId,
    volumeAttributes: { ...volume.volumeContext, ...(o.identity ? { [ATTR_PROVISIONER_IDENTITY]: o.identity } : {}) },
    ...(plan.fsType ? { fsType: plan.fsType } : {}),
    ...(r.controllerPublish ? { controllerPublishSecretRef: toRef(r.controllerPublish) } : {}),
    ...(r.nodeStage ? { nodeStageSecretRef: toRef(r.nodeStage) } : {}),
    ...(r.nodePublish ? { nodePublishSecretRef: toRef(r.nodePublish) } : {}),
    ...(r.controllerExpand ? { controllerExpandSecretRef: toRef(r.controllerExpand) } : {}),
    ...(r.nodeExpand ? { nodeExpandSecretRef: toRef(r.nodeExpand) } : {}),
  };
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: o.pvName, annotations: anns, finalizers: [PROVISIONER_FINALIZER] },
    spec: {
      accessModes: [...(claim.spec?.accessModes ?? [])],
      capacity: { storage: bytesQuantity(capBytes) },
      claimRef: referenceTo(claim, 'PersistentVolumeClaim'),
      persistentVolumeReclaimPolicy: cls.reclaimPolicy ?? 'Delete',
      storageClassName: cls.metadata?.name ?? '',
      volumeMode: claim.spec?.volumeMode ?? 'Filesystem',
      ...(cls.mountOptions && cls.mountOptions.length > 0 ? { mountOptions: [...cls.mountOptions] } : {}),
      ...(affinity ? { nodeAffinity: affinity } : {}),
      csi,
    },
  };
}

/** The claim named as a clone source by `claim` (same namespace), if any. */
export function cloneSourceName(claim: PersistentVolumeClaim): string | undefined {
  const ds = claim.spec?.dataSourceRef ?? claim.spec?.dataSource;
  if (!ds || (ds.apiGroup ?? '') !== '' || ds.kind !== 'PersistentVolumeClaim') return undefined;
  return ds.name;
}

/**
 * Whether a clone source may lose its cloning-protection finalizer: no claim of this driver that
 * clones it is still waiting for its volume (unbound and not being deleted).
 */
export function cloneSourceInUse(
  source: PersistentVolumeClaim,
  sameNamespace: readonly PersistentVolumeClaim[],
  driver: string,
): boolean {
  const name = source.metadata?.name;
  return sameNamespace.some((c) => {
    if (c.metadata?.uid === source.metadata?.uid || cloneSourceName(c) !== name) return false;
    const anns = c.metadata?.annotations ?? {};
    const handedTo = anns[ANN_STORAGE_PROVISIONER] ?? anns[ANN_BETA_STORAGE_PROVISIONER];
    return handedTo === driver && !c.spec?.volumeName && !c.metadata?.deletionTimestamp;
  });
}
