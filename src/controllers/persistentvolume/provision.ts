/**
 * Provisioning hand-off (provisionClaim in Kubernetes). Stowage has no in-tree provisioners: every
 * class provisioner outside `kubernetes.io/` is external — the claim gets both storage-provisioner
 * annotations and an ExternalProvisioning event, and the CSI provisioner sidecar takes over.
 * `kubernetes.io/` names behave as in kube-controller-manager 1.30 with only the hostPath plugin
 * (provisioning disabled, the KCM default) registered.
 */
import { claimEvent, clone, hasAnnotation } from './bind.js';
import type { SyncContext } from './context.js';
import { claimClass } from '../../kube/class.js';
import {
  ANN_BETA_STORAGE_PROVISIONER,
  ANN_MIGRATED_TO,
  ANN_STORAGE_PROVISIONER,
  REASONS,
  claimKey,
  type PersistentVolumeClaim,
  type StorageClass,
} from './types.js';

const HOST_PATH_PLUGIN = 'kubernetes.io/host-path';

/** Where provisioning of a class goes: outside the controller, an in-tree plugin, or nowhere. */
export type ProvisionerRoute =
  | { kind: 'external'; provisioner: string; cls: StorageClass }
  | { kind: 'inTree'; plugin: string; cls: StorageClass }
  | { kind: 'error'; message: string };

/** findProvisionablePlugin, pure. */
export function routeProvisioner(claim: PersistentVolumeClaim, cls: StorageClass | undefined): ProvisionerRoute {
  const name = claimClass(claim);
  if (!cls) return { kind: 'error', message: `storageclass.storage.k8s.io "${name}" not found` };
  const p = cls.provisioner;
  if (p === HOST_PATH_PLUGIN) return { kind: 'inTree', plugin: p, cls };
  if (p.startsWith('kubernetes.io/')) return { kind: 'error', message: `no volume plugin matched name: ${p}` };
  return { kind: 'external', provisioner: p, cls };
}

export function externalProvisioningMessage(provisioner: string): string {
  return (
    `Waiting for a volume to be created either by the external provisioner '${provisioner}' ` +
    'or manually by the system administrator. If volume creation is delayed, please verify that ' +
    'the provisioner is running and correctly registered.'
  );
}

/** setClaimProvisioner: both annotations (beta kept for old provisioners); no write when set. */
async function setClaimProvisioner(
  c: SyncContext,
  claim: PersistentVolumeClaim,
  provisioner: string,
): Promise<PersistentVolumeClaim> {
  if (claim.metadata?.annotations?.[ANN_STORAGE_PROVISIONER] === provisioner) return claim;
  const next = clone(claim);
  next.metadata = next.metadata ?? {};
  const anns = { ...(next.metadata.annotations ?? {}) };
  anns[ANN_BETA_STORAGE_PROVISIONER] = provisioner;
  anns[ANN_STORAGE_PROVISIONER] = provisioner;
  // No plugin is CSI-migrated here, so a stale migrated-to annotation is dropped.
  delete anns[ANN_MIGRATED_TO];
  next.metadata.annotations = anns;
  const stored = await c.fx.updateClaim(next);
  c.cache.storeClaim(stored);
  return stored;
}

/** provisionClaim: schedules the hand-off under `provision-<ns/name>[<uid>]`. */
export function provisionClaim(c: SyncContext, claim: PersistentVolumeClaim): void {
  if (!c.options.enableDynamicProvisioning) return;
  const route = routeProvisioner(claim, c.listers.storageClass(claimClass(claim)));
  if (route.kind === 'error') {
    claimEvent(c, claim, 'Warning', REASONS.ProvisioningFailed, route.message);
    return;
  }
  const opName = `provision-${claimKey(claim)}[${claim.metadata?.uid ?? ''}]`;
  c.fx.scheduleOperation(opName, async () => {
    if (route.kind === 'external') await provisionExternal(c, claim, route.provisioner);
    else await provisionInTree(c, claim, route.plugin, route.cls);
  });
}

async function provisionExternal(c: SyncContext, claim: PersistentVolumeClaim, provisioner: string): Promise<void> {
  let stored: PersistentVolumeClaim;
  try {
    stored = await setClaimProvisioner(c, claim, provisioner);
  } catch (e) {
    claimEvent(
      c,
      claim,
      'Warning',
      REASONS.ProvisioningFailed,
      `Error saving claim: ${e instanceof Error ? e.message : String(e)}`,
    );
    throw e;
  }
  claimEvent(c, stored, 'Normal', REASONS.ExternalProvisioning, externalProvisioningMessage(provisioner));
}

/** The hostPath plugin as KCM registers it by default: provisioning disabled. */
async function provisionInTree(
  c: SyncContext,
  claim: PersistentVolumeClaim,
  plugin: string,
  cls: StorageClass,
): Promise<void> {
  if (claim.spec?.dataSource) {
    const msg = `plugin "${plugin}" is not a CSI plugin. Only CSI plugin can provision a claim with a datasource`;
    claimEvent(c, claim, 'Warning', REASONS.ProvisioningFailed, msg);
    throw new Error(msg);
  }
  const stored = await setClaimProvisioner(c, claim, cls.provisioner);
  if ((cls.mountOptions ?? []).length > 0) {
    claimEvent(
      c,
      stored,
      'Warning',
      REASONS.ProvisioningFailed,
      `Mount options are not supported by the provisioner but StorageClass "${cls.metadata?.name ?? ''}" has mount options [${(cls.mountOptions ?? []).join(' ')}]`,
    );
    throw new Error(`provisioner "${plugin}" doesn't support mount options`);
  }
  const err = `Provisioning in volume plugin "${plugin}" is disabled`;
  claimEvent(c, stored, 'Warning', REASONS.ProvisioningFailed, `Failed to create provisioner: ${err}`);
  throw new Error(err);
}

export function hasProvisionerAnnotation(claim: PersistentVolumeClaim): boolean {
  return hasAnnotation(claim, ANN_STORAGE_PROVISIONER) || hasAnnotation(claim, ANN_BETA_STORAGE_PROVISIONER);
}
