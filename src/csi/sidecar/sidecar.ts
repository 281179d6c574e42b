/**
 * Wiring of the CSI controller sidecar: connects to the driver, learns its name and capabilities,
 * starts informers, and runs the provisioner, deleter, attacher and resizer over their own work
 * queues (one key is never reconciled twice at once; failures requeue with backoff). No logic here.
 */
import { hostname } from 'node:os';
import type { PersistentVolume, PersistentVolumeClaim } from 'kubernetes-types/core/v1.js';
import type { CSINode, VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import { randomUUID } from 'node:crypto';
import {
  LeaderElector,
  apiLeaseLock,
  informerFor,
  metaNamespaceKey,
  newEventRecorder,
  newWorkQueue,
  objectOf,
  runWorkers,
  waitForCacheSync,
  type EventRecorder,
  type RateLimiterPolicy,
  type RestClient,
  type WorkQueue,
} from '../../client/index.js';
import { childAbortController } from '../../util/abort.js';
import { newLogger, type Logger } from '../../util/log.js';
import { CsiClient } from '../client.js';
import { newAttacher } from './attacher.js';
import { newCapacityTracker } from './capacity.js';
import type { SidecarContext } from './context.js';
import { newDeleter } from './deleter.js';
import { leaseName } from './names.js';
import { cloneSourceName } from './provision-decide.js';
import { claimClass } from '../../kube/class.js';
import { newProvisioner, type ProvisionerOptions } from './provisioner.js';
import { newResizer } from './resizer.js';

export interface CsiSidecarOptions {
  readonly client: RestClient;
  /** The driver's controller endpoint (`unix:///path` or a path); or pass `csi`. */
  readonly csiAddress?: string;
  /** An already constructed client (the caller closes it). */
  readonly csi?: CsiClient;
  readonly signal: AbortSignal;
  /** Workers per queue (external-* default to 10; we default to 4). */
  readonly workers?: number;
  /** Timeout of each CSI call (external-* --timeout; default 15 s). */
  readonly csiTimeoutMs?: number;
  /** Periodic re-delivery of every object (safety net for level-triggered sync); default 60 s. */
  readonly resyncMs?: number;
  /** Per-key retry backoff; default 500 ms doubling to 30 s. */
  readonly rateLimit?: RateLimiterPolicy;
  readonly provisioner?: Pick<ProvisionerOptions, 'saveAttempts' | 'saveRetryDelayMs' | 'extraCreateMetadata'>;
  /** Storage capacity tracking (external-provisioner --enable-capacity); off unless given. */
  readonly capacity?: { namespace?: string; pollMs?: number; immediateToo?: boolean };
  /** Which controllers run (default all). */
  readonly controllers?: { provisioner?: boolean; attacher?: boolean; resizer?: boolean };
  readonly log?: Logger;
}

// Kubernetes volume operations back off from 500 ms (exponentialbackoff); 30 s is our cap.
const DEFAULT_RATE_LIMIT: RateLimiterPolicy = { initialMs: 500, capMs: 30_000 };

/** Connects to the driver and serves its claims, volumes and attachments until `signal` aborts. */
export async function runCsiSidecar(options: CsiSidecarOptions): Promise<void> {
  // Six informers and every worker listen: on a scope of their own, so that the caller's signal
  // carries one listener of ours, not dozens.
  const scope = childAbortController(options.signal);
  const o = { ...options, signal: scope.signal };
  const log = o.log ?? newLogger('csi-sidecar');
  if (!o.csi && !o.csiAddress) throw new Error('runCsiSidecar: csiAddress or csi is required');
  const csi = o.csi ?? new CsiClient({ endpoint: o.csiAddress ?? '', log: log.child('csi') });
  const recorders: EventRecorder[] = [];
  try {
    await csi.connect({ signal: o.signal });
    const info = await csi.getPluginInfo({ signal: o.signal });
    const driver = info.name;
    const pluginCaps = await csi.pluginCapabilities();
    if (!pluginCaps.has('CONTROLLER_SERVICE')) throw new Error(`CSI driver ${driver} has no controller service`);
    const controllerCaps = await csi.controllerCapabilities();
    log.info('serving CSI driver', { driver, controllerCapabilities: [...controllerCaps].join(',') });

    const resyncMs = o.resyncMs ?? 60_000;
    const inf = <K extends 'PersistentVolumeClaim' | 'PersistentVolume' | 'StorageClass' | 'CSINode' | 'Node' | 'VolumeAttachment'>(k: K) =>
      informerFor(o.client, k, { resyncMs, log: log.child(`informer/${k}`) });
    const ctx: SidecarContext = {
      client: o.client,
      csi,
      driver,
      controllerCaps,
      topologyAware: pluginCaps.has('VOLUME_ACCESSIBILITY_CONSTRAINTS'),
      nodeOnlyExpansion: !controllerCaps.has('EXPAND_VOLUME') && (await csi.volumeExpansionModes()).size > 0,
      informers: {
        claims: inf('PersistentVolumeClaim'),
        volumes: inf('PersistentVolume'),
        classes: inf('StorageClass'),
        csiNodes: inf('CSINode'),
        nodes: inf('Node'),
        attachments: inf('VolumeAttachment'),
      },
      log,
      csiTimeoutMs: o.csiTimeoutMs ?? 15_000,
    };
    const recorder = (component: string): EventRecorder => {
      const r = newEventRecorder({ client: o.client, component, host: hostname() });
      recorders.push(r);
      return r;
    };
    const rateLimit = o.rateLimit ?? DEFAULT_RATE_LIMIT;
    const queues: Array<WorkQueue<string>> = [];
    const queue = (name: string): WorkQueue<string> => {
      const q = newWorkQueue<string>({ name, rateLimit });
      queues.push(q);
      return q;
    };
    const enabled = {
      provisioner: o.controllers?.provisioner ?? true,
      attacher: o.controllers?.attacher ?? true,
      resizer: o.controllers?.resizer ?? true,
    };
    // Workers start once every cache has synced: a decision on a half-filled cache (no nodes yet,
    // say) would be wrong, not just late.
    const starters: Array<() => Promise<void>> = [];
    const workers = o.workers ?? 4;
    const I = ctx.informers;

    if (enabled.provisioner) {
      const provisionerEvents = recorder('external-provisioner');
      const provisioner = newProvisioner(ctx, { recorder: provisionerEvents, ...o.provisioner });
      const deleter = newDeleter(ctx, { recorder: provisionerEvents });
      const claims = queue('provisioner-claims');
      const volumes = queue('provisioner-volumes');
      const addClaim = (c: PersistentVolumeClaim): void => claims.add(metaNamespaceKey(c));
      // A clone that got its volume (or went away) may release its source's cloning protection.
      const addSource = (c: PersistentVolumeClaim): void => {
        const src = cloneSourceName(c);
        if (src && c.metadata?.namespace) claims.add(`${c.metadata.namespace}/${src}`);
      };
      I.claims.addEventHandler({
        onAdd: addClaim,
        onUpdate: (_, c) => {
          addClaim(c);
          addSource(c);
        },
        onDelete: (x) => addSource(objectOf(x)),
      });
      I.classes.addEventHandler({
        onAdd: (cls) => {
          for (const c of I.claims.lister.list()) if (claimClass(c) === cls.metadata?.name) addClaim(c);
        },
      });
      const addPv = (pv: { metadata?: { name?: string } }): void => volumes.add(pv.metadata?.name ?? '');
      I.volumes.addEventHandler({
        onAdd: addPv,
        onUpdate: (_, pv) => addPv(pv),
        // A PV deleted under a claim still pending (e.g. by a failed save) lets the claim be provisioned again.
        onDelete: (x) => {
          const ref = objectOf(x).spec?.claimRef;
          if (ref?.namespace && ref.name) claims.add(`${ref.namespace}/${ref.name}`);
        },
      });
      // A VolumeAttachment gone may unblock the deletion of its PV.
      I.attachments.addEventHandler({
        onDelete: (x) => {
          const pv = objectOf(x).spec?.source?.persistentVolumeName;
          if (pv) volumes.add(pv);
        },
      });
      starters.push(() => runWorkers(claims, workers, (k, s) => provisioner.reconcile(k, s), { signal: o.signal, log: log.child('provisioner') }));
      starters.push(() => runWorkers(volumes, workers, (k, s) => deleter.reconcile(k, s), { signal: o.signal, log: log.child('deleter') }));
    }

    if (enabled.attacher) {
      const attacher = newAttacher(ctx);
      const q = queue('attacher');
      const addVa = (va: VolumeAttachment): void => {
        if (va.spec?.attacher === driver) q.add(`va:${va.metadata?.name ?? ''}`);
      };
      I.attachments.addEventHandler({
        onAdd: addVa,
        onUpdate: (_, va) => addVa(va),
        onDelete: (x) => {
          const pv = objectOf(x).spec?.source?.persistentVolumeName;
          if (pv) q.add(`pv:${pv}`);
        },
      });
      const addPv = (pv: PersistentVolume): void => {
        if (pv.spec?.csi?.driver === driver) q.add(`pv:${pv.metadata?.name ?? ''}`);
      };
      I.volumes.addEventHandler({ onAdd: addPv, onUpdate: (_, pv) => addPv(pv) });
      // An attachment waiting for the driver to register on its node is retried when it does.
      const addNode = (cn: CSINode): void => {
        for (const va of I.attachments.lister.list()) if (va.spec?.nodeName === cn.metadata?.name && !va.status?.attached) addVa(va);
      };
      I.csiNodes.addEventHandler({ onAdd: addNode, onUpdate: (_, cn) => addNode(cn) });
      starters.push(() => runWorkers(q, workers, (k, s) => attacher.reconcile(k, s), { signal: o.signal, log: log.child('attacher') }));
    }

    if (enabled.resizer) {
      const resizer = newResizer(ctx, { recorder: recorder('external-resizer') });
      const q = queue('resizer');
      I.claims.addEventHandler({
        onAdd: (c) => q.add(metaNamespaceKey(c)),
        onUpdate: (_, c) => q.add(metaNamespaceKey(c)),
      });
      const addPv = (pv: PersistentVolume): void => {
        const ref = pv.spec?.claimRef;
        if (pv.spec?.csi?.driver === driver && ref?.namespace && ref.name) q.add(`${ref.namespace}/${ref.name}`);
      };
      I.volumes.addEventHandler({ onAdd: addPv, onUpdate: (_, pv) => addPv(pv) });
      starters.push(() => runWorkers(q, workers, (k, s) => resizer.reconcile(k, s), { signal: o.signal, log: log.child('resizer') }));
    }

    if (o.capacity) {
      const pollMs = o.capacity.pollMs ?? 60_000; // external-provisioner's --capacity-poll-interval default
      const tracker = newCapacityTracker(ctx, { namespace: o.capacity.namespace ?? 'kube-system', immediateToo: o.capacity.immediateToo ?? false });
      const q = queue('capacity');
      const poke = (): void => q.add('capacity');
      I.classes.addEventHandler({ onAdd: poke, onUpdate: poke, onDelete: poke });
      I.csiNodes.addEventHandler({ onAdd: poke, onUpdate: poke, onDelete: poke });
      // Only label changes move topology; node status heartbeats must not re-poll the driver.
      I.nodes.addEventHandler({
        onAdd: poke,
        onUpdate: (a, b) => {
          if (JSON.stringify(a.metadata?.labels ?? {}) !== JSON.stringify(b.metadata?.labels ?? {})) poke();
        },
        onDelete: poke,
      });
      starters.push(() =>
        runWorkers(
          q,
          1,
          async (_k, s) => {
            await tracker.sync(s);
            return { requeueAfterMs: pollMs };
          },
          { signal: o.signal, log: log.child('capacity') },
        ),
      );
      poke();
    }

    const informerRuns = Object.values(I).map((i) => i.run(o.signal));
    let synced = true;
    await waitForCacheSync(o.signal, ...Object.values(I)).catch(() => {
      synced = false; // aborted before the caches synced
    });
    // Queues are drained and shut down by runWorkers on abort; unsynced, they only need shutting.
    await Promise.all(synced ? starters.map((start) => start()) : []);
    for (const q of queues) q.shutDown();
    await Promise.allSettled(informerRuns);
  } finally {
    await Promise.allSettled(recorders.map((r) => r.close()));
    if (!o.csi) csi.close();
    scope.abort(); // detaches the scope from the caller's signal
  }
}

/**
 * Runs the sidecar only while holding the per-driver Lease in kube-system, so that several replicas
 * can run with one active. Losing the lease ends the run (the supervisor restarts the process).
 */
export async function runCsiSidecarWithLeaderElection(o: CsiSidecarOptions & { identity?: string; driverName?: string }): Promise<void> {
  const identity = o.identity ?? `${hostname()}_${randomUUID()}`;
  // The Lease is per driver: without a name given, ask the driver before campaigning.
  const driverName = o.driverName ?? (await driverNameOf(o));
  let ran: Promise<void> | undefined;
  const elector = new LeaderElector({
    lock: apiLeaseLock({ client: o.client, name: leaseName(driverName), namespace: 'kube-system' }),
    identity,
    onStartedLeading: (signal) => {
      ran = runCsiSidecar({ ...o, signal });
      return ran;
    },
  });
  await elector.run(o.signal);
  await ran;
}

async function driverNameOf(o: CsiSidecarOptions): Promise<string> {
  const csi = o.csi ?? new CsiClient({ endpoint: o.csiAddress ?? '', log: (o.log ?? newLogger('csi-sidecar')).child('csi') });
  try {
    await csi.connect({ signal: o.signal });
    return (await csi.getPluginInfo({ signal: o.signal })).name;
  } finally {
    if (!o.csi) csi.close();
  }
}
