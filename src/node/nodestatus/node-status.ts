import type { Node } from 'kubernetes-types/core/v1.js';
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import type { RestClient } from '../../client/rest.js';
import { backoffDelay, realClock, type BackoffPolicy, type Clock } from '../../util/backoff.js';
import { AlreadyExistsError, ConflictError, ForbiddenError, NotFoundError, toStowageError } from '../../util/errors.js';
import { newOperationExecutor } from '../../util/executor.js';
import { newLogger, type Logger } from '../../util/log.js';
import { newLoop } from '../../util/loop.js';
import { ANN_CONTROLLER_MANAGED_ATTACH_DETACH } from '../../kube/names.js';
import { gatherHostInfo, type HostInfo } from './host.js';
import {
  LEASE_DURATION_SECONDS,
  NODE_LEASE_NAMESPACE,
  missingLabels,
  newLease,
  nodeLabels,
  nodeStatus,
  renewedLease,
} from './node-object.js';
import type { ContainerRuntimeInfo } from '../runtime/info.js';
import type { NodeEndpoint } from './node-object.js';

// The kubelet reports an unchanged status every 5 min and checks every 10 s; we have nothing that
// changes between reports, so a steady heartbeat each minute is enough next to the 10 s lease.
export const DEFAULT_STATUS_PERIOD_MS = 60_000;
// The kubelet's registerWithAPIServer: 100 ms, doubling, at most 7 s — an agent started while the
// API server is unreachable registers within 7 s of it coming back.
const REGISTRATION_BACKOFF: BackoffPolicy = { initialMs: 100, factor: 2, capMs: 7_000 };
// The kubelet's nodeStatusUpdateFrequency.
export const DEFAULT_STATUS_CHECK_MS = 10_000;
// The kubelet's default: attach/detach of this node's volumes is the controller's job.
const NODE_ANNOTATIONS = { [ANN_CONTROLLER_MANAGED_ATTACH_DETACH]: 'true' } as const;
// Reported when /version cannot be read; kubectl only displays it.
const FALLBACK_VERSION = 'v1.30.0';

export interface NodeStatusOptions {
  readonly client: RestClient;
  readonly nodeName: string;
  readonly host?: HostInfo;
  readonly clock?: Clock;
  readonly log?: Logger;
  /** How often an unchanged status is reported anyway (the kubelet's nodeStatusReportFrequency). */
  readonly statusPeriodMs?: number;
  /**
   * How often the Node is read back to check its status (the kubelet's nodeStatusUpdateFrequency):
   * a Ready condition the node controller turned Unknown while this agent was cut off is corrected
   * within this period, not a report period later.
   */
  readonly statusCheckMs?: number;
  /** The Lease's leaseDurationSeconds; it is renewed every quarter of it (the kubelet's rule). */
  readonly leaseDurationSeconds?: number;
  readonly leaseRenewMs?: number;
  /** The container runtime to report (a condition and nodeInfo.containerRuntimeVersion). */
  readonly runtime?: ContainerRuntimeInfo;
  /** Where the node's HTTPS endpoint listens (published as the kubelet publishes its :10250). */
  readonly endpoint?: NodeEndpoint;
}

/** The agent's Node object and its heartbeat Lease. */
export interface NodeStatusManager {
  /** The Node as last written. */
  node(): Node;
  /** Writes the status and renews the lease now (tests). */
  sync(): Promise<void>;
  /** The runtime's health changed: reported in the next status write, which starts now. */
  setRuntime(runtime: ContainerRuntimeInfo): void;
  stop(): Promise<void>;
}

/**
 * Creates or updates the Node (labels, status) and its Lease, retrying until the API answers or
 * `signal` aborts; then keeps the heartbeat going in the background.
 */
export async function startNodeStatus(o: NodeStatusOptions, signal: AbortSignal): Promise<NodeStatusManager> {
  const clock = o.clock ?? realClock;
  const log = o.log ?? newLogger('nodestatus');
  const host = o.host ?? gatherHostInfo();
  const nodes = o.client.resource('Node');
  const leases = o.client.resource('Lease');
  const stop = new AbortController();
  const stopped = AbortSignal.any([signal, stop.signal]);
  let version = FALLBACK_VERSION;
  let current!: Node;
  let runtime = o.runtime;
  let reportedAtMs = 0;
  const leaseSeconds = o.leaseDurationSeconds ?? LEASE_DURATION_SECONDS;

  const readVersion = async (): Promise<void> => {
    try {
      const v = await o.client.http.json({ method: 'GET', path: '/version', signal: stopped });
      const g = typeof v === 'object' && v !== null ? (v as { gitVersion?: unknown }).gitVersion : undefined;
      if (typeof g === 'string' && g !== '') version = g;
    } catch (e) {
      log.debug('cannot read the server version; reporting a default', { error: toStowageError(e).message });
    }
  };

  const ensureNode = async (): Promise<void> => {
    const labels = nodeLabels(o.nodeName, host);
    try {
      current = await nodes.get(o.nodeName, { signal: stopped });
    } catch (e) {
      if (!(e instanceof NotFoundError)) throw e;
      try {
        current = await nodes.create(
          {
            apiVersion: 'v1',
            kind: 'Node',
            metadata: { name: o.nodeName, labels, annotations: { ...NODE_ANNOTATIONS } },
            spec: {},
          },
          { signal: stopped },
        );
        log.info('node created', { node: o.nodeName });
      } catch (e2) {
        if (!(e2 instanceof AlreadyExistsError)) throw e2;
        current = await nodes.get(o.nodeName, { signal: stopped });
      }
    }
    const missing = missingLabels(current, labels);
    if (missing)
      current = await nodes.patch(o.nodeName, 'merge', { metadata: { labels: missing } }, { signal: stopped });
  };

  const writeStatus = async (): Promise<void> => {
    const status = nodeStatus({
      current: current.status,
      host,
      nodeName: o.nodeName,
      kubeletVersion: version,
      nowMs: clock.now(),
      runtime,
      endpoint: o.endpoint,
    });
    reportedAtMs = clock.now();
    try {
      current = await nodes.patchStatus(o.nodeName, 'merge', { status }, { signal: stopped });
    } catch (e) {
      if (!(e instanceof NotFoundError)) throw e;
      await ensureNode(); // deleted under us: the kubelet re-creates its Node too
      current = await nodes.patchStatus(o.nodeName, 'merge', { status }, { signal: stopped });
    }
  };

  /** Reads the Node back; reports now when its Ready condition is not ours (True) or the report period passed. */
  const checkStatus = async (): Promise<void> => {
    let live: Node | undefined;
    try {
      live = await nodes.get(o.nodeName, { signal: stopped });
    } catch (e) {
      if (!(e instanceof NotFoundError)) throw e;
    }
    const ready = live?.status?.conditions?.find((c) => c.type === 'Ready');
    if (live && ready?.status === 'True' && clock.now() - reportedAtMs < (o.statusPeriodMs ?? DEFAULT_STATUS_PERIOD_MS))
      return;
    if (live) current = live;
    await writeStatus();
  };

  // The Lease as last written: renewals update it without reading it first, as the kubelet's lease
  // controller (latestLease); a failed update drops it and the next renewal reads the Lease again.
  let latestLease: Lease | undefined;
  const renewLease = async (): Promise<void> => {
    try {
      latestLease = await writeLease(latestLease);
    } catch (e) {
      latestLease = undefined;
      throw e;
    }
  };
  const writeLease = async (cached: Lease | undefined): Promise<Lease> => {
    const opts = { namespace: NODE_LEASE_NAMESPACE, signal: stopped };
    if (cached) {
      try {
        return await leases.update(renewedLease(cached, o.nodeName, clock.now(), leaseSeconds), opts);
      } catch (e) {
        // Changed or deleted under us: read it again at once.
        if (!(e instanceof ConflictError) && !(e instanceof NotFoundError)) throw e;
      }
    }
    let lease: Lease | undefined;
    try {
      lease = await leases.get(o.nodeName, opts);
    } catch (e) {
      if (!(e instanceof NotFoundError)) throw e;
    }
    if (lease) return leases.update(renewedLease(lease, o.nodeName, clock.now(), leaseSeconds), opts);
    try {
      return await leases.create(newLease(current, clock.now(), leaseSeconds), opts);
    } catch (e) {
      if (!(e instanceof NotFoundError)) throw e; // the namespace is missing
    }
    await ensureNamespace();
    return leases.create(newLease(current, clock.now(), leaseSeconds), opts);
  };

  const ensureNamespace = async (): Promise<void> => {
    try {
      await o.client
        .resource('Namespace')
        .create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NODE_LEASE_NAMESPACE } }, { signal: stopped });
    } catch (e) {
      // Exists already (the API server creates it), or a node identity may not create namespaces:
      // either way the lease create below tells whether it can be written.
      if (!(e instanceof AlreadyExistsError) && !(e instanceof ForbiddenError)) throw e;
    }
  };

  /** Runs `f` until it succeeds, with backoff; false when stopped first. */
  const untilDone = async (what: string, f: () => Promise<void>): Promise<boolean> => {
    for (let failures = 0; !stopped.aborted;) {
      try {
        await f();
        return true;
      } catch (e) {
        if (stopped.aborted) return false;
        failures++;
        const err = toStowageError(e);
        // A lost race on the lease or node is normal: retry at once, re-reading.
        const delay = err instanceof ConflictError ? 0 : backoffDelay(REGISTRATION_BACKOFF, failures);
        log.warn(`${what} failed; retrying`, { node: o.nodeName, error: err.message, retryInMs: delay });
        await clock.sleep(delay, stopped).catch(() => undefined);
      }
    }
    return false;
  };

  await readVersion();
  const registered = await untilDone('registering the node', async () => {
    await ensureNode();
    await writeStatus();
  });
  if (!registered || !(await untilDone('renewing the node lease', renewLease))) {
    throw new Error(`node ${o.nodeName}: stopped before the node was registered`);
  }

  // The heartbeat: each write every period through the executor; a failed one is retried when its
  // backoff expires rather than a period later.
  const exec = newOperationExecutor({ clock, log });
  const every = (periodMs: number, key: string, f: () => Promise<void>): Promise<void> => {
    const write = async (): Promise<void> => {
      try {
        await f();
      } catch (e) {
        if (!stopped.aborted) throw e; // cut short by stop: not a failure to retry or report
      }
    };
    const loop = newLoop({
      name: key,
      body: () => void exec.run(key, key, write),
      periodMs,
      runAtStart: false,
      clock,
      log,
    });
    exec.onChange((c) => c.kind === 'retryDue' && c.key === key && loop.trigger());
    return loop.run(stopped);
  };
  const loops = Promise.all([
    every(o.leaseRenewMs ?? leaseSeconds * 250, 'renew_node_lease', renewLease),
    every(
      Math.min(o.statusCheckMs ?? DEFAULT_STATUS_CHECK_MS, o.statusPeriodMs ?? DEFAULT_STATUS_PERIOD_MS),
      'update_node_status',
      checkStatus,
    ),
  ]);
  // A runtime change is written at once; when a write is in flight (with the old value) or backing
  // off, it is written again as soon as that one settles.
  let runtimeUnwritten = false;
  const writeRuntime = (): void => {
    if (stopped.aborted) return;
    const started = exec.run('update_node_status', 'update_node_status', async () => {
      runtimeUnwritten = false;
      try {
        await writeStatus();
      } catch (e) {
        if (!stopped.aborted) throw e;
      }
    });
    if (started !== 'started') runtimeUnwritten = true;
  };
  exec.onChange((c) => {
    if (runtimeUnwritten && c.key === 'update_node_status') writeRuntime();
  });

  return {
    node: () => current,
    setRuntime: (r) => {
      runtime = r;
      writeRuntime();
    },
    sync: async () => {
      await writeStatus();
      await renewLease();
    },
    stop: async () => {
      stop.abort();
      await loops;
      await exec.close();
    },
  };
}
