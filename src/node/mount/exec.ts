import { execFile } from 'node:child_process';
import { StowageError } from '../../util/errors.js';

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

/** Runs a program with an argument array (never through a shell); resolves with its stdout. */
export function run(command: string, args: readonly string[], opts: RunOptions = {}): Promise<string> {
  const timeout = opts.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    execFile(command, [...args], { timeout, killSignal: 'SIGKILL', encoding: 'utf8' }, (err, stdout, stderr) => {
      if (!err) {
        resolve(stdout);
        return;
      }
      const e = err as NodeJS.ErrnoException & { code?: unknown; killed?: boolean; signal?: string | null };
      const exitCode = typeof e.code === 'number' ? e.code : null;
      const text = (stderr || '').trim();
      let detail: string;
      if (e.killed || e.signal) detail = `timed out or killed after ${timeout} ms${e.signal ? ` (${e.signal})` : ''}`;
      else if (typeof e.code === 'string') detail = `cannot run: ${e.code}`;
      else detail = `exit code ${exitCode ?? '?'}${text ? `: ${text}` : ''}`;
      reject(new MountError(command, args, exitCode, text, detail, { cause: err }));
    });
  });
}
