import { StowageError } from '../util/errors.js';
import { execOk, Spawner } from './spawner.js';

/** Default limit for one mount-related command; mount(8) on a healthy local fs returns in ms. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 30_000;

/**
 * A mount-related command failed (non-zero exit, signal, timeout, or not runnable). Carries the
 * command line, exit code and stderr so the caller can show one clear line. Retryable: most mount
 * failures (busy device, a transient race) can clear on their own.
 */
export class MountError extends StowageError {
  readonly code = 'Internal';
  readonly retryable = true;
  constructor(
    readonly command: string,
    readonly args: readonly string[],
    readonly exitCode: number | null,
    readonly stderr: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${[command, ...args].join(' ')}: ${detail}`, options);
  }
}

export interface RunOptions {
  timeoutMs?: number;
}

/** One helper process per thread runs every command (see spawner.ts for why). */
const spawner = new Spawner();

/** Runs a program with an argument array (never through a shell); resolves with its stdout. */
export async function run(command: string, args: readonly string[], opts: RunOptions = {}): Promise<string> {
  const timeout = opts.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  const r = await spawner.run(command, args, timeout);
  if (execOk(r)) return r.stdout;
  const text = r.stderr.trim();
  let detail: string;
  if (r.lost) detail = 'outcome unknown: the process that ran it exited';
  else if (r.killed || r.signal) detail = `timed out or killed after ${timeout} ms${r.signal ? ` (${r.signal})` : ''}`;
  else if (r.errno !== null) detail = `cannot run: ${r.errno}`;
  else detail = `exit code ${r.exitCode ?? '?'}${text ? `: ${text}` : ''}`;
  throw new MountError(command, args, r.exitCode, text, detail);
}
