/**
 * The lease endpoint reconciler's record of live API servers: one key per advertise address, not
 * an API object, as upstream. The store key `/registry/core/masterleases/<ip>` follows the store's
 * `/registry/<group>/<plural>/` layout, so on etcd it is upstream's `<prefix>/masterleases/<ip>`.
 * Upstream gives each key an etcd TTL (15 s, renewed every 10 s); Stowage's stores have no TTL, so
 * the writer stores the expiry in the value and whoever lists drops keys past it. The expiry is
 * wall-clock time: servers sharing a store need clocks in step to well within the TTL.
 */
import type { Store } from '../../store/store.js';
import type { Clock } from '../../util/backoff.js';
import { AlreadyExistsError, ConflictError, NotFoundError } from '../../util/errors.js';

export const MASTER_LEASES_PREFIX = '/registry/core/masterleases/';

export interface MasterLeases {
  /** Addresses whose lease has not expired, sorted; expired leases are deleted on the way (nothing else is). */
  list(): Promise<string[]>;
  /** Creates or renews the lease of `ip` for the TTL from now. */
  update(ip: string): Promise<void>;
  /** Drops the lease of `ip`; absent is fine. */
  remove(ip: string): Promise<void>;
}

interface LeaseRecord {
  readonly ip: string;
  /** Milliseconds since the epoch. */
  readonly expiresAtMs: number;
}

function parseRecord(value: string): LeaseRecord | undefined {
  try {
    const v: unknown = JSON.parse(value);
    if (typeof v !== 'object' || v === null) return undefined;
    const { ip, expiresAtMs } = v as Record<string, unknown>;
    return typeof ip === 'string' && typeof expiresAtMs === 'number' ? { ip, expiresAtMs } : undefined;
  } catch {
    return undefined;
  }
}

const ignore =
  (...kinds: Array<new (...a: never[]) => Error>) =>
  (e: unknown): void => {
    if (!kinds.some((k) => e instanceof k)) throw e;
  };

export function newStoreMasterLeases(o: {
  readonly store: Store;
  readonly ttlMs: number;
  readonly clock: Pick<Clock, 'now'>;
}): MasterLeases {
  const { store } = o;
  return {
    async list() {
      const now = o.clock.now();
      const live: string[] = [];
      for (const kv of (await store.list(MASTER_LEASES_PREFIX)).items) {
        const r = parseRecord(kv.value);
        if (!r) continue; // not a lease: neither listed nor touched
        if (r.expiresAtMs > now) live.push(r.ip);
        // Compare-and-delete: a lease renewed meanwhile stays.
        else await store.delete(kv.key, kv.modRevision).catch(ignore(NotFoundError, ConflictError));
      }
      return live.sort();
    },
    async update(ip) {
      const key = MASTER_LEASES_PREFIX + ip;
      const value = JSON.stringify({ ip, expiresAtMs: o.clock.now() + o.ttlMs } satisfies LeaseRecord);
      // Another writer of the same key (a restarted server) is the only race: the last write wins.
      for (let attempt = 0; ; attempt++) {
        try {
          const cur = await store.get(key);
          await (cur ? store.update(key, value, cur.modRevision) : store.create(key, value));
          return;
        } catch (e) {
          if (
            attempt >= 2 ||
            !(e instanceof ConflictError || e instanceof AlreadyExistsError || e instanceof NotFoundError)
          )
            throw e;
        }
      }
    },
    async remove(ip) {
      await store.delete(MASTER_LEASES_PREFIX + ip).catch(ignore(NotFoundError));
    },
  };
}
