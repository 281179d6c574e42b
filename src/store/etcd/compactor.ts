/**
 * Periodic compaction as kube-apiserver does it (storage/etcd3/compact.go): every interval, compact
 * to the revision seen one interval earlier, so at least one interval of history stays watchable.
 * Several API servers on one etcd agree through the version of `compact_rev_key`: only the one
 * whose transaction bumps it compacts, so the cluster compacts once per interval, not once per server.
 */
import { newLogger } from '../../util/log.js';
import type { EtcdClient } from './client.js';

export const COMPACT_REV_KEY = 'compact_rev_key';
const log = newLogger('store/etcd/compactor');

export interface Compactor {
  stop(): void;
}

/**
 * One round: `expectedVersion` is the key's version this server last saw, `rev` the revision to
 * compact to (0 = only record). Returns the version and revision to use next round.
 */
export async function compactRound(
  client: EtcdClient,
  expectedVersion: number,
  rev: number,
): Promise<{ version: number; rev: number; compacted: boolean }> {
  const r = await client.txnVersion(COMPACT_REV_KEY, expectedVersion, String(rev));
  if (!r.succeeded) return { version: r.version, rev: r.revision, compacted: false };
  if (rev === 0) return { version: expectedVersion + 1, rev: r.revision, compacted: false };
  await client.compact(rev);
  return { version: expectedVersion + 1, rev: r.revision, compacted: true };
}

export function startCompactor(o: {
  client: EtcdClient;
  intervalMs: number;
  onCompacted: (rev: number) => void;
}): Compactor {
  let version = 0;
  let rev = 0;
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    const target = rev;
    compactRound(o.client, version, target)
      .then((next) => {
        version = next.version;
        rev = next.rev;
        if (next.compacted) o.onCompacted(target);
      })
      .catch((e: unknown) => log.warn(`compaction to ${target} failed: ${e instanceof Error ? e.message : String(e)}`))
      .finally(() => (running = false));
  }, o.intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
