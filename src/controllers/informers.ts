import type { Node, PersistentVolume, PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import type { StorageClass } from 'kubernetes-types/storage/v1.js';
import { informerFor, runInformers, type Informer, type RestClient } from '../client/index.js';
import { newLogger } from '../util/log.js';

const log = newLogger('informers');

/** Index of pods by the claims they use (`ns/claim`), generic ephemeral claims included. */
export const POD_CLAIM_INDEX = 'claims';

export function podClaimKeys(p: Pod): string[] {
  const ns = p.metadata?.namespace ?? '';
  return (p.spec?.volumes ?? []).flatMap((v) => {
    if (v.persistentVolumeClaim?.claimName) return [`${ns}/${v.persistentVolumeClaim.claimName}`];
    if (v.ephemeral) return [`${ns}/${p.metadata?.name ?? ''}-${v.name}`];
    return [];
  });
}

/**
 * The informers the controller manager's controllers share, so each kind is listed and watched
 * once per process (client-go's SharedInformerFactory).
 */
export interface ControllerInformers {
  readonly pvs: Informer<PersistentVolume>;
  readonly pvcs: Informer<PersistentVolumeClaim>;
  readonly classes: Informer<StorageClass>;
  readonly nodes: Informer<Node>;
  readonly pods: Informer<Pod>;
}

export function newControllerInformers(client: RestClient): ControllerInformers {
  const pods = informerFor(client, 'Pod');
  pods.addIndexer(POD_CLAIM_INDEX, podClaimKeys);
  return {
    pvs: informerFor(client, 'PersistentVolume'),
    pvcs: informerFor(client, 'PersistentVolumeClaim'),
    classes: informerFor(client, 'StorageClass'),
    nodes: informerFor(client, 'Node'),
    pods,
  };
}

/** Runs every informer until `signal` aborts; the promises settle when they stop. */
export function runControllerInformers(inf: ControllerInformers, signal: AbortSignal): Promise<void>[] {
  return runInformers(signal, Object.values(inf) as Informer<unknown>[], log);
}
