/**
 * `stowage node`, the hostpath driver and the registrar, each its own process (as on a real host),
 * against an in-process API server.
 */
import { describe, it, expect, beforeEach, afterEach, vi } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Node } from 'kubernetes-types/core/v1.js';
import { startTestApiServer, type TestApiServer } from '../src/cli/testing.test-kit.js';
import { RestClient } from '../src/client/rest.js';
import { NotFoundError } from '../src/util/errors.js';

const HOOKS = pathToFileURL(fileURLToPath(new URL('./csi-registration.ts-hooks.mjs', import.meta.url))).href;
const CHILD = fileURLToPath(new URL('./pluginmanager.child.ts', import.meta.url));
const NODE = 'node-proc';
const HP = 'hostpath.csi.stowage.io';
const WAIT = { timeout: 30_000, interval: 50 };

interface Child {
  proc: ChildProcess;
  stderr: () => string;
  waitFor: (re: RegExp) => Promise<void>;
  exit: Promise<number | null>;
}

const children: ChildProcess[] = [];
function spawnStowage(args: string[]): Child {
  const proc = spawn(
    process.execPath,
    [
      '--import',
      `data:text/javascript,import{register}from"node:module";register(${JSON.stringify(HOOKS)});`,
      CHILD,
      ...args,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, STOWAGE_LOG_LEVEL: 'info' } },
  );
  children.push(proc);
  let err = '';
  const waiters: Array<{ re: RegExp; resolve: () => void }> = [];
  proc.stderr?.on('data', (b: Buffer) => {
    err += b.toString();
    for (const w of waiters.splice(0)) w.re.test(err) ? w.resolve() : waiters.push(w);
  });
  const exit = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return {
    proc,
    stderr: () => err,
    waitFor: (re) =>
      new Promise<void>((resolve, reject) => {
        if (re.test(err)) return resolve();
        waiters.push({ re, resolve });
        void exit.then((code) => reject(new Error(`child exited (${code}) before ${re}: ${err}`)));
      }),
    exit,
  };
}

let dir: string;
let api: TestApiServer;
let client: RestClient;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'stowage-pmproc-'));
  mkdirSync(join(dir, 'api'));
  api = await startTestApiServer({ dataDir: join(dir, 'api') });
  client = new RestClient({ server: api.baseUrl, token: api.token, caPem: api.caPem });
});
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  client.close();
  await api.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('stowage node as its own process', () => {
  it('registers a driver deployed with its registrar, deregisters it on SIGTERM of the registrar, and exits 0', async () => {
    const root = join(dir, 'node');
    const registry = join(root, 'plugins_registry');
    const node = spawnStowage([
      'node',
      '--kubeconfig',
      api.kubeconfigPath,
      '--node-name',
      NODE,
      '--root-dir',
      root,
      '--backoff-cap',
      '5s',
      '--port',
      '0',
    ]);
    await node.waitFor(/plugin manager started/);

    const hpSock = join(root, 'plugins', HP, 'csi.sock');
    const hostpath = spawnStowage([
      'csi-hostpath',
      '--endpoint',
      `unix://${hpSock}`,
      '--node-id',
      'proc-node',
      '--state-dir',
      join(dir, 'hp'),
    ]);
    await hostpath.waitFor(/listening/);
    const registrar = spawnStowage([
      'csi-registrar',
      '--csi-address',
      hpSock,
      '--kubelet-registration-path',
      hpSock,
      '--plugin-registration-path',
      registry,
    ]);

    await vi.waitFor(async () => {
      const csinode = await client
        .resource('CSINode')
        .get(NODE)
        .catch((e: unknown) => (e instanceof NotFoundError ? undefined : Promise.reject(e)));
      expect(csinode?.spec.drivers?.map((d) => [d.name, d.nodeID])).toEqual([[HP, 'proc-node']]);
    }, WAIT);
    await registrar.waitFor(/plugin registered by the kubelet/);
    const n: Node = await client.resource('Node').get(NODE);
    expect(JSON.parse(n.metadata?.annotations?.['csi.volume.kubernetes.io/nodeid'] ?? '{}')).toEqual({
      [HP]: 'proc-node',
    });
    expect(n.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');

    registrar.proc.kill('SIGTERM');
    expect(await registrar.exit).toBe(0);
    expect(existsSync(join(registry, `${HP}-reg.sock`))).toBe(false);
    await vi.waitFor(async () => {
      expect((await client.resource('CSINode').get(NODE)).spec.drivers ?? []).toEqual([]);
    }, WAIT);

    node.proc.kill('SIGTERM');
    expect(await node.exit).toBe(0);
    hostpath.proc.kill('SIGTERM');
    expect(await hostpath.exit).toBe(0);
  }, 120_000); // three child processes transpiling TypeScript at start-up: slow on a loaded machine
});
