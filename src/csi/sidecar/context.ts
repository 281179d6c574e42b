import type { PersistentVolume, PersistentVolumeClaim, Node, Secret } from 'kubernetes-types/core/v1.js';
import type { CSINode, StorageClass, VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import type { Informer, RestClient } from '../../client/index.js';
import type { Logger } from '../../util/log.js';
import type { CsiClient } from '../client.js';
import type { ControllerCapabilityName } from '../proto/types.js';
import { NotFoundError, UnavailableError } from '../../util/errors.js';
import { secretData, type SecretRef } from './secrets.js';

/** What every controller of the sidecar shares: the API, the driver, and informers over the kinds it reads. */
export interface SidecarContext {
  readonly client: RestClient;
  readonly csi: CsiClient;
  /** The driver name from GetPluginInfo. */
  readonly driver: string;
  readonly controllerCaps: ReadonlySet<ControllerCapabilityName>;
  /**
   * The driver grows volumes on the node only (a plugin VolumeExpansion capability without the
   * controller's EXPAND_VOLUME): the resizer just records the new size and leaves the rest to the node.
   */
  readonly nodeOnlyExpansion: boolean;
  /** Plugin capability VOLUME_ACCESSIBILITY_CONSTRAINTS: the driver wants topology. */
  readonly topologyAware: boolean;
  readonly informers: {
    readonly claims: Informer<PersistentVolumeClaim>;
    readonly volumes: Informer<PersistentVolume>;
    readonly classes: Informer<StorageClass>;
    readonly csiNodes: Informer<CSINode>;
    readonly nodes: Informer<Node>;
    readonly attachments: Informer<VolumeAttachment>;
  };
  readonly log: Logger;
  /** Timeout for each CSI call (the external-* sidecars' --timeout). */
  readonly csiTimeoutMs: number;
}

/** Reads a Secret named by a reference and turns it into CSI secrets. */
export async function fetchSecrets(
  ctx: SidecarContext,
  ref: SecretRef | undefined,
  signal: AbortSignal,
): Promise<Record<string, string>> {
  if (!ref) return {};
  const s: Secret = await ctx.client
    .resource('Secret')
    .get(ref.name, { namespace: ref.namespace, signal })
    .catch((e: unknown) => {
      // Secrets are not watched: one created later is only found by retrying.
      throw e instanceof NotFoundError ? new UnavailableError(e.message, { cause: e }) : e;
    });
  return secretData(s.data);
}

export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
