/**
 * Storage capacity tracking (external-provisioner --enable-capacity): one CSIStorageCapacity per
 * (storage class of this driver, topology segment where the driver runs), holding what GetCapacity
 * answers for that class's parameters and segment. The scheduler reads them for drivers whose
 * CSIDriver says `storageCapacity: true`. Pure part: which objects should exist, and how an
 * existing object differs from what the driver said.
 */
import type { CSIStorageCapacity, StorageClass } from 'kubernetes-types/storage/v1.js';
import type { Segments } from './topology.js';

export const LABEL_DRIVER = 'csi.storage.k8s.io/drivername';
export const LABEL_MANAGED_BY = 'csi.storage.k8s.io/managed-by';
export const MANAGED_BY = 'external-provisioner';

export interface CapacityKey {
  readonly className: string;
  readonly segment: Segments;
}

export function capacityKeyString(k: CapacityKey): string {
  return `${k.className}|${JSON.stringify(
    Object.keys(k.segment)
      .sort()
      .map((x) => [x, k.segment[x]]),
  )}`;
}

/** The pairs to track: this driver's classes (WaitForFirstConsumer only, unless `immediateToo`) × segments. */
export function desiredCapacities(
  classes: readonly StorageClass[],
  segments: readonly Segments[],
  driver: string,
  immediateToo: boolean,
): CapacityKey[] {
  const out: CapacityKey[] = [];
  for (const cls of classes) {
    if (cls.provisioner !== driver || !cls.metadata?.name) continue;
    if (!immediateToo && cls.volumeBindingMode !== 'WaitForFirstConsumer') continue;
    for (const segment of segments) out.push({ className: cls.metadata.name, segment });
  }
  return out;
}

/** The key an existing object stands for (its class and its node topology's matchLabels). */
export function keyOfObject(o: CSIStorageCapacity): CapacityKey {
  return { className: o.storageClassName, segment: { ...(o.nodeTopology?.matchLabels ?? {}) } };
}

export function isOurs(o: CSIStorageCapacity, driver: string): boolean {
  const l = o.metadata?.labels ?? {};
  return l[LABEL_DRIVER] === driver && l[LABEL_MANAGED_BY] === MANAGED_BY;
}

/** A new object for a key (the API server names it from generateName). */
export function newCapacityObject(
  k: CapacityKey,
  driver: string,
  namespace: string,
  capacity: string,
  maximumVolumeSize?: string,
): CSIStorageCapacity {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'CSIStorageCapacity',
    metadata: { generateName: 'csisc-', namespace, labels: { [LABEL_DRIVER]: driver, [LABEL_MANAGED_BY]: MANAGED_BY } },
    storageClassName: k.className,
    nodeTopology: { matchLabels: { ...k.segment } },
    capacity,
    ...(maximumVolumeSize !== undefined ? { maximumVolumeSize } : {}),
  };
}
