import { describe, expect, it, vi } from 'vitest';
import { ForbiddenError, NotFoundError } from '../util/errors.js';
import { newLogger } from '../util/log.js';
import { newGetCache } from './getcache.js';

interface Obj {
  metadata: { name: string; resourceVersion: string };
}

/** A cache over a store the test edits, on a clock the test moves; fetches settle when the test flushes. */
function setup() {
  let now = 0;
  const store = new Map<string, Obj | 'forbidden'>();
  const fetches: string[] = [];
  const onChange = vi.fn();
  const cache = newGetCache<Obj>({
    kind: 'Thing',
    fetch: async (ns, name) => {
      fetches.push(`${ns ?? ''}/${name}`);
      const v = store.get(`${ns ?? ''}/${name}`);
      if (v === 'forbidden') throw new ForbiddenError('no relationship');
      if (!v) throw new NotFoundError('not found');
      return structuredClone(v);
    },
    ttlMs: 5_000,
    absentTtlMs: 500,
    clock: { now: () => now, sleep: () => Promise.resolve() },
    onChange,
    signal: new AbortController().signal,
    log: newLogger('test'),
  });
  const flush = (): Promise<void> => new Promise((r) => setImmediate(r));
  return { cache, store, fetches, onChange, flush, advance: (ms: number) => (now += ms) };
}
const obj = (name: string, rv: string): Obj => ({ metadata: { name, resourceVersion: rv } });

describe('GET cache', () => {
  it('answers after the first fetch, refetches only after the TTL, and reports changes', async () => {
    const s = setup();
    s.store.set('ns/a', obj('a', '1'));
    expect(s.cache.get('ns', 'a')).toBeUndefined();
    expect(s.cache.hasSynced()).toBe(false);
    await s.flush();
    expect(s.cache.hasSynced()).toBe(true);
    expect(s.cache.get('ns', 'a')).toEqual(obj('a', '1'));
    expect(s.onChange).toHaveBeenCalledTimes(1);
    s.store.set('ns/a', obj('a', '2'));
    s.advance(4_999);
    expect(s.cache.get('ns', 'a')?.metadata.resourceVersion).toBe('1');
    expect(s.fetches).toEqual(['ns/a']);
    s.advance(1);
    s.cache.get('ns', 'a');
    await s.flush();
    expect(s.cache.get('ns', 'a')?.metadata.resourceVersion).toBe('2');
    expect(s.onChange).toHaveBeenCalledTimes(2);
    // The same answer again is no change.
    s.advance(5_000);
    s.cache.get('ns', 'a');
    await s.flush();
    expect(s.onChange).toHaveBeenCalledTimes(2);
  });

  it('an absent or refused object is answered (undefined) and asked again after the shorter TTL', async () => {
    const s = setup();
    s.store.set('ns/f', 'forbidden');
    expect(s.cache.get('ns', 'gone')).toBeUndefined();
    expect(s.cache.get('ns', 'f')).toBeUndefined();
    await s.flush();
    expect(s.cache.hasSynced()).toBe(true);
    s.store.set('ns/gone', obj('gone', '5'));
    s.advance(500);
    s.cache.get('ns', 'gone');
    await s.flush();
    expect(s.cache.get('ns', 'gone')?.metadata.resourceVersion).toBe('5');
  });

  it('forgets what nobody asked for since the last pass', async () => {
    const s = setup();
    s.store.set('ns/a', obj('a', '1'));
    s.cache.get('ns', 'a');
    await s.flush();
    s.cache.forgetUnused(); // asked in this pass: kept
    s.cache.forgetUnused(); // not asked since: dropped
    s.advance(1);
    expect(s.cache.get('ns', 'a')).toBeUndefined(); // fetched again from scratch
    expect(s.fetches).toEqual(['ns/a', 'ns/a']);
  });
});
