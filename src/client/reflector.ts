import { backoffDelay, realClock, type BackoffPolicy, type Clock } from '../util/backoff.js';
import { ExpiredError, toStowageError } from '../util/errors.js';
import { newLogger, type Logger } from '../util/log.js';
import type { KubeObjectLike, ObjectList, ResourceClient, SelectorOptions } from './rest.js';
import type { WatchEvent } from './watch.js';

/** The two calls a reflector needs; a ResourceClient bound to a namespace and selectors provides them. */
export interface ListerWatcher<T> {
  list(opts: {
    limit?: number;
    continue?: string;
    resourceVersion?: string;
    signal?: AbortSignal;
  }): Promise<ObjectList<T>>;
  watch(opts: {
    resourceVersion: string;
    allowWatchBookmarks: boolean;
    timeoutSeconds?: number;
    signal?: AbortSignal;
  }): AsyncIterable<WatchEvent<T>>;
}

/** A ListerWatcher over one kind, optionally limited to a namespace and label/field selectors. */
export function listerWatcherFor<T extends KubeObjectLike>(
  rc: ResourceClient<T>,
  scope: SelectorOptions & { namespace?: string } = {},
): ListerWatcher<T> {
  return {
    list: (o) => rc.list({ ...scope, ...o }),
    watch: (o) => rc.watch({ ...scope, ...o }),
  };
}

/** Where a reflector delivers what it sees. */
export interface ReflectorSink<T> {
  /** The complete current state, after a (re)list. */
  replace(items: T[], resourceVersion: string): void;
  added(obj: T): void;
  modified(obj: T): void;
  deleted(obj: T): void;
}

export interface ReflectorOptions<T> {
  readonly lw: ListerWatcher<T>;
  readonly sink: ReflectorSink<T>;
  readonly name?: string;
  readonly clock?: Clock;
  readonly log?: Logger;
  /** Retry policy after failed lists/watches. */
  readonly backoff?: BackoffPolicy;
  /** List page size; client-go's reflector uses 500. */
  readonly pageSize?: number;
  /** Server-side watch timeout; client-go picks 5–10 min at random so watches don't end in step. */
  readonly watchTimeoutSeconds?: () => number;
}

// client-go's reflector backs off 800 ms initially, doubling to 30 s.
export const REFLECTOR_BACKOFF: BackoffPolicy = { initialMs: 800, factor: 2, capMs: 30_000 };

/**
 * List then watch, forever: watches resume from the last resourceVersion seen (events and
 * bookmarks), a 410 Expired relists, other failures retry with backoff.
 */
export class Reflector<T extends KubeObjectLike> {
  private lastRv = '';
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly backoff: BackoffPolicy;

  constructor(private readonly o: ReflectorOptions<T>) {
    this.clock = o.clock ?? realClock;
    this.log = o.log ?? newLogger(`reflector/${o.name ?? 'objects'}`);
    this.backoff = o.backoff ?? REFLECTOR_BACKOFF;
  }

  lastSyncResourceVersion(): string {
    return this.lastRv;
  }

  /** Runs until `signal` aborts. Never throws. */
  async run(signal: AbortSignal): Promise<void> {
    let failures = 0;
    while (!signal.aborted) {
      try {
        await this.listAll(signal);
        const progressed = await this.watchUntilExpired(signal);
        if (signal.aborted) break;
        // Relist at once after a watch that made progress; a list whose watch expires straight
        // away (a server with too little history) must not spin, so it backs off like a failure.
        if (progressed) {
          failures = 0;
          continue;
        }
        failures++;
      } catch (e) {
        if (signal.aborted) break;
        failures++;
        this.log.warn('list failed; retrying', {
          error: toStowageError(e).message,
          retryInMs: backoffDelay(this.backoff, failures),
        });
      }
      await this.clock.sleep(backoffDelay(this.backoff, failures), signal).catch(() => undefined);
    }
  }

  private async listAll(signal: AbortSignal): Promise<void> {
    const items: T[] = [];
    let cont: string | undefined;
    let rv = '';
    do {
      // Pages after the first are read at the first page's snapshot (the continue token carries it).
      const page = await this.o.lw.list({ limit: this.o.pageSize ?? 500, continue: cont, signal });
      if (!cont) rv = page.metadata.resourceVersion ?? '';
      for (const item of page.items) items.push(withTypeMeta(item, page));
      cont = page.metadata.continue || undefined;
    } while (cont);
    if (signal.aborted) return;
    this.lastRv = rv;
    this.o.sink.replace(items, rv);
  }

  /**
   * Returns when the watch history expired (relist needed) or on abort; true when at least one
   * event (bookmarks included) arrived since the list.
   */
  private async watchUntilExpired(signal: AbortSignal): Promise<boolean> {
    let failures = 0;
    let progressed = false;
    while (!signal.aborted) {
      let events = 0;
      try {
        const timeoutSeconds = this.o.watchTimeoutSeconds?.() ?? Math.floor(300 + Math.random() * 300);
        const stream = this.o.lw.watch({
          resourceVersion: this.lastRv,
          allowWatchBookmarks: true,
          timeoutSeconds,
          signal,
        });
        for await (const ev of abortable(stream, signal)) {
          if (ev.type === 'ERROR') throw ev.error;
          events++;
          failures = 0;
          progressed = true;
          switch (ev.type) {
            case 'ADDED':
              this.o.sink.added(ev.object);
              break;
            case 'MODIFIED':
              this.o.sink.modified(ev.object);
              break;
            case 'DELETED':
              this.o.sink.deleted(ev.object);
              break;
            case 'BOOKMARK':
              break;
          }
          const rv = ev.object.metadata?.resourceVersion;
          if (rv) this.lastRv = rv;
        }
        if (events > 0 || signal.aborted) continue;
        // An empty watch that ended at once would otherwise spin; treat it as a failure.
        failures++;
      } catch (e) {
        if (signal.aborted) return progressed;
        if (e instanceof ExpiredError) {
          this.log.info('watch history expired; relisting', { resourceVersion: this.lastRv });
          return progressed;
        }
        failures++;
        this.log.warn('watch failed; resuming', { error: toStowageError(e).message, resourceVersion: this.lastRv });
      }
      await this.clock.sleep(backoffDelay(this.backoff, failures), signal).catch(() => undefined);
    }
    return progressed;
  }
}

/** List items arrive without kind/apiVersion (the list carries them): restore them from the list. */
function withTypeMeta<T extends KubeObjectLike>(item: T, list: ObjectList<T>): T {
  if (item.kind && item.apiVersion) return item;
  const kind = item.kind ?? (list.kind?.endsWith('List') ? list.kind.slice(0, -4) : undefined);
  const apiVersion = item.apiVersion ?? list.apiVersion;
  return { ...item, ...(kind ? { kind } : {}), ...(apiVersion ? { apiVersion } : {}) };
}

/**
 * Iterates `src` until it ends or `signal` aborts, whichever is first: a stream that ignores the
 * signal (or a server that stops talking) cannot hold the reflector past shutdown.
 */
async function* abortable<E>(src: AsyncIterable<E>, signal: AbortSignal): AsyncGenerator<E, void, undefined> {
  if (signal.aborted) return;
  const it = src[Symbol.asyncIterator]();
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<'aborted'>((resolve) => {
    onAbort = () => resolve('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    for (;;) {
      const r = await Promise.race([it.next(), aborted]);
      if (r === 'aborted' || r.done) return;
      yield r.value;
    }
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
    void it.return?.()?.catch(() => undefined);
  }
}
