import { CsiError, type CsiClient } from '../../../csi/client.js';
import { realClock, type Clock } from '../../../util/backoff.js';
import { toStowageError } from '../../../util/errors.js';
import { newLoop } from '../../../util/loop.js';

/**
 * Notices a driver that died after registering (node-driver-registrar never re-checks it, and
 * the kubelet only finds out when a mount fails): Probe every period; a call that fails or a
 * `ready: false` makes the driver unhealthy, an answer makes it healthy again.
 */
export interface HealthTarget {
  clients(): Array<{ name: string; client: CsiClient }>;
}
export interface HealthSink {
  healthy(driver: string): void;
  unhealthy(driver: string, reason: string): void;
}

// Often enough that a dead driver shows up on the Node before anyone schedules onto it.
export const DEFAULT_HEALTH_PERIOD_MS = 5_000;
const PROBE_TIMEOUT_MS = 2_000;

/** One round of probes. */
export async function probeAll(target: HealthTarget, sink: HealthSink, timeoutMs = PROBE_TIMEOUT_MS): Promise<void> {
  await Promise.all(
    target.clients().map(async ({ name, client }) => {
      try {
        if (await client.isReady({ timeoutMs })) sink.healthy(name);
        else sink.unhealthy(name, 'the driver reports not ready (Probe)');
      } catch (e) {
        // Probe is mandatory in CSI, but a driver that answers at all with UNIMPLEMENTED is alive.
        if (e instanceof CsiError && e.grpcCodeName === 'UNIMPLEMENTED') sink.healthy(name);
        else sink.unhealthy(name, `the driver does not answer: ${toStowageError(e).message}`);
      }
    }),
  );
}

/** Probes every period (the first round one period after start: registration has just dialled). */
export async function runHealthMonitor(o: {
  target: HealthTarget;
  sink: HealthSink;
  periodMs?: number;
  clock?: Clock;
  signal: AbortSignal;
}): Promise<void> {
  const loop = newLoop({
    name: 'csi driver health',
    body: () => probeAll(o.target, o.sink),
    periodMs: o.periodMs ?? DEFAULT_HEALTH_PERIOD_MS,
    runAtStart: false,
    clock: o.clock ?? realClock,
  });
  await loop.run(o.signal);
}
