import { realClock, type Clock } from '../../../util/backoff.js';
import type { OperationExecutor } from '../../../util/executor.js';
import { newLogger, type Logger } from '../../../util/log.js';
import { newLoop } from '../../../util/loop.js';
import type { ActualStateOfWorld } from '../cache/actual-state.js';
import type { DesiredStateOfWorld } from '../cache/desired-state.js';
import type { DesiredPlugin, RegisteredPlugin } from '../cache/types.js';
import { reconcile } from './reconcile.js';

/** The effects the loop asks the executor to run. */
export interface PluginOperations {
  register(p: DesiredPlugin, signal: AbortSignal): Promise<void>;
  unregister(p: RegisteredPlugin, signal: AbortSignal): Promise<void>;
}

export interface ReconcilerLoop {
  /** Asks for a pass as soon as possible (watcher events); calls coalesce. */
  trigger(): void;
  /** One pass now: snapshot, reconcile, submit. Refusals are expected and ignored. */
  pass(): void;
  /** Runs passes on trigger, on executor changes and every `periodMs` until `signal` aborts. */
  run(signal: AbortSignal): Promise<void>;
  /** Resolves once `run` has made its first pass. */
  settled(): Promise<void>;
}

// The kubelet's plugin manager loop runs every 1 s and is its only trigger; here the period is a
// safety net and watcher events and settled operations trigger a pass at once.
export const DEFAULT_RECONCILE_PERIOD_MS = 1_000;

export function newReconcilerLoop(o: {
  dsw: DesiredStateOfWorld;
  asw: ActualStateOfWorld;
  executor: OperationExecutor;
  operations: PluginOperations;
  clock?: Clock;
  periodMs?: number;
  log?: Logger;
}): ReconcilerLoop {
  const log = o.log ?? newLogger('pluginmanager/reconciler');

  const pass = (): void => {
    for (const op of reconcile(o.dsw.pluginsToRegister(), o.asw.registeredPlugins())) {
      const p = op.plugin;
      // The timestamp is part of the name: a re-created socket is a new operation, not a retry,
      // so it is not held back by the old socket's backoff.
      const name = `${op.kind}@${p.timestamp}`;
      const r =
        op.kind === 'register'
          ? o.executor.run(p.socketPath, name, (s) => o.operations.register(op.plugin, s))
          : o.executor.run(p.socketPath, name, (s) => o.operations.unregister(op.plugin, s));
      if (r === 'started') log.debug(`${op.kind} started`, { socket: p.socketPath });
    }
  };

  const loop = newLoop({
    name: 'plugin reconciler',
    body: pass,
    periodMs: o.periodMs ?? DEFAULT_RECONCILE_PERIOD_MS,
    clock: o.clock ?? realClock,
    log,
  });

  const run = async (signal: AbortSignal): Promise<void> => {
    const unsubscribe = o.executor.onChange(loop.trigger);
    try {
      await loop.run(signal);
    } finally {
      unsubscribe();
    }
  };

  return { trigger: loop.trigger, pass, run, settled: loop.ranOnce };
}
