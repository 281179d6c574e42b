/**
 * The default StorageClass `stowage up` ships for its built-in driver, as kind and minikube ship
 * `standard`: class-less claims from the Kubernetes documentation then bind. It follows kind's
 * class (volumeBindingMode WaitForFirstConsumer, reclaimPolicy Delete) rather than minikube's
 * (Immediate): a hostpath volume lives on one host, so it must be provisioned where its first pod
 * is scheduled, which also holds when node agents run on several hosts. Unlike kind's
 * local-path provisioner the built-in driver grows volumes, so expansion is allowed.
 */
import type { StorageClass } from 'kubernetes-types/storage/v1.js';
import type { RestClient } from '../client/index.js';
import { isDefaultStorageClass } from '../kube/class.js';
import { ANN_DEFAULT_CLASS } from '../kube/names.js';
import { AlreadyExistsError } from '../util/errors.js';

export const DEFAULT_CLASS_NAME = 'standard';

export function defaultClassFor(provisioner: string): StorageClass {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: DEFAULT_CLASS_NAME, annotations: { [ANN_DEFAULT_CLASS]: 'true' } },
    provisioner,
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'WaitForFirstConsumer',
    allowVolumeExpansion: true,
  };
}

/**
 * Creates the default class unless a default class exists already or a class named `standard`
 * does (the user's own objects are never changed). Returns whether it created one.
 */
export async function ensureDefaultStorageClass(client: RestClient, provisioner: string): Promise<boolean> {
  const api = client.resource('StorageClass');
  const classes = (await api.list()).items;
  if (classes.some(isDefaultStorageClass) || classes.some((c) => c.metadata?.name === DEFAULT_CLASS_NAME)) return false;
  try {
    await api.create(defaultClassFor(provisioner));
    return true;
  } catch (e) {
    if (e instanceof AlreadyExistsError) return false;
    throw e;
  }
}
