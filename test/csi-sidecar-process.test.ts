/**
 * `stowage csi-sidecar` as its own process next to `stowage csi-hostpath`: provisions, survives a
 * SIGKILL in the middle of provisioning a batch (exactly one volume per claim afterwards), and
 * exits cleanly on SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../src/cli/testing.test-kit.js';
import { loadKubeconfig, RestClient } from '../src/client/index.js';
import { CsiClient } from '../src/csi/client.js';
import { claim, DRIVER, eventually, NODE, quietLogger, storageClass, TOPOLOGY_KEY } from './csi-sidecar-kit.js';

const HOOKS = pathToFileURL(fileURLToPath(new URL('./csi-registration.ts-hooks.mjs', import.meta.url))).href;
const CHILD = fileURLToPath(new URL('./csi-sidecar.child.ts', import.meta.url));

interface Child {
  proc: ChildProcess;
  exit: Promise<number | null>;
  stderr: () => string;
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
    {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, STOWAGE_LOG_LEVEL: 'warn' },
    },
  );
  let err = '';
  proc.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  children.push(proc);
  return { proc, exit: new Promise((resolve) => proc.on('exit', (code) => resolve(code))), stderr: () => err };
}

let srv: TestApiServer;
let client: RestClient;
let dir: string;
let socket: string;
let driver: Child;

beforeAll(async () => {
  srv = await startTestApiServer();
  client = new RestClient(await loadKubeconfig(srv.kubeconfigPath));
  dir = mkdtempSync(join(tmpdir(), 'stowage-sidecar-proc-'));
  socket = join(dir, 'csi.sock');
  driver = spawnStowage([
    'csi-hostpath',
    '--endpoint',
    `unix://${socket}`,
    '--node-id',
    NODE,
    '--state-dir',
    join(dir, 'state'),
  ]);
  await client.resource('Node').create({ metadata: { name: NODE, labels: { [TOPOLOGY_KEY]: NODE } } });
  await client.resource('CSINode').create({
    metadata: { name: NODE },
    spec: { drivers: [{ name: DRIVER, nodeID: NODE, topologyKeys: [TOPOLOGY_KEY] }] },
  });
  await client.resource('StorageClass').create(storageClass('sc'));
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await driver?.exit;
  client?.close();
  await srv?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function volumeCount(): Promise<number> {
  const c = new CsiClient({ endpoint: socket, log: quietLogger() });
  try {
    await c.connect({ timeoutMs: 20_000 });
    return (await c.listVolumes()).entries.length;
  } finally {
    c.close();
  }
}

const sidecarArgs = () => ['csi-sidecar', '--csi-address', `unix://${socket}`, '--kubeconfig', srv.kubeconfigPath];

describe('stowage csi-sidecar as a separate process', () => {
  it('killed (SIGKILL) while provisioning a batch, restarted: every claim bound, one volume each', async () => {
    const N = 12;
    const first = spawnStowage(sidecarArgs());
    for (let i = 0; i < N; i++) await client.resource('PersistentVolumeClaim').create(claim(`p${i}`, 'sc', '1Mi'));
    // Kill as soon as provisioning has visibly started; wherever it is then, nothing may leak.
    await eventually(
      async () => expect((await client.resource('PersistentVolume').list()).items.length).toBeGreaterThan(0),
      60_000,
    );
    first.proc.kill('SIGKILL');
    await first.exit;

    const second = spawnStowage(sidecarArgs());
    await eventually(async () => {
      const claims = (await client.resource('PersistentVolumeClaim').list({ namespace: 'default' })).items;
      expect(claims.filter((c) => c.status?.phase === 'Bound').length).toBe(N);
    }, 60_000);
    expect(await volumeCount()).toBe(N);
    const handles = new Set(
      (await client.resource('PersistentVolume').list()).items.map((pv) => pv.spec?.csi?.volumeHandle),
    );
    expect(handles.size).toBe(N);

    // The first process may have finished the batch before it died: one more claim proves the
    // second one is up (and has its signal handlers) before it is asked to stop.
    await client.resource('PersistentVolumeClaim').create(claim('after', 'sc', '1Mi'));
    await eventually(
      async () =>
        expect(
          (await client.resource('PersistentVolumeClaim').get('after', { namespace: 'default' })).status?.phase,
        ).toBe('Bound'),
      60_000,
    );
    expect(await volumeCount()).toBe(N + 1);
    second.proc.kill('SIGTERM');
    expect(await second.exit).toBe(0);
    expect(second.stderr()).not.toMatch(/ERROR/);
  }, 120_000);
});
