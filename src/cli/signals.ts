/**
 * The one way a `stowage` subcommand runs until asked to stop: SIGINT or SIGTERM aborts the signal
 * handed to the component, whose run then returns. The handlers live exactly as long as the run,
 * so a second Ctrl-C after they are gone gets Node's default (immediate exit).
 */

/** The abort reason when a process signal asked the run to stop. */
export class ShutdownRequested extends Error {
  constructor(readonly signal: NodeJS.Signals) {
    super(`received ${signal}`);
    this.name = 'ShutdownRequested';
  }
}

const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];

/** Runs `run` with a signal that aborts on the first SIGINT or SIGTERM. */
export async function runUntilSignalled<T>(run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ac = new AbortController();
  const onSignal = (sig: NodeJS.Signals): void => ac.abort(new ShutdownRequested(sig));
  for (const s of SIGNALS) process.once(s, onSignal);
  try {
    return await run(ac.signal);
  } finally {
    for (const s of SIGNALS) process.off(s, onSignal);
  }
}
