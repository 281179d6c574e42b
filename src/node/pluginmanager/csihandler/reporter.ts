import type { ObjectReference } from 'kubernetes-types/core/v1.js';
import { metaTime, type EventRecorder } from '../../../client/events.js';
import type { Node } from 'kubernetes-types/core/v1.js';
import { realClock, type Clock } from '../../../util/backoff.js';
import { NotFoundError } from '../../../util/errors.js';
import type { OperationExecutor } from '../../../util/executor.js';
import type { ObjectBatcher } from './batcher.js';
import type { RegisteredPlugin, SocketPath } from '../cache/types.js';
import type { RegistrationObserver } from '../handler.js';
import { PLUGIN_STATUS_ANNOTATION, transition, type PluginStatus, type StatusSignal } from './status.js';

/** Publishes per-driver status (annotation + Events on the Node). Never throws, never blocks. */
export interface PluginStatusReporter extends RegistrationObserver {
  healthy(driver: string): void;
  unhealthy(driver: string, reason: string): void;
  /** Writes the annotation now (at start: replaces what an earlier run left behind). */
  publish(): void;
  /** Current statuses by driver; a copy. */
  statuses(): Record<string, PluginStatus>;
  /** Resolves once the annotation reflects every change so far (or a write failed). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/** The executor key of the annotation writes. */
const WRITE_KEY = 'node/plugin-status-annotation';

export function newPluginStatusReporter(o: {
  /** This agent's writer of its Node (shared with the CSI handler: one write per batch). */
  node: ObjectBatcher<Node>;
  nodeName: string;
  /** Runs the annotation writes: one at a time, a failed one retried when its backoff expires. */
  executor: OperationExecutor;
  recorder?: EventRecorder;
  clock?: Clock;
}): PluginStatusReporter {
  const clock = o.clock ?? realClock;
  const statuses = new Map<string, PluginStatus>();
  const nodeRef: ObjectReference = { kind: 'Node', apiVersion: 'v1', name: o.nodeName, uid: o.nodeName }; // the kubelet's node events use the name as uid
  let dirty = false;
  let closed = false;

  /** Writes until the annotation holds the latest statuses; changes made meanwhile are picked up. */
  const write = async (): Promise<void> => {
    while (dirty && !closed) {
      dirty = false;
      const value =
        statuses.size === 0
          ? undefined
          : JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a.localeCompare(b))));
      try {
        await o.node.apply((cur) => {
          if (!cur) throw new NotFoundError(`node ${o.nodeName} does not exist (yet)`);
          if (cur.metadata?.annotations?.[PLUGIN_STATUS_ANNOTATION] === value) return undefined;
          const annotations = { ...cur.metadata?.annotations };
          if (value === undefined) delete annotations[PLUGIN_STATUS_ANNOTATION];
          else annotations[PLUGIN_STATUS_ANNOTATION] = value;
          return { ...cur, metadata: { ...cur.metadata, annotations } };
        });
      } catch (e) {
        dirty = true; // still to be written: when the backoff expires
        throw e;
      }
    }
  };

  const schedule = (): void => {
    dirty = true;
    if (!closed) o.executor.run(WRITE_KEY, 'write_plugin_status', write); // a running write picks the change up
  };
  // A change that arrived as a write was ending, or a failed write whose backoff expired.
  const unsubscribe = o.executor.onChange((c) => {
    if (c.key === WRITE_KEY && dirty) schedule();
  });

  const apply = (driver: string, s: StatusSignal): void => {
    const t = transition(driver, statuses.get(driver), s, metaTime(clock.now()));
    if (t.kind === 'unchanged') return;
    if (t.kind === 'set') statuses.set(driver, t.status);
    else statuses.delete(driver);
    if (t.event) o.recorder?.event(nodeRef, t.event.type, t.event.reason, t.event.message);
    schedule();
  };

  const isCsi = (type: string | undefined): boolean => type === undefined || type === 'CSIPlugin';

  return {
    registered: (p: RegisteredPlugin) => {
      if (isCsi(p.type)) apply(p.name, { kind: 'registered', socket: p.socketPath, endpoint: p.endpoint });
    },
    failed: (p, reason, unreachable) => {
      if (isCsi(p.type)) apply(p.name, { kind: 'failed', socket: p.socketPath, reason, unreachable });
    },
    deregistered: (p: RegisteredPlugin) => {
      if (isCsi(p.type)) apply(p.name, { kind: 'deregistered', socket: p.socketPath });
    },
    socketRemoved: (socketPath: SocketPath) => {
      for (const driver of [...statuses.keys()]) apply(driver, { kind: 'socketRemoved', socket: socketPath });
    },
    healthy: (driver) => apply(driver, { kind: 'healthy' }),
    unhealthy: (driver, reason) => apply(driver, { kind: 'unhealthy', reason }),
    publish: schedule,
    statuses: () => Object.fromEntries(statuses),
    flush: async () => {
      while (o.executor.isPending(WRITE_KEY)) await o.executor.idle();
    },
    close: async () => {
      closed = true;
      unsubscribe();
      await o.executor.idle();
    },
  };
}
