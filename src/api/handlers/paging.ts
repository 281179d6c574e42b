/**
 * Paged lists (`limit` + `continue`), two ways: from the watch cache (the current revision) and from
 * the store (an exact older revision, or a continued list whose revision the cache has moved past).
 */
import type { Store } from '../../store/store.js';
import { ExpiredError } from '../../util/errors.js';
import { badRequest, expired } from '../status.js';
import { decodeStored, type CachedObject, type ObjectTransform } from '../watchcache.js';
import type { Selection } from './request.js';

/** Where a continued list resumes: the revision it reads at and the last key it returned. */
export interface ContinueToken {
  readonly rv: number;
  readonly start: string;
}

export function encodeContinue(t: ContinueToken): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: t.rv, start: t.start })).toString('base64url');
}

export function decodeContinue(s: string): ContinueToken {
  try {
    const o = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as { rv?: unknown; start?: unknown };
    if (typeof o.rv === 'number' && typeof o.start === 'string') return { rv: o.rv, start: o.start };
  } catch {
    // not base64 JSON: the same refusal as a token of the wrong shape
  }
  throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
}

/** One page: its objects, the key to continue after (when more may follow) and, when known, how many are left. */
export interface Page {
  readonly items: CachedObject[];
  readonly next?: string;
  readonly remaining?: number;
}

/** A page of `all` (sorted by key) after `startAfter`; limit 0 = everything. */
export function pageFromCache(all: readonly CachedObject[], sel: Selection, startAfter: string, limit: number): Page {
  const items: CachedObject[] = [];
  let i = 0;
  if (startAfter) {
    let lo = 0;
    let hi = all.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (all[mid]!.key <= startAfter) lo = mid + 1;
      else hi = mid;
    }
    i = lo;
  }
  for (; i < all.length; i++) {
    const c = all[i]!;
    if (!sel.everything && !sel.matches(c.obj)) continue;
    items.push(c);
    if (limit && items.length === limit) {
      if (i + 1 < all.length) return { items, next: c.key, remaining: sel.everything ? all.length - i - 1 : undefined };
      break;
    }
  }
  return { items };
}

/** A page read from the store at `revision`; a compacted revision is 410 Expired. */
export async function pageFromStore(
  store: Store,
  prefix: string,
  revision: number,
  sel: Selection,
  startAfter: string,
  limit: number,
  transform?: ObjectTransform,
): Promise<Page> {
  const items: CachedObject[] = [];
  try {
    for (;;) {
      const page = await store.list(prefix, {
        revision,
        startAfter: startAfter || undefined,
        limit: limit ? Math.max(limit, 500) : 0,
      });
      for (const kv of page.items) {
        const c = decodeStored(kv, kv.modRevision, transform);
        startAfter = kv.key;
        if (!sel.everything && !sel.matches(c.obj)) continue;
        items.push(c);
        if (limit && items.length === limit) break;
      }
      if (limit !== 0 && items.length === limit) {
        const last = items[items.length - 1]!.key;
        const more =
          page.items.length && page.items[page.items.length - 1]!.key !== last ? true : page.continueKey !== undefined;
        return { items, next: more ? last : undefined };
      }
      if (!page.continueKey) return { items };
    }
  } catch (e) {
    if (e instanceof ExpiredError) {
      throw expired(
        'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
      );
    }
    throw e;
  }
}
