/**
 * End-to-end plugin registration: a CSI driver on a unix socket, our registrar in-process, and a
 * test client doing what the kubelet's plugin watcher does.
 */
import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CsiClient, RegistrationClient } from '../src/csi/client.js';
import { runRegistrar } from '../src/csi/registrar/registrar.js';
import { EmptyDriverNameError, RegistrationRefusedError } from '../src/csi/registrar/errors.js';
import { startFakeDriver, handler, type FakeDriver } from '../src/csi/fake-driver.test-kit.js';
import type { Logger } from '../src/util/log.js';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };
const DRIVER = 'fake.csi.stowage.io';

let dir: string;
let driverSock: string;
let registry: string;
let driver: FakeDriver | undefined;
let ac: AbortController;
const closers: Array<{ close(): void }> = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'stowage-reg-'));
  mkdirSync(join(dir, 'plugins', DRIVER), { recursive: true });
  driverSock = join(dir, 'plugins', DRIVER, 'csi.sock');
  registry = join(dir, 'plugins_registry');
  ac = new AbortController();
});
afterEach(async () => {
  ac.abort();
  for (const c of closers.splice(0)) c.close();
  await driver?.stop();
  driver = undefined;
  rmSync(dir, { recursive: true, force: true });
});

interface Started {
  run: Promise<void>;
  ready: { socketPath: string; driverName: string; httpPort?: number };
}

async function startRegistrar(extra: { httpEndpoint?: string } = {}): Promise<Started> {
  let onReady!: (r: Started['ready']) => void;
  const readyP = new Promise<Started['ready']>((r) => (onReady = r));
  const run = runRegistrar({
    csiAddress: `unix://${driverSock}`,
    kubeletRegistrationPath: driverSock,
    pluginRegistrationPath: registry,
    timeoutMs: 2_000,
    signal: ac.signal,
    log: quiet,
    onReady,
    ...extra,
  });
  const ready = await Promise.race([readyP, run.then(() => Promise.reject(new Error('registrar ended before ready')))]);
  return { run, ready };
}

function reg(path: string): RegistrationClient {
  const c = new RegistrationClient(path, 5_000);
  closers.push(c);
  return c;
}

async function healthz(port: number): Promise<{ status: number; body: string }> {
  const r = await fetch(`http://127.0.0.1:${port}/healthz`);
  return { status: r.status, body: await r.text() };
}

describe('csi-registrar with a kubelet-style client', () => {
  it('registers the driver the way the kubelet expects, reports health, and cleans up on abort', async () => {
    driver = await startFakeDriver({ socket: driverSock, name: DRIVER, nodeId: 'node-a' });
    const { run, ready } = await startRegistrar({ httpEndpoint: '127.0.0.1:0' });

    // The registry socket: <name>-reg.sock, private to root (umask 077).
    expect(ready.socketPath).toBe(join(registry, `${DRIVER}-reg.sock`));
    const st = statSync(ready.socketPath);
    expect(st.isSocket()).toBe(true);
    expect(st.mode & 0o077).toBe(0);

    // Kubelet: GetInfo on the reg socket.
    const r = reg(ready.socketPath);
    const info = await r.getInfo();
    expect(info).toEqual({ type: 'CSIPlugin', name: DRIVER, endpoint: driverSock, supportedVersions: ['1.0.0'] });
    expect(existsSync(join(dir, 'plugins', DRIVER, 'registration'))).toBe(true);

    // Kubelet: dial the returned endpoint, GetPluginInfo + NodeGetInfo, then report success.
    const csi = new CsiClient({ endpoint: info.endpoint });
    closers.push(csi);
    expect((await csi.getPluginInfo()).name).toBe(info.name);
    const node = await csi.nodeGetInfo();
    expect(node.nodeId).toBe('node-a');
    expect(node.accessibleTopology?.segments).toEqual({ 'topology.fake/node': 'node-a' });
    expect(await r.notifyRegistrationStatus({ pluginRegistered: true })).toEqual({});

    expect(ready.httpPort).toBeGreaterThan(0);
    expect(await healthz(ready.httpPort!)).toEqual({ status: 200, body: 'ok\n' });

    // Better than upstream: a dead driver makes the registrar unhealthy.
    await driver.stop();
    driver = undefined;
    const down = await healthz(ready.httpPort!);
    expect(down.status).toBe(503);
    expect(down.body).toMatch(/CSI driver not answering/);

    ac.abort();
    await expect(run).resolves.toBeUndefined();
    expect(existsSync(ready.socketPath)).toBe(false);
  });

  it('ends with RegistrationRefusedError when the kubelet refuses, without answering', async () => {
    driver = await startFakeDriver({ socket: driverSock, name: DRIVER });
    const { run, ready } = await startRegistrar();
    const r = reg(ready.socketPath);
    await r.getInfo();
    const notify = r
      .notifyRegistrationStatus({ pluginRegistered: false, error: 'no handler for type CSIPlugin' })
      .catch((e: unknown) => e);
    const err = await run.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RegistrationRefusedError);
    expect((err as RegistrationRefusedError).reason).toBe('no handler for type CSIPlugin');
    // Upstream exits before replying: the kubelet sees the call fail, never an OK.
    expect(await notify).toMatchObject({ retryable: true });
  });

  it('replaces a stale registration socket left by a previous run', async () => {
    mkdirSync(registry, { recursive: true });
    writeFileSync(join(registry, `${DRIVER}-reg.sock`), 'stale');
    driver = await startFakeDriver({ socket: driverSock, name: DRIVER });
    const { ready } = await startRegistrar();
    expect(statSync(ready.socketPath).isSocket()).toBe(true);
    expect((await reg(ready.socketPath).getInfo()).name).toBe(DRIVER);
  });

  it('reports 503 once its registration socket is gone', async () => {
    driver = await startFakeDriver({ socket: driverSock, name: DRIVER });
    const { ready } = await startRegistrar({ httpEndpoint: '127.0.0.1:0' });
    rmSync(ready.socketPath);
    const h = await healthz(ready.httpPort!);
    expect(h.status).toBe(503);
    expect(h.body).toMatch(/registration socket .* is missing/);
  });

  it('waits for a driver that is not up yet', async () => {
    let onReady!: () => void;
    const readyP = new Promise<void>((r) => (onReady = r));
    const run = runRegistrar({
      csiAddress: driverSock,
      kubeletRegistrationPath: driverSock,
      pluginRegistrationPath: registry,
      signal: ac.signal,
      log: quiet,
      onReady,
    });
    driver = await startFakeDriver({ socket: driverSock, name: DRIVER });
    await readyP;
    ac.abort();
    await run;
  });

  it('refuses a driver with an empty name', async () => {
    driver = await startFakeDriver({ socket: driverSock, identity: { GetPluginInfo: handler(() => ({ name: '' })) } });
    await expect(startRegistrar()).rejects.toBeInstanceOf(EmptyDriverNameError);
  });
});

// ---- The registrar as its own process, through the CLI wiring ------------------------------------

const HOOKS = pathToFileURL(fileURLToPath(new URL('./csi-registration.ts-hooks.mjs', import.meta.url))).href;
const CHILD = fileURLToPath(new URL('./csi-registration.child.ts', import.meta.url));

interface Child {
  proc: ChildProcess;
  stderr: () => string;
  /** Resolves when stderr has a line matching `re`. */
  waitFor: (re: RegExp) => Promise<void>;
  exit: Promise<number | null>;
}

function spawnRegistrar(args: string[]): Child {
  return spawnStowage(['csi-registrar', ...args]);
}

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
  let err = '';
  const waiters: Array<{ re: RegExp; resolve: () => void }> = [];
  proc.stderr!.on('data', (b: Buffer) => {
    err += b.toString();
    for (const w of waiters.splice(0)) {
      if (w.re.test(err)) w.resolve();
      else waiters.push(w);
    }
  });
  const exit = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  children.push(proc);
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

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

describe('stowage csi-registrar as a separate process', () => {
  const args = (): string[] => [
    '--csi-address',
    `unix://${driverSock}`,
    '--kubelet-registration-path',
    driverSock,
    '--plugin-registration-path',
    registry,
    '--timeout',
    '2s',
  ];

  it('registers, then removes its socket and exits 0 on SIGTERM', async () => {
    driver = await startFakeDriver({ socket: driverSock, name: DRIVER });
    const child = spawnRegistrar(args());
    await child.waitFor(/serving plugin registration/);
    const sock = join(registry, `${DRIVER}-reg.sock`);
    const r = reg(sock);
    expect((await r.getInfo()).endpoint).toBe(driverSock);
    expect(await r.notifyRegistrationStatus({ pluginRegistered: true })).toEqual({});
    child.proc.kill('SIGTERM');
    expect(await child.exit).toBe(0);
    expect(existsSync(sock)).toBe(false);
  });

  it('exits 1 with a one-line reason when the kubelet refuses', async () => {
    driver = await startFakeDriver({ socket: driverSock, name: DRIVER });
    const child = spawnRegistrar(args());
    await child.waitFor(/serving plugin registration/);
    const r = reg(join(registry, `${DRIVER}-reg.sock`));
    const notify = r
      .notifyRegistrationStatus({ pluginRegistered: false, error: 'version mismatch' })
      .catch((e: unknown) => e);
    expect(await child.exit).toBe(1);
    expect(child.stderr()).toMatch(
      /stowage csi-registrar: plugin registration refused by the kubelet: version mismatch\n/,
    );
    expect(await notify).toMatchObject({ retryable: true });
  });
});

describe('hostpath driver and registrar, each its own process, with a kubelet-style client', () => {
  it('registers the hostpath driver, tracks its health, and cleans up on SIGTERM', async () => {
    const hpSock = join(dir, 'plugins', 'hostpath', 'csi.sock');
    const hostpath = spawnStowage([
      'csi-hostpath',
      '--endpoint',
      `unix://${hpSock}`,
      '--node-id',
      'node-e2e',
      '--state-dir',
      join(dir, 'hp-state'),
    ]);
    await hostpath.waitFor(/listening/);
    const registrar = spawnRegistrar([
      '--csi-address',
      hpSock,
      '--kubelet-registration-path',
      hpSock,
      '--plugin-registration-path',
      registry,
      '--http-endpoint',
      '127.0.0.1:0',
    ]);
    await registrar.waitFor(/serving \/healthz.* port=\d+/);
    const port = Number(/serving \/healthz.* port=(\d+)/.exec(registrar.stderr())![1]);

    const sock = join(registry, 'hostpath.csi.stowage.io-reg.sock');
    expect(statSync(sock).mode & 0o077).toBe(0);
    const r = reg(sock);
    const info = await r.getInfo();
    expect(info).toEqual({
      type: 'CSIPlugin',
      name: 'hostpath.csi.stowage.io',
      endpoint: hpSock,
      supportedVersions: ['1.0.0'],
    });

    const csi = new CsiClient({ endpoint: info.endpoint });
    closers.push(csi);
    expect((await csi.getPluginInfo()).name).toBe(info.name);
    const node = await csi.nodeGetInfo({ timeoutMs: 120_000 });
    expect(node.nodeId).toBe('node-e2e');
    expect(node.accessibleTopology?.segments).toEqual({ 'topology.hostpath.csi.stowage.io/node': 'node-e2e' });
    expect([...(await csi.nodeCapabilities())]).toContain('STAGE_UNSTAGE_VOLUME');
    expect(await r.notifyRegistrationStatus({ pluginRegistered: true })).toEqual({});
    expect((await healthz(port)).status).toBe(200);

    hostpath.proc.kill('SIGTERM');
    expect(await hostpath.exit).toBe(0);
    expect((await healthz(port)).status).toBe(503);

    registrar.proc.kill('SIGTERM');
    expect(await registrar.exit).toBe(0);
    expect(existsSync(sock)).toBe(false);
  });
});
