/**
 * Fault injection for crash tests: `STOWAGE_CRASH_AT=<step>[@<n>]` makes the process SIGKILL
 * itself the n-th time (default: first) it reaches the named step, so a test can stop the driver
 * at an exact instant between two effects. Unset (always, outside tests), a crash point is a no-op.
 */
const spec = parseCrashSpec(process.env.STOWAGE_CRASH_AT);
let hits = 0;

export function parseCrashSpec(v: string | undefined): { step: string; nth: number } | undefined {
  if (!v) return undefined;
  const m = /^(.+?)(?:@(\d+))?$/.exec(v);
  if (!m) return undefined;
  return { step: m[1]!, nth: m[2] === undefined ? 1 : Number(m[2]) };
}

/** A named instant between two durable effects of an RPC (e.g. `CreateVolume:intent`). */
export function crashPoint(step: string): void {
  if (!spec || spec.step !== step) return;
  hits += 1;
  if (hits === spec.nth) process.kill(process.pid, 'SIGKILL');
}
