/**
 * The capacity tracker: keeps this driver's CSIStorageCapacity objects equal to GetCapacity's
 * answers, re-polling every `pollMs` and whenever classes or the driver's topology change.
 */
import type { CSIStorageCapacity } from 'kubernetes-types/storage/v1.js';

import { errorMessage, type SidecarContext } from './context.js';
import {
  capacityKeyString,
  desiredCapacities,
  isOurs,
  keyOfObject,
  newCapacityObject,
  type CapacityKey,
} from './capacity-decide.js';
import { bytesOf, bytesQuantity } from '../../kube/quantity.js';
import { driverParameters } from './secrets.js';
import { driverTopologyKeys, nodeSegments, type Segments } from './topology.js';

export interface CapacityOptions {
  /** Where the objects live (external-provisioner: the sidecar's own namespace). */
  readonly namespace: string;
  /** Track Immediate classes too (--capacity-for-immediate-binding). */
  readonly immediateToo?: boolean;
}

export interface CapacityTracker {
  /** One full pass: create, update and delete objects. */
  sync(signal: AbortSignal): Promise<void>;
}

/** Every distinct topology segment where the driver is registered (CSINode keys, Node labels). */
export function driverSegments(ctx: SidecarContext): Segments[] {
  const seen = new Map<string, Segments>();
  for (const cn of ctx.informers.csiNodes.lister.list()) {
    const keys = driverTopologyKeys(cn, ctx.driver);
    const node = ctx.informers.nodes.lister.get(cn.metadata?.name ?? '');
    if (!keys || keys.length === 0 || !node) continue;
    try {
      const s = nodeSegments(node, keys);
      seen.set(JSON.stringify(Object.entries(s).sort()), s);
    } catch {
      continue; // labels not there yet
    }
  }
  return [...seen.values()];
}

export function newCapacityTracker(ctx: SidecarContext, o: CapacityOptions): CapacityTracker {
  const api = () => ctx.client.resource('CSIStorageCapacity');

  const sync = async (signal: AbortSignal): Promise<void> => {
    if (!ctx.controllerCaps.has('GET_CAPACITY')) return;
    const classes = ctx.informers.classes.lister.list();
    const want = desiredCapacities(classes, driverSegments(ctx), ctx.driver, o.immediateToo ?? false);
    const existing = (
      await api().list({ namespace: o.namespace, labelSelector: `csi.storage.k8s.io/drivername=${ctx.driver}`, signal })
    ).items.filter((x) => isOurs(x, ctx.driver));
    const byKey = new Map<string, CSIStorageCapacity>();
    for (const x of existing) {
      const k = capacityKeyString(keyOfObject(x));
      if (byKey.has(k))
        await api()
          .delete(x.metadata?.name ?? '', { namespace: o.namespace, signal })
          .catch(() => undefined); // a duplicate
      else byKey.set(k, x);
    }
    const wanted = new Set(want.map(capacityKeyString));
    for (const [k, x] of byKey) {
      if (wanted.has(k)) continue;
      await api().deleteIfExists(x.metadata?.name ?? '', { namespace: o.namespace, signal });
    }
    for (const key of want)
      await syncOne(
        key,
        byKey.get(capacityKeyString(key)),
        classes.find((c) => c.metadata?.name === key.className)?.parameters ?? {},
        signal,
      );
  };

  const syncOne = async (
    key: CapacityKey,
    current: CSIStorageCapacity | undefined,
    params: Record<string, string>,
    signal: AbortSignal,
  ): Promise<void> => {
    let parameters: Record<string, string>;
    try {
      parameters = driverParameters(params);
    } catch (e) {
      ctx.log.warn('class not tracked for capacity', { class: key.className, error: errorMessage(e) });
      return;
    }
    const r = await ctx.csi.getCapacity(
      { parameters, accessibleTopology: { segments: { ...key.segment } } },
      { signal, timeoutMs: ctx.csiTimeoutMs },
    );
    const capacity = bytesQuantity(BigInt(r.availableCapacity || 0));
    const max = r.maximumVolumeSize ? bytesQuantity(BigInt(r.maximumVolumeSize.value || 0)) : undefined;
    if (!current) {
      await api().create(newCapacityObject(key, ctx.driver, o.namespace, capacity, max), { signal });
      return;
    }
    const same = bytesOf(current.capacity) === bytesOf(capacity) && bytesOf(current.maximumVolumeSize) === bytesOf(max);
    if (same) return;
    const next: CSIStorageCapacity = { ...current, capacity };
    if (max !== undefined) next.maximumVolumeSize = max;
    else delete next.maximumVolumeSize;
    await api().update(next, { signal }); // resourceVersion-checked; a Conflict retries the pass
  };

  return { sync };
}
