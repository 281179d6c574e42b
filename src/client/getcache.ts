/**
 * Objects fetched one at a time with GET and kept for a while: the kubelet's way of reading what
 * the Node authorizer lets a node only get (the claims, volumes, secrets and configmaps of its own
 * pods, the VolumeAttachments for it), where a cluster-wide list and watch would be refused.
 */
import type { Clock } from '../util/backoff.js';
import { NotFoundError } from '../util/errors.js';
import type { Logger } from '../util/log.js';

export interface GetCache<T> {
  /**
   * The object as last fetched (undefined before the first answer or when absent). Asking for an
   * object follows it: it is fetched again when its answer is older than the cache's TTL.
   */
  get(namespace: string | undefined, name: string): T | undefined;
  /** True when every object asked for since the last forgetUnused has had an answer. */
  hasSynced(): boolean;
  /** Drops the objects nobody asked for since the previous call. */
  forgetUnused(): void;
}

interface Entry<T> {
  value: T | undefined;
  answered: boolean;
  fetchedAt: number;
  inFlight: boolean;
  used: boolean;
}

export interface GetCacheOptions<T> {
  /** What is cached, for logs. */
  readonly kind: string;
  /** One GET; a NotFoundError means absent. */
  readonly fetch: (namespace: string | undefined, name: string, signal: AbortSignal) => Promise<T>;
  /** An answer older than this is fetched again when asked for. */
  readonly ttlMs: number;
  /** The same for an object found absent or refused, which is usually awaited: asked again sooner. */
  readonly absentTtlMs: number;
  readonly clock: Clock;
  /** Called when an answer differs from the previous one (a new resourceVersion, appeared or gone). */
  readonly onChange: () => void;
  readonly signal: AbortSignal;
  readonly log: Logger;
}

export function newGetCache<T extends { metadata?: { resourceVersion?: string } }>(o: GetCacheOptions<T>): GetCache<T> {
  const entries = new Map<string, Entry<T>>();

  const fetch = (key: string, e: Entry<T>, namespace: string | undefined, name: string): void => {
    e.inFlight = true;
    const settle = (value: T | undefined, known: boolean): void => {
      e.inFlight = false;
      e.fetchedAt = o.clock.now();
      if (!known) return; // a failed GET keeps the last answer; the next ask after the TTL retries
      const changed = !e.answered || e.value?.metadata?.resourceVersion !== value?.metadata?.resourceVersion;
      e.value = value;
      e.answered = true;
      if (changed && entries.get(key) === e) o.onChange();
    };
    o.fetch(namespace, name, o.signal).then(
      (v) => settle(v, true),
      (err: unknown) => {
        if (err instanceof NotFoundError) return settle(undefined, true);
        if (!o.signal.aborted)
          o.log.debug('get failed', { kind: o.kind, key, error: err instanceof Error ? err.message : String(err) });
        // Refused or unreachable: answered as unknown so that waiting on it does not hang.
        if (!e.answered) {
          e.answered = true;
          if (entries.get(key) === e) o.onChange();
        }
        settle(e.value, false);
      },
    );
  };

  return {
    get(namespace, name) {
      const key = `${namespace ?? ''}/${name}`;
      let e = entries.get(key);
      if (!e)
        entries.set(
          key,
          (e = { value: undefined, answered: false, fetchedAt: -Infinity, inFlight: false, used: true }),
        );
      e.used = true;
      const ttl = e.value === undefined ? o.absentTtlMs : o.ttlMs;
      if (!e.inFlight && !o.signal.aborted && o.clock.now() - e.fetchedAt >= ttl) fetch(key, e, namespace, name);
      return e.value;
    },
    hasSynced: () => [...entries.values()].every((e) => e.answered || !e.used),
    forgetUnused() {
      for (const [k, e] of entries) {
        if (!e.used) entries.delete(k);
        else e.used = false;
      }
    },
  };
}
