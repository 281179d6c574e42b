/**
 * Wiring of the CSI controller sidecar: connects to the driver, learns its name and capabilities,
 * and runs the provisioner, deleter, attacher, resizer and capacity loops as controllers on the
 * shared runtime (one key is never reconciled twice at once; failures requeue with backoff). No logic here.
 */
import { hostname } from 'node:os';
import type { PersistentVolume, PersistentVolumeClaim } from 'kubernetes-types/core/v1.js';
import type { CSINode, VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import {
  runLeaderElected,
  informerFor,
  stripManagedFields,
  metaNamespaceKey,
  newController,
  newEventRecorder,
  objectOf,
  reads,
  watch,
  type Controller,
  type RateLimiterPolicy,
  type ReconcileFn,
  type ReconcileResult,
  type RestClient,
  type Source,
  type EventRecorder,
  type LeaderElectionConfig,
} from '../../client/index.js';
import { childAbortController } from '../../util/abort.js';
import { UnavailableError } from '../../util/errors.js';
import { newLogger, type Logger } from '../../util/log.js';
import type { MetricsRegistry } from '../../util/metrics.js';
import { recordSidecarOperations } from '../metrics.js';
import { CsiClient, CsiError } from '../client.js';
import { newAttacher } from './attacher.js';
import { newCapacityTracker } from './capacity.js';
import type { SidecarContext } from './context.js';
import { newDeleter } from './deleter.js';
import { leaseName } from './names.js';
import { cloneSourceName } from './provision-decide.js';
import { claimClass } from '../../kube/class.js';
import { newProvisioner, type ProvisionerOptions } from './provisioner.js';
import { newResizer } from './resizer.js';
import { COMPONENTS, componentUserAgent } from '../../kube/version.js';

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
  readonly metrics?: MetricsRegistry;
  /** Where csi_sidecar_operations_seconds goes when it is not `metrics` (`up`: the API server's /metrics). */
  readonly operationMetrics?: MetricsRegistry;
  readonly log?: Logger;
}

// Kubernetes volume operations back off from 500 ms (exponentialbackoff); 30 s is our cap.
const DEFAULT_RATE_LIMIT: RateLimiterPolicy = { initialMs: 500, capMs: 30_000 };

/**
 * The external-* sidecars requeue every failed CSI call with backoff: nothing watches the driver,
 * so no event would bring the key back. A CsiError's `retryable` answers another question (may
 * the same call succeed at once, CSI's recovery table), so the loop retries every CSI failure;
 * a sidecar that decides retrying cannot help throws its own non-retryable error.
 */
export function retryingCsiFailures<K>(reconcile: ReconcileFn<K>): ReconcileFn<K> {
  return async (key, signal): Promise<ReconcileResult | void> => {
    try {
      return await reconcile(key, signal);
    } catch (e) {
      if (e instanceof CsiError && !e.retryable) throw new UnavailableError(e.message, { cause: e });
      throw e;
    }
  };
}

/** Connects to the driver and serves its claims, volumes and attachments until `signal` aborts. */
export async function runCsiSidecar(options: CsiSidecarOptions): Promise<void> {
  // Six informers and every worker listen: on a scope of their own, so that the caller's signal
  // carries one listener of ours, not dozens.
  const scope = childAbortController(options.signal);
  const o = { ...options, signal: scope.signal };
  const log = o.log ?? newLogger('csi-sidecar');
  if (!o.csi && !o.csiAddress) throw new Error('runCsiSidecar: csiAddress or csi is required');
  const csi = o.csi ?? new CsiClient({ endpoint: o.csiAddress ?? '', log: log.child('csi'), caller: 'csi-sidecar' });
  const opMetrics = o.operationMetrics ?? o.metrics;
  const stopMetrics = opMetrics ? recordSidecarOperations(csi, opMetrics) : undefined;
  const recorders: EventRecorder[] = [];
  const clients: RestClient[] = [];
  try {
    await csi.connect({ signal: o.signal });
    const info = await csi.getPluginInfo({ signal: o.signal });
    const driver = info.name;
    const pluginCaps = await csi.pluginCapabilities();
    if (!pluginCaps.has('CONTROLLER_SERVICE')) throw new Error(`CSI driver ${driver} has no controller service`);
    const controllerCaps = await csi.controllerCapabilities();
    log.info('serving CSI driver', { driver, controllerCapabilities: [...controllerCaps].join(',') });

    const resyncMs = o.resyncMs ?? 60_000;
    const inf = <
      K extends 'PersistentVolumeClaim' | 'PersistentVolume' | 'StorageClass' | 'CSINode' | 'Node' | 'VolumeAttachment',
    >(
      k: K,
    ) => informerFor(o.client, k, { resyncMs, log: log.child(`informer/${k}`), transform: stripManagedFields });
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
    // Kubernetes runs external-provisioner, -attacher and -resizer as separate binaries, each
    // sending its own User-Agent: their writes (and events) carry those field managers here too.
    const contexts = new Map<string, SidecarContext>();
    const as = (command: string): SidecarContext => {
      let c = contexts.get(command);
      if (!c) {
        const client = o.client.withUserAgent(componentUserAgent(command));
        clients.push(client);
        contexts.set(command, (c = { ...ctx, client }));
      }
      return c;
    };
    const recorder = (c: SidecarContext, component: string): EventRecorder => {
      const r = newEventRecorder({ client: c.client, component, host: hostname() });
      recorders.push(r);
      return r;
    };
    const rateLimit = o.rateLimit ?? DEFAULT_RATE_LIMIT;
    const enabled = {
      provisioner: o.controllers?.provisioner ?? true,
      attacher: o.controllers?.attacher ?? true,
      resizer: o.controllers?.resizer ?? true,
    };
    const workers = o.workers ?? 4;
    const I = ctx.informers;
    // Workers start once every cache has synced: a decision on a half-filled cache (no nodes yet,
    // say) would be wrong, not just late.
    const all = reads<string>(...Object.values(I));
    const controllers: Array<Controller<string>> = [];
    const controller = (
      name: string,
      n: number,
      sources: ReadonlyArray<Source<string>>,
      reconcile: ReconcileFn<string>,
    ): Controller<string> => {
      const c = newController<string>({
        name,
        workers: n,
        rateLimit,
        metrics: o.metrics,
        log: log.child(name),
        sources: [...sources, all],
        reconcile: retryingCsiFailures(reconcile),
      });
      controllers.push(c);
      return c;
    };

    if (enabled.provisioner) {
      const pctx = as(COMPONENTS.provisioner);
      const provisionerEvents = recorder(pctx, 'external-provisioner');
      const provisioner = newProvisioner(pctx, { recorder: provisionerEvents, ...o.provisioner });
      const deleter = newDeleter(pctx, { recorder: provisionerEvents });
      controller(
        'provisioner',
        workers,
        [
          watch(I.claims, (q) => {
            const addClaim = (c: PersistentVolumeClaim): void => q.add(metaNamespaceKey(c));
            // A clone that got its volume (or went away) may release its source's cloning protection.
            const addSource = (c: PersistentVolumeClaim): void => {
              const src = cloneSourceName(c);
              if (src && c.metadata?.namespace) q.add(`${c.metadata.namespace}/${src}`);
            };
            return {
              onAdd: addClaim,
              onUpdate: (_, c) => {
                addClaim(c);
                addSource(c);
              },
              onDelete: (x) => addSource(objectOf(x)),
            };
          }),
          watch(I.classes, (q) => ({
            onAdd: (cls) => {
              for (const c of I.claims.lister.list())
                if (claimClass(c) === cls.metadata?.name) q.add(metaNamespaceKey(c));
            },
          })),
          // A PV deleted under a claim still pending (e.g. by a failed save) lets the claim be provisioned again.
          watch(I.volumes, (q) => ({
            onDelete: (x) => {
              const ref = objectOf(x).spec?.claimRef;
              if (ref?.namespace && ref.name) q.add(`${ref.namespace}/${ref.name}`);
            },
          })),
        ],
        (k, s) => provisioner.reconcile(k, s),
      );
      controller(
        'deleter',
        workers,
        [
          watch(I.volumes, (q) => {
            const addPv = (pv: PersistentVolume): void => q.add(pv.metadata?.name ?? '');
            return { onAdd: addPv, onUpdate: (_, pv) => addPv(pv) };
          }),
          // A VolumeAttachment gone may unblock the deletion of its PV.
          watch(I.attachments, (q) => ({
            onDelete: (x) => {
              const pv = objectOf(x).spec?.source?.persistentVolumeName;
              if (pv) q.add(pv);
            },
          })),
        ],
        (k, s) => deleter.reconcile(k, s),
      );
    }

    if (enabled.attacher) {
      const attacher = newAttacher(as(COMPONENTS.attacher));
      const addVa = (q: { add(k: string): void }, va: VolumeAttachment): void => {
        if (va.spec?.attacher === driver) q.add(`va:${va.metadata?.name ?? ''}`);
      };
      controller(
        'attacher',
        workers,
        [
          watch(I.attachments, (q) => ({
            onAdd: (va) => addVa(q, va),
            onUpdate: (_, va) => addVa(q, va),
            onDelete: (x) => {
              const pv = objectOf(x).spec?.source?.persistentVolumeName;
              if (pv) q.add(`pv:${pv}`);
            },
          })),
          watch(I.volumes, (q) => {
            const addPv = (pv: PersistentVolume): void => {
              if (pv.spec?.csi?.driver === driver) q.add(`pv:${pv.metadata?.name ?? ''}`);
            };
            return { onAdd: addPv, onUpdate: (_, pv) => addPv(pv) };
          }),
          // An attachment waiting for the driver to register on its node is retried when it does.
          watch(I.csiNodes, (q) => {
            const addNode = (cn: CSINode): void => {
              for (const va of I.attachments.lister.list())
                if (va.spec?.nodeName === cn.metadata?.name && !va.status?.attached) addVa(q, va);
            };
            return { onAdd: addNode, onUpdate: (_, cn) => addNode(cn) };
          }),
        ],
        (k, s) => attacher.reconcile(k, s),
      );
    }

    if (enabled.resizer) {
      const rctx = as(COMPONENTS.resizer);
      const resizer = newResizer(rctx, { recorder: recorder(rctx, 'external-resizer') });
      controller(
        'resizer',
        workers,
        [
          watch(I.claims, (q) => ({
            onAdd: (c) => q.add(metaNamespaceKey(c)),
            onUpdate: (_, c) => q.add(metaNamespaceKey(c)),
          })),
          watch(I.volumes, (q) => {
            const addPv = (pv: PersistentVolume): void => {
              const ref = pv.spec?.claimRef;
              if (pv.spec?.csi?.driver === driver && ref?.namespace && ref.name) q.add(`${ref.namespace}/${ref.name}`);
            };
            return { onAdd: addPv, onUpdate: (_, pv) => addPv(pv) };
          }),
        ],
        (k, s) => resizer.reconcile(k, s),
      );
    }

    if (o.capacity) {
      const pollMs = o.capacity.pollMs ?? 60_000; // external-provisioner's --capacity-poll-interval default
      const tracker = newCapacityTracker(as(COMPONENTS.provisioner), {
        namespace: o.capacity.namespace ?? 'kube-system',
        immediateToo: o.capacity.immediateToo ?? false,
      });
      const poke = (q: { add(k: string): void }): void => q.add('capacity');
      const capacity = controller(
        'capacity',
        1,
        [
          watch(I.classes, (q) => ({ onAdd: () => poke(q), onUpdate: () => poke(q), onDelete: () => poke(q) })),
          watch(I.csiNodes, (q) => ({ onAdd: () => poke(q), onUpdate: () => poke(q), onDelete: () => poke(q) })),
          // Only label changes move topology; node status heartbeats must not re-poll the driver.
          watch(I.nodes, (q) => ({
            onAdd: () => poke(q),
            onUpdate: (a, b) => {
              if (JSON.stringify(a.metadata?.labels ?? {}) !== JSON.stringify(b.metadata?.labels ?? {})) poke(q);
            },
            onDelete: () => poke(q),
          })),
        ],
        async (_k, s) => {
          await tracker.sync(s);
          return { requeueAfterMs: pollMs };
        },
      );
      poke(capacity);
    }

    await Promise.all(controllers.map((c) => c.run(o.signal)));
  } finally {
    stopMetrics?.();
    await Promise.allSettled(recorders.map((r) => r.close()));
    for (const c of clients) c.close();
    if (!o.csi) csi.close();
    scope.abort(); // detaches the scope from the caller's signal
  }
}

/**
 * Runs the sidecar only while holding the per-driver Lease in kube-system, so that several replicas
 * can run with one active. Every API write and every Controller* call passes the lease gate; losing
 * the lease rejects with LeaderElectionLostError (the supervisor restarts the process).
 */
export async function runCsiSidecarWithLeaderElection(
  o: CsiSidecarOptions & { election?: LeaderElectionConfig; driverName?: string },
): Promise<void> {
  // The Lease is per driver: without a name given, ask the driver before campaigning.
  const leaseName_ = o.election?.leaseName ?? leaseName(o.driverName ?? (await driverNameOf(o)));
  const log = o.log ?? newLogger('csi-sidecar');
  await runLeaderElected({
    client: o.client,
    config: { ...o.election, leaseName: leaseName_ },
    signal: o.signal,
    log,
    work: async ({ client, gate, signal }) => {
      const csi = new CsiClient({
        endpoint: o.csi?.endpoint ?? o.csiAddress ?? '',
        log: log.child('csi'),
        controllerGate: gate,
      });
      try {
        await runCsiSidecar({ ...o, client, csi, signal });
      } finally {
        csi.close();
      }
    },
  });
}

async function driverNameOf(o: CsiSidecarOptions): Promise<string> {
  const csi =
    o.csi ?? new CsiClient({ endpoint: o.csiAddress ?? '', log: (o.log ?? newLogger('csi-sidecar')).child('csi') });
  try {
    await csi.connect({ signal: o.signal });
    return (await csi.getPluginInfo({ signal: o.signal })).name;
  } finally {
    if (!o.csi) csi.close();
  }
}
