/**
 * The SQLite store: a write acknowledged is a write kept when the process holding the store is
 * killed with SIGKILL (a real child process, a real kill, at several moments of a write burst).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteStore, type Synchronous } from '../src/store/sqlite.js';

const HOOKS = pathToFileURL(fileURLToPath(new URL('./csi-registration.ts-hooks.mjs', import.meta.url))).href;
const CHILD = fileURLToPath(new URL('./store-sigkill.child.ts', import.meta.url));

describe('sqlite store killed with SIGKILL while writing', () => {
  const dir = mkdtempSync(join(tmpdir(), 'stowage-store-kill-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Runs the writer child on `path`, SIGKILLs it once `killAfter` writes were acknowledged; returns every key it acknowledged. */
  const writeAndKill = (
    path: string,
    life: string,
    synchronous: Synchronous,
    killAfter: number,
  ): Promise<{ acked: string[]; signal: NodeJS.Signals | null }> =>
    new Promise((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [
          '--import',
          `data:text/javascript,import{register}from"node:module";register(${JSON.stringify(HOOKS)});`,
          CHILD,
          path,
          life,
          synchronous,
        ],
        {
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let out = '';
      let err = '';
      child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
      child.stdout!.on('data', (b: Buffer) => {
        out += b.toString();
        // Killed in the same turn the count is seen: writes are in flight at that instant.
        if (child.signalCode === null && out.split('\n').length - 1 >= killAfter) child.kill('SIGKILL');
      });
      child.once('error', reject);
      // 'close': stdout is drained, so every key the child printed before it died is counted.
      child.once('close', (code, signal) => {
        if (signal === null) reject(new Error(`writer exited ${code} before it was killed: ${err}`));
        else resolve({ acked: out.split('\n').filter((l) => l !== ''), signal });
      });
    });

  it.each([
    { synchronous: 'NORMAL', killAfter: 1 },
    { synchronous: 'NORMAL', killAfter: 500 },
    { synchronous: 'FULL', killAfter: 300 },
  ] as const)(
    'synchronous=$synchronous: every write acknowledged before a SIGKILL after $killAfter acks is there after reopening',
    async ({ synchronous, killAfter }) => {
      const path = join(dir, `kill-${synchronous}-${killAfter}.sqlite`);
      const first = await writeAndKill(path, 'first', synchronous, killAfter);
      expect(first.signal).toBe('SIGKILL');
      expect(first.acked.length).toBeGreaterThanOrEqual(killAfter);
      // A second life on the same file after the kill, killed again: both lives' writes are kept.
      const second = await writeAndKill(path, 'second', synchronous, killAfter);
      expect(second.signal).toBe('SIGKILL');
      const acked = [...first.acked, ...second.acked];

      const store = openSqliteStore({ path });
      try {
        const missing: string[] = [];
        for (const key of acked) {
          const kv = await store.get(key);
          if (kv?.value !== `value of ${key}`) missing.push(key);
        }
        expect(missing, 'acknowledged writes lost').toEqual([]);
      } finally {
        await store.close();
      }
    },
    60_000,
  );
});
