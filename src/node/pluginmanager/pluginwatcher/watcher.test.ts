import { describe, it, expect, beforeEach, afterEach, vi } from 'vitest';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../../util/log.js';
import { newDesiredStateOfWorld, type DesiredStateOfWorld } from '../cache/desired-state.js';
import { newPluginWatcher, type PluginWatcher } from './watcher.js';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };

let root: string;
let reg: string;
let dsw: DesiredStateOfWorld;
let watcher: PluginWatcher | undefined;
let changes = 0;
const removed: string[] = [];
const servers: Server[] = [];

function listen(p: string): Promise<void> {
  const s = createServer();
  servers.push(s);
  return new Promise((resolve, reject) => {
    s.once('error', reject);
    s.listen(p, () => resolve());
  });
}
const paths = (): string[] =>
  dsw
    .pluginsToRegister()
    .map((p) => p.socketPath)
    .sort();

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'stowage-watch-'));
  reg = join(root, 'plugins_registry');
  dsw = newDesiredStateOfWorld();
  changes = 0;
  removed.length = 0;
});
afterEach(async () => {
  watcher?.stop();
  watcher = undefined;
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  rmSync(root, { recursive: true, force: true });
});

async function start(): Promise<void> {
  watcher = newPluginWatcher({
    dir: reg,
    dsw,
    onChange: () => changes++,
    onRemoved: (p) => removed.push(p),
    rescanPeriodMs: 0,
    log: quiet,
  });
  await watcher.start();
}

describe('plugin watcher', () => {
  it('creates the registry dir and registers sockets already present, subdirectories included', async () => {
    mkdirSync(join(reg, 'sub', 'deeper'), { recursive: true });
    await listen(join(reg, 'a-reg.sock'));
    await listen(join(reg, 'sub', 'deeper', 'b-reg.sock'));
    await listen(join(reg, '.hidden-reg.sock'));
    writeFileSync(join(reg, 'not-a-socket'), 'x');
    mkdirSync(join(reg, '.dotdir'));
    await listen(join(reg, '.dotdir', 'c-reg.sock'));
    await start();
    expect(paths()).toEqual([join(reg, 'a-reg.sock'), join(reg, 'sub', 'deeper', 'b-reg.sock')]);
    expect(changes).toBeGreaterThan(0);
  });

  it('creates a missing registry dir', async () => {
    await start();
    expect(existsSync(reg)).toBe(true);
    expect(paths()).toEqual([]);
  });

  it('follows creation and deletion, and a re-created socket gets a new timestamp', async () => {
    await start();
    const a = join(reg, 'a-reg.sock');
    await listen(a);
    writeFileSync(join(reg, 'plain-file'), 'x');
    await listen(join(reg, '.ignored.sock'));
    await vi.waitFor(() => expect(paths()).toEqual([a]));
    const t1 = dsw.pluginsToRegister()[0]?.timestamp ?? 0;

    await new Promise((r) => servers[0]?.close(r));
    if (existsSync(a)) unlinkSync(a);
    await vi.waitFor(() => expect(paths()).toEqual([]));
    expect(removed).toEqual([a]);

    await listen(a);
    await vi.waitFor(() => expect(paths()).toEqual([a]));
    expect(dsw.pluginsToRegister()[0]?.timestamp).toBeGreaterThan(t1);
  });

  it('a chmod of a known socket is not a re-creation', async () => {
    await start();
    const a = join(reg, 'a-reg.sock');
    await listen(a);
    await vi.waitFor(() => expect(paths()).toEqual([a]));
    const t1 = dsw.pluginsToRegister()[0]?.timestamp;
    chmodSync(a, 0o600);
    // A second, later socket is our barrier: once it is seen, the chmod event was handled too.
    const b = join(reg, 'b-reg.sock');
    await listen(b);
    await vi.waitFor(() => expect(paths()).toEqual([a, b]));
    expect(dsw.pluginsToRegister().find((p) => p.socketPath === a)?.timestamp).toBe(t1);
  });

  it('walks and watches a new subdirectory; removing it removes its sockets', async () => {
    await start();
    const sub = join(reg, 'vendor');
    mkdirSync(sub);
    const b = join(sub, 'b-reg.sock');
    await vi.waitFor(async () => {
      if (!existsSync(b)) await listen(b); // the directory watch may not be set up yet: retry until seen
      expect(paths()).toEqual([b]);
    });
    const c = join(sub, 'c-reg.sock');
    await listen(c);
    await vi.waitFor(() => expect(paths()).toEqual([b, c]));
    await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
    rmSync(sub, { recursive: true, force: true });
    await vi.waitFor(() => expect(paths()).toEqual([]));
  });

  it('rescan corrects the desired state without events', async () => {
    await start();
    watcher?.stop(); // no more events: only rescan can notice
    const a = join(reg, 'a-reg.sock');
    await listen(a);
    await watcher?.rescan();
    expect(paths()).toEqual([a]);
    await new Promise((r) => servers[0]?.close(r));
    if (existsSync(a)) unlinkSync(a);
    await watcher?.rescan();
    expect(paths()).toEqual([]);
  });
});
