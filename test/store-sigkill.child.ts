/**
 * Entry point for test/store-sigkill.test.ts: opens the SQLite store at <path> and writes keys
 * from 8 concurrent writers as fast as it can (so writes share group commits), printing each key
 * once its write was acknowledged, until killed. Usage: node --import <hooks> test/store-sigkill.child.ts <path> <life> <NORMAL|FULL>
 */
import { openSqliteStore, type Synchronous } from '../src/store/sqlite.js';

const [path, life, synchronous] = process.argv.slice(2) as [string, string, Synchronous];
const store = openSqliteStore({ path, synchronous });
await Promise.all(
  Array.from({ length: 8 }, async (_, w) => {
    for (let i = 0; ; i++) {
      const key = `/acked/${life}/w${w}/${i}`;
      await store.create(key, `value of ${key}`);
      process.stdout.write(`${key}\n`);
    }
  }),
);
