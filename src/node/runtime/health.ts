/**
 * The kubelet's runtime health check (updateRuntimeUp, every 5 s): the runtime's Status call and
 * its RuntimeReady condition, re-checked for as long as the agent runs, so a runtime that goes away
 * (and one that comes back) shows on the Node. NetworkReady is not required: pods use the host network.
 */
import type { Clock } from '../../util/backoff.js';
import type { CriClient } from './client.js';
import type * as T from './proto/types.js';

export const RUNTIME_HEALTH_PERIOD_MS = 5_000;

/** Why the runtime is down, from its Status reply or the call's failure; undefined = up. */
export function runtimeDownReason(r: { ok: T.StatusResponse__Output } | { error: Error }): string | undefined {
  if ('error' in r) return r.error.message;
  const ready = r.ok.status?.conditions.find((c) => c.type === 'RuntimeReady');
  if (!ready) return 'the runtime did not report RuntimeReady';
  return ready.status ? undefined : `RuntimeReady=false reason:${ready.reason} message:${ready.message}`;
}

/**
 * Checks the runtime every `periodMs` until `signal` aborts; `onChange` gets the new down reason
 * (undefined when it is up again) each time it changes. The first check is reported only if down.
 */
export async function watchRuntimeHealth(o: {
  cri: Pick<CriClient, 'status'>;
  clock: Clock;
  signal: AbortSignal;
  periodMs?: number;
  onChange: (down: string | undefined) => void;
}): Promise<void> {
  const period = o.periodMs ?? RUNTIME_HEALTH_PERIOD_MS;
  let last: string | undefined;
  while (!o.signal.aborted) {
    let down: string | undefined;
    try {
      down = runtimeDownReason({ ok: await o.cri.status({ timeoutMs: period, signal: o.signal }) });
    } catch (e) {
      if (o.signal.aborted) return;
      down = runtimeDownReason({ error: e instanceof Error ? e : new Error(String(e)) });
    }
    if (down !== last) o.onChange(down);
    last = down;
    await o.clock.sleep(period, o.signal).catch(() => undefined);
  }
}
