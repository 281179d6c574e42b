import { watch, type BigIntStats, type FSWatcher } from 'node:fs';
import { lstat, mkdir, readdir } from 'node:fs/promises';
import { basename, join, sep } from 'node:path';
import { realClock, type Clock } from '../../../util/backoff.js';
import { newLogger, type Logger } from '../../../util/log.js';
import { newLoop } from '../../../util/loop.js';
import type { DesiredStateOfWorld } from '../cache/desired-state.js';
import { socketPathOf } from '../cache/types.js';

/**
 * Keeps the desired state of world equal to the registration sockets under the registry dir:
 * walks it at start (sockets already there register without waiting for an event), then follows
 * inotify events, walking and watching new subdirectories. Names starting with '.' and anything
 * that is not a socket are ignored.
 */
export interface PluginWatcher {
  /** Creates the directory if missing, walks it and starts watching. Start once. */
  start(): Promise<void>;
  /** Walks again and corrects the desired state (a safety net for lost events). */
  rescan(): Promise<void>;
  stop(): void;
}

export interface PluginWatcherOptions {
  readonly dir: string;
  readonly dsw: DesiredStateOfWorld;
  /** The desired state changed: reconcile now. */
  readonly onChange: () => void;
  /** A socket left the desired state (its file is gone). */
  readonly onRemoved?: (socketPath: string) => void;
  /** Walk again this often in case an event was lost; 0 disables. */
  readonly rescanPeriodMs?: number;
  readonly clock?: Clock;
  readonly log?: Logger;
}

// inotify does not lose events under normal load; the rescan only covers queue overflows.
export const DEFAULT_RESCAN_PERIOD_MS = 30_000;

export function newPluginWatcher(o: PluginWatcherOptions): PluginWatcher {
  return new Watcher(o);
}

class Watcher implements PluginWatcher {
  private readonly watchers = new Map<string, FSWatcher>();
  /**
   * Identity (inode and birth time) of each desired socket: an event for the same file (the
   * registrar's chmod right after bind, say) is not a re-creation and must not re-register it.
   */
  private readonly files = new Map<string, string>();
  private readonly log: Logger;
  private readonly stopped = new AbortController();
  private started = false;

  constructor(private readonly o: PluginWatcherOptions) {
    this.log = o.log ?? newLogger('pluginmanager/pluginwatcher');
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('plugin watcher already started');
    this.started = true;
    await mkdir(this.o.dir, { recursive: true, mode: 0o750 });
    await this.walk(this.o.dir);
    this.o.onChange();
    const period = this.o.rescanPeriodMs ?? DEFAULT_RESCAN_PERIOD_MS;
    if (period > 0) void this.rescanLoop(period);
  }

  stop(): void {
    this.stopped.abort();
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }

  async rescan(): Promise<void> {
    const before = new Set(this.files.keys());
    const seen = new Set<string>();
    await this.walk(this.o.dir, seen);
    let changed = false;
    for (const p of before) {
      if (!seen.has(p)) {
        this.remove(p);
        changed = true;
      }
    }
    if (changed || seen.size !== before.size) this.o.onChange();
  }

  private async rescanLoop(period: number): Promise<void> {
    const loop = newLoop({
      name: 'plugin registry rescan',
      body: () => this.rescan(),
      periodMs: period,
      runAtStart: false,
      clock: this.o.clock ?? realClock,
      log: this.log,
    });
    await loop.run(this.stopped.signal);
  }

  /** Watches `dir`, then records every socket in it and recurses into subdirectories. */
  private async walk(dir: string, seen?: Set<string>): Promise<void> {
    if (!this.stopped.signal.aborted) this.watchDir(dir);
    let entries: string[];
    try {
      entries = await readdir(dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return; // removed while we walked
      throw e;
    }
    for (const name of entries) {
      if (ignored(name)) continue;
      const p = join(dir, name);
      const st = await lstat(p, { bigint: true }).catch(() => undefined);
      if (!st) continue;
      if (st.isDirectory()) await this.walk(p, seen);
      else if (st.isSocket()) {
        seen?.add(p);
        this.add(p, identity(st));
      }
    }
  }

  private watchDir(dir: string): void {
    if (this.watchers.has(dir)) return;
    try {
      const w = watch(dir, { persistent: false, encoding: 'utf8' }, (_type, name) => {
        if (name === null) void this.safely(() => this.walk(dir));
        else void this.safely(() => this.handle(join(dir, name)));
      });
      w.on('error', () => {
        // The directory went away (or inotify gave up on it): forget the watch so that a later
        // walk (an event in the parent, or the periodic rescan) can watch it again.
        w.close();
        if (this.watchers.get(dir) === w) this.watchers.delete(dir);
        this.unwatch(dir);
      });
      this.watchers.set(dir, w);
    } catch (e) {
      this.log.warn('cannot watch directory', { dir, error: String(e) });
    }
  }

  private async handle(p: string): Promise<void> {
    if (this.stopped.signal.aborted || ignored(basename(p))) return;
    const st = await lstat(p, { bigint: true }).catch(() => undefined);
    if (!st) {
      this.unwatch(p);
      let changed = false;
      for (const f of [...this.files.keys()]) {
        if (f === p || f.startsWith(p + sep)) {
          this.remove(f);
          changed = true;
        }
      }
      if (changed) this.o.onChange();
      return;
    }
    if (st.isDirectory()) {
      await this.walk(p);
      this.o.onChange();
    } else if (st.isSocket()) {
      if (this.add(p, identity(st))) this.o.onChange();
    }
  }

  /** Returns false when the same file was already recorded (a repeated event, not a re-creation). */
  private add(p: string, identity: string): boolean {
    if (this.files.get(p) === identity && this.o.dsw.isAdded(socketPathOf(p))) return false;
    this.files.set(p, identity);
    this.o.dsw.addOrUpdatePlugin(socketPathOf(p));
    this.log.debug('socket added', { socket: p });
    return true;
  }

  private remove(p: string): void {
    this.files.delete(p);
    this.o.dsw.removePlugin(socketPathOf(p));
    this.log.debug('socket removed', { socket: p });
    this.o.onRemoved?.(p);
  }

  private unwatch(dir: string): void {
    for (const [d, w] of this.watchers) {
      if (d === dir || d.startsWith(dir + sep)) {
        if (d === this.o.dir) continue; // the root stays watched; it is re-created by start only
        w.close();
        this.watchers.delete(d);
      }
    }
  }

  private async safely(f: () => Promise<void>): Promise<void> {
    try {
      await f();
    } catch (e) {
      this.log.warn('handling a registry event failed', { error: String(e) });
    }
  }
}

// Birth time where the filesystem records it (ext4, tmpfs, xfs...); the inode alone otherwise.
function identity(st: BigIntStats): string {
  return `${st.dev}:${st.ino}:${st.birthtimeNs}`;
}

function ignored(name: string): boolean {
  return name.startsWith('.');
}
