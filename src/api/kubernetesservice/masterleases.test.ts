import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../store/sqlite.js';
import type { Store } from '../../store/store.js';
import { toEtcdKey } from '../../store/etcd/keys.js';
import { MASTER_LEASES_PREFIX, newStoreMasterLeases } from './masterleases.js';

describe('master leases in the store', () => {
  let store: Store;
  afterEach(async () => store.close());

  it('lists live addresses sorted, drops (and deletes) expired ones, renews and removes', async () => {
    store = openSqliteStore({ path: ':memory:' });
    let now = 1_000_000;
    const clock = { now: () => now };
    const leases = newStoreMasterLeases({ store, ttlMs: 15_000, clock });
    await leases.update('10.0.0.2');
    now += 5_000;
    await leases.update('10.0.0.1');
    expect(await leases.list()).toEqual(['10.0.0.1', '10.0.0.2']);
    now += 10_000; // 10.0.0.2 written 15 s ago: expired
    expect(await leases.list()).toEqual(['10.0.0.1']);
    expect((await store.list(MASTER_LEASES_PREFIX)).items.map((kv) => kv.key)).toEqual([
      `${MASTER_LEASES_PREFIX}10.0.0.1`,
    ]);
    now += 14_000;
    await leases.update('10.0.0.1'); // renewed just in time
    now += 14_000;
    expect(await leases.list()).toEqual(['10.0.0.1']);
    await leases.remove('10.0.0.1');
    await leases.remove('10.0.0.1'); // absent is fine
    expect(await leases.list()).toEqual([]);
  });

  it('a value that is not a lease record is neither listed nor deleted', async () => {
    store = openSqliteStore({ path: ':memory:' });
    await store.create(`${MASTER_LEASES_PREFIX}10.0.0.3`, 'garbage');
    expect(await newStoreMasterLeases({ store, ttlMs: 15_000, clock: { now: () => 0 } }).list()).toEqual([]);
    expect(await store.count(MASTER_LEASES_PREFIX)).toBe(1);
  });

  it("keys live where the store layout puts upstream's: `<etcd prefix>/masterleases/<ip>` on etcd, apart from every API object", () => {
    expect(toEtcdKey('/registry', `${MASTER_LEASES_PREFIX}10.0.0.1`)).toBe('/registry/masterleases/10.0.0.1');
    expect(toEtcdKey('/registry', MASTER_LEASES_PREFIX)).toBe('/registry/masterleases/');
  });
});
