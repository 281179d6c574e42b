/**
 * Where the volume manager reads claims, volumes, secrets, configmaps and VolumeAttachments from:
 * cluster-wide informers when its credential may list them (the admin's), or, under a node
 * credential (the Node authorizer allows only reading the objects of this node's pods), a GET
 * cache per kind, as the kubelet does.
 */
import type { VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import { newGetCache } from '../../client/getcache.js';
import { informerFor, type Informer } from '../../client/informer.js';
import type { KindMap } from '../../client/kinds.js';
import type { RestClient } from '../../client/rest.js';
import type { Clock } from '../../util/backoff.js';
import type { Logger } from '../../util/log.js';
import type { PopulatorLookups } from './populator/resolve.js';

export interface VolumeObjects {
  readonly lookups: PopulatorLookups;
  readonly volumeAttachment: (name: string) => VolumeAttachment | undefined;
  /** Informers to run (their events re-run the populator). */
  readonly informers: ReadonlyArray<Informer<unknown>>;
  /** Every informer listed and every object asked for answered. */
  synced(): boolean;
  /** After a full populator pass: stop following objects no pod needs any more. */
  passDone(): void;
}

/** Cluster-wide informers: needs a credential that may list and watch these kinds. */
export function informerObjects(client: RestClient): VolumeObjects {
  const claims = informerFor(client, 'PersistentVolumeClaim');
  const pvs = informerFor(client, 'PersistentVolume');
  const drivers = informerFor(client, 'CSIDriver');
  const attachments = informerFor(client, 'VolumeAttachment');
  // configMap/secret volumes follow their objects: a change re-runs the populator, which rewrites changed payloads.
  const configMaps = informerFor(client, 'ConfigMap');
  const secrets = informerFor(client, 'Secret');
  const informers = [claims, pvs, drivers, attachments, configMaps, secrets] as Array<Informer<unknown>>;
  return {
    lookups: {
      claim: (ns, n) => claims.lister.get(ns, n),
      volume: (n) => pvs.lister.get(n),
      csiDriver: (n) => drivers.lister.get(n),
      configMap: (ns, n) => configMaps.lister.get(ns, n),
      secret: (ns, n) => secrets.lister.get(ns, n),
    },
    volumeAttachment: (n) => attachments.lister.get(n),
    informers,
    synced: () => informers.every((i) => i.hasSynced()),
    passDone: () => {},
  };
}

/** A claim, volume, secret or configmap answer is reused this long (the kubelet's cache strategy, shortened). */
const OBJECT_TTL_MS = 5_000;
/** An object found absent (or refused: not yet related to this node) is awaited: asked again sooner. */
const ABSENT_TTL_MS = 500;
/** VolumeAttachments are read while waiting for an attach: fresher answers. */
const ATTACHMENT_TTL_MS = 250;

/** GET caches for a node credential; CSIDrivers (which every node may list) stay an informer. */
export function nodeScopedObjects(o: {
  client: RestClient;
  clock: Clock;
  onChange: () => void;
  signal: AbortSignal;
  log: Logger;
}): VolumeObjects {
  const cache = <K extends 'PersistentVolumeClaim' | 'PersistentVolume' | 'ConfigMap' | 'Secret' | 'VolumeAttachment'>(
    kind: K,
    ttlMs: number,
  ) =>
    newGetCache<KindMap[K]>({
      kind,
      fetch: (namespace, name, signal) => o.client.resource(kind).get(name, { namespace, signal }),
      ttlMs,
      absentTtlMs: Math.min(ttlMs, ABSENT_TTL_MS),
      clock: o.clock,
      onChange: o.onChange,
      signal: o.signal,
      log: o.log,
    });
  const claims = cache('PersistentVolumeClaim', OBJECT_TTL_MS);
  const pvs = cache('PersistentVolume', OBJECT_TTL_MS);
  const configMaps = cache('ConfigMap', OBJECT_TTL_MS);
  const secrets = cache('Secret', OBJECT_TTL_MS);
  const attachments = cache('VolumeAttachment', ATTACHMENT_TTL_MS);
  const drivers = informerFor(o.client, 'CSIDriver');
  const caches = [claims, pvs, configMaps, secrets];
  return {
    lookups: {
      claim: (ns, n) => claims.get(ns, n),
      volume: (n) => pvs.get(undefined, n),
      csiDriver: (n) => drivers.lister.get(n),
      configMap: (ns, n) => configMaps.get(ns, n),
      secret: (ns, n) => secrets.get(ns, n),
    },
    volumeAttachment: (n) => attachments.get(undefined, n),
    informers: [drivers] as Array<Informer<unknown>>,
    synced: () => drivers.hasSynced() && caches.every((c) => c.hasSynced()),
    passDone: () => {
      for (const c of [...caches, attachments]) c.forgetUnused();
    },
  };
}
