/**
 * Runs programs (mount, umount, losetup, mkfs…) from a small helper process instead of from this
 * one. fork() copies the page tables of the forking process, so a spawn from a big process costs
 * in proportion to its memory (measured here: 1.4 ms at 50 MiB RSS, 8.8 ms at 1.8 GiB), and libuv
 * blocks the calling thread until the child has exec'd. `stowage up` with a thousand volumes is
 * such a process; the helper stays at Node's baseline, so every spawn stays cheap and off our
 * event loop. The helper exits when our end of its stdin closes (we exit, even by SIGKILL), and
 * only then: it ignores the SIGINT/SIGTERM a terminal's Ctrl-C sends the whole process group, so
 * our shutdown can still run commands and nothing reports a helper that died unasked.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { newLogger } from '../util/log.js';

const log = newLogger('mount/spawner');

/** What running one program produced, in the terms execFile reports. */
export interface ExecResult {
  readonly stdout: string;
  readonly stderr: string;
  /** Exit code; null when killed or not started. */
  readonly exitCode: number | null;
  /** Why the program could not be started (ENOENT, EACCES…), if it could not. */
  readonly errno: string | null;
  readonly signal: string | null;
  /** Killed on timeout. */
  readonly killed: boolean;
  /** The helper died while the program ran: it may or may not have done its work. */
  readonly lost?: boolean;
}

export const execOk = (r: ExecResult): boolean =>
  r.exitCode === 0 && r.errno === null && r.signal === null && !r.killed && !r.lost;

interface Request {
  readonly id: number;
  readonly command: string;
  readonly args: readonly string[];
  readonly timeoutMs: number;
}

/** The helper's program (plain JS, run with `node -e`, so it needs no file of its own). */
const HELPER_SOURCE = `
const { execFile } = require('node:child_process');
const readline = require('node:readline');
const out = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
process.on('SIGINT', () => {});
process.on('SIGTERM', () => {});
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  let r;
  try { r = JSON.parse(line); } catch { return; }
  execFile(r.command, r.args, { timeout: r.timeoutMs, killSignal: 'SIGKILL', encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
    const e = err || {};
    out({ id: r.id, stdout: stdout || '', stderr: stderr || '',
      exitCode: err ? (typeof e.code === 'number' ? e.code : null) : 0,
      errno: typeof e.code === 'string' ? e.code : null,
      signal: e.signal || null, killed: !!e.killed });
  });
}).on('close', () => process.exit(0));
`;

/** Runs a program directly with execFile (the fallback, and what the helper does on its side). */
export function execDirect(command: string, args: readonly string[], timeoutMs: number): Promise<ExecResult> {
  return new Promise((resolve) => {
    execFile(
      command,
      [...args],
      { timeout: timeoutMs, killSignal: 'SIGKILL', encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const e = (err ?? {}) as NodeJS.ErrnoException & { code?: unknown; killed?: boolean; signal?: string | null };
        resolve({
          stdout: stdout ?? '',
          stderr: stderr ?? '',
          exitCode: err ? (typeof e.code === 'number' ? e.code : null) : 0,
          errno: typeof e.code === 'string' ? e.code : null,
          signal: e.signal ?? null,
          killed: e.killed === true,
        });
      },
    );
  });
}

interface Pending {
  readonly req: Request;
  readonly resolve: (r: ExecResult) => void;
  readonly timer: NodeJS.Timeout;
}

/** Extra time the helper gets beyond a command's own timeout before we stop waiting for it. */
const HELPER_GRACE_MS = 10_000;

export class Spawner {
  private child: ChildProcess | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private buffered = '';
  /** Set after the helper could not be started: run directly from then on. */
  private broken = false;

  run(command: string, args: readonly string[], timeoutMs: number): Promise<ExecResult> {
    const child = this.broken ? undefined : this.helper();
    if (!child) return execDirect(command, args, timeoutMs);
    const req: Request = { id: this.nextId++, command, args: [...args], timeoutMs };
    return new Promise<ExecResult>((resolve) => {
      // The helper kills the program at timeoutMs; this only covers a helper that stopped answering.
      const timer = setTimeout(
        () =>
          this.settle(req.id, {
            stdout: '',
            stderr: 'no answer from the spawner helper',
            exitCode: null,
            errno: null,
            signal: 'SIGKILL',
            killed: true,
          }),
        timeoutMs + HELPER_GRACE_MS,
      );
      timer.unref();
      this.pending.set(req.id, { req, resolve, timer });
      this.setRef(true);
      child.stdin!.write(JSON.stringify(req) + '\n');
    });
  }

  /** Stops the helper (tests; it also stops by itself when this process exits). */
  close(): void {
    this.child?.stdin?.end();
    this.child = undefined;
  }

  private helper(): ChildProcess | undefined {
    if (this.child) return this.child;
    let child: ChildProcess;
    try {
      child = spawn(process.execPath, ['-e', HELPER_SOURCE], { stdio: ['pipe', 'pipe', 'inherit'], env: process.env });
    } catch (err) {
      this.broken = true;
      log.warn('cannot start the spawner helper; running commands directly', { error: String(err) });
      return undefined;
    }
    this.child = child;
    // A write to a helper that just died fails with EPIPE; its exit handler re-runs what was pending.
    child.stdin!.on('error', () => undefined);
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => this.onData(chunk));
    let started = false;
    child.once('spawn', () => (started = true));
    child.on('error', (err) => {
      if (started) return; // the exit handler follows
      // Could not be started at all: nothing reached it, so run what is pending (and later) directly.
      this.broken = true;
      log.warn('cannot start the spawner helper; running commands directly', { error: String(err) });
      this.dropHelper(child, (p) => void execDirect(p.req.command, p.req.args, p.req.timeoutMs).then(p.resolve));
    });
    child.on('exit', (code, signal) => {
      if (this.child === child)
        log.warn('spawner helper exited; a new one starts with the next command', { code, signal });
      // What it was running may have happened or not; running it again could mount twice. Report
      // it as failed: callers' operations are idempotent and retried.
      this.dropHelper(child, (p) =>
        p.resolve({ stdout: '', stderr: '', exitCode: null, errno: null, signal: null, killed: false, lost: true }),
      );
    });
    child.unref();
    this.setRef(this.pending.size > 0);
    return child;
  }

  private dropHelper(child: ChildProcess, settle: (p: Pending) => void): void {
    if (this.child === child) this.child = undefined;
    const left = [...this.pending.values()];
    this.pending.clear();
    for (const p of left) {
      clearTimeout(p.timer);
      settle(p);
    }
  }

  private onData(chunk: string): void {
    this.buffered += chunk;
    let nl: number;
    while ((nl = this.buffered.indexOf('\n')) >= 0) {
      const line = this.buffered.slice(0, nl);
      this.buffered = this.buffered.slice(nl + 1);
      let msg: ExecResult & { id: number };
      try {
        msg = JSON.parse(line) as ExecResult & { id: number };
      } catch {
        continue;
      }
      const { id, stdout, stderr, exitCode, errno, signal, killed } = msg;
      this.settle(id, { stdout, stderr, exitCode, errno, signal, killed });
    }
  }

  private settle(id: number, r: ExecResult): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    if (this.pending.size === 0) this.setRef(false);
    p.resolve(r);
  }

  /** The helper keeps this process alive only while it has work for us. */
  private setRef(on: boolean): void {
    const c = this.child;
    if (!c) return;
    for (const s of [c.stdin, c.stdout] as Array<Socket | null>) {
      if (!s) continue;
      if (on) s.ref();
      else s.unref();
    }
  }
}
