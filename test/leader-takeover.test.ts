/**
 * Two `stowage controllers --leader-elect` and two `stowage csi-sidecar --leader-election`
 * processes against one API server (issue 17, item 4): the leaders SIGKILLed mid-provisioning →
 * the others take over and every claim is provisioned and bound exactly once; a leader paused with
 * SIGSTOP and resumed after another took over writes nothing and exits with "leaderelection lost".
 * Each process talks through its own recording proxy, so the test sees who wrote what.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PersistentVolumeClaim } from 'kubernetes-types/core/v1.js';
import { afterAll, beforeAll, describe, expect, it, onTestFailed, vi } from 'vitest';
import { startFaultProxy, type FaultProxy } from '../bench/chaos/fault-proxy.js';
import { checkSteady, readDriverRecords } from '../bench/chaos/invariants.js';
import { startTestApiServer, type TestApiServer } from '../src/cli/testing.test-kit.js';
import { loadKubeconfig } from '../src/client/kubeconfig.js';
import { RestClient } from '../src/client/rest.js';
import { BIN } from './helpers/env.js';
import { proxyKubeconfig, startRecordingProxy, type RecordingProxy } from './helpers/recording-proxy.js';

const DRIVER = 'hostpath.csi.stowage.io';
// Short client-go timings through the real flags (lease 8 s, renew deadline 6 s, retry 1 s): a
// takeover costs seconds, and a renewal still has room on a busy machine.
const TIMINGS = { 'lease-duration': '8s', 'renew-deadline': '6s', 'retry-period': '1s' };
// Each CreateVolume takes this long (through the fault proxy), so that a kill lands mid-provisioning.
const CREATE_DELAY_MS = 100;

interface Candidate {
  readonly name: string;
  readonly child: ChildProcess;
  readonly proxy: RecordingProxy;
  readonly exit: Promise<number | null>;
  stderr(): string;
}

let srv: TestApiServer;
let client: RestClient;
let dir: string;
let driver: ChildProcess;
let csiProxy: FaultProxy;
const candidates: Candidate[] = [];

async function startCandidate(name: string, kind: 'controllers' | 'csi-sidecar'): Promise<Candidate> {
  const proxy = await startRecordingProxy({ baseUrl: srv.baseUrl, token: srv.token, caPem: srv.caPem });
  const kubeconfig = join(dir, `${name}.kubeconfig`);
  writeFileSync(kubeconfig, proxyKubeconfig(proxy, srv.token));
  const p = kind === 'controllers' ? 'leader-elect' : 'leader-election';
  const timing = Object.entries(TIMINGS).flatMap(([k, v]) => [`--${p}-${k}`, v]);
  const args =
    kind === 'controllers'
      ? ['controllers', '--kubeconfig', kubeconfig, '--leader-elect', ...timing]
      : [
          'csi-sidecar',
          '--csi-address',
          `unix://${join(dir, 'csi.sock')}`,
          '--kubeconfig',
          kubeconfig,
          '--leader-election',
          '--timeout',
          '5s',
          ...timing,
        ];
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const c = { name, child, proxy, exit, stderr: () => err };
  candidates.push(c);
  return c;
}

/** On a failure, what each candidate said (why none leads, when none does). */
function reportCandidates(): void {
  for (const c of candidates)
    console.error(
      `--- ${c.name} (exit ${c.child.exitCode ?? c.child.signalCode ?? 'running'}):\n${c.stderr().slice(-3000)}`,
    );
}

// A candidate that lost its lease has exited: only a live one that became leader leads.
const leads = (c: Candidate): boolean =>
  c.child.exitCode === null && c.child.signalCode === null && c.stderr().includes('became leader');

/** The one of `cs` that says it became leader (waits for it). */
async function leaderOf(cs: readonly Candidate[]): Promise<Candidate> {
  return vi.waitFor(
    () => {
      const l = cs.filter(leads);
      if (l.length !== 1) throw new Error(`leaders: ${l.map((c) => c.name).join(',') || 'none'}`);
      return l[0]!;
    },
    { timeout: 60_000, interval: 100 },
  );
}

const claim = (name: string): PersistentVolumeClaim => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, namespace: 'default' },
  spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'fast', resources: { requests: { storage: '1Mi' } } },
});

async function createClaims(prefix: string, n: number): Promise<void> {
  await Promise.all(
    Array.from({ length: n }, (_, i) => client.resource('PersistentVolumeClaim').create(claim(`${prefix}-${i}`))),
  );
}

/** Every claim Bound, each PV bound to one claim, each PV's volume in the driver and no driver volume without a PV. */
async function expectConvergedExactlyOnce(total: number): Promise<void> {
  await vi.waitFor(
    async () => {
      const claims = (await client.resource('PersistentVolumeClaim').list({ namespace: 'default' })).items;
      expect(claims.length).toBe(total);
      expect(claims.filter((c) => c.status?.phase !== 'Bound').map((c) => c.metadata?.name)).toEqual([]);
    },
    { timeout: 90_000, interval: 250 },
  );
  const claims = (await client.resource('PersistentVolumeClaim').list({ namespace: 'default' })).items;
  const volumes = (await client.resource('PersistentVolume').list()).items;
  const driverRecords = readDriverRecords(join(dir, 'driver-state'));
  const violations = checkSteady(
    {
      claims,
      volumes,
      pods: [],
      attachments: [],
      driver: driverRecords,
      mounts: [],
      loops: [],
      podDirs: [],
      stagingDirs: [],
      nodeRecords: [],
    },
    { attach: false },
  );
  expect(violations).toEqual([]);
  // One PV per claim, and as many driver volumes as PVs: no CreateVolume left a second volume behind.
  expect(volumes.length).toBe(total);
  expect(new Set(volumes.map((v) => v.spec?.claimRef?.uid)).size).toBe(total);
  expect(Object.keys(driverRecords.volumes ?? {}).length).toBe(total);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'stowage-leader-'));
  srv = await startTestApiServer({ controllers: false });
  client = new RestClient(await loadKubeconfig(srv.kubeconfigPath));
  mkdirSync(join(dir, 'driver-state'));
  driver = spawn(
    process.execPath,
    [
      BIN,
      'csi-hostpath',
      '--endpoint',
      `unix://${join(dir, 'driver.sock')}`,
      '--node-id',
      'n1',
      '--state-dir',
      join(dir, 'driver-state'),
    ],
    { stdio: 'ignore' },
  );
  // The sidecars ask the driver its name before anything else and exit if it does not answer (as
  // external-provisioner does): the driver listens before they start.
  await vi.waitFor(() => expect(existsSync(join(dir, 'driver.sock'))).toBe(true), { timeout: 30_000, interval: 50 });
  csiProxy = await startFaultProxy({
    socket: join(dir, 'csi.sock'),
    upstream: join(dir, 'driver.sock'),
    decide: (method) => (method === 'CreateVolume' ? { kind: 'delay', ms: CREATE_DELAY_MS } : undefined),
  });
  await client.resource('StorageClass').create({
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: 'fast' },
    provisioner: DRIVER,
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'Immediate',
  });
}, 60_000);

afterAll(async () => {
  for (const c of candidates) {
    c.child.kill('SIGCONT');
    c.child.kill('SIGKILL');
    await c.exit;
    await c.proxy.close();
  }
  await csiProxy?.stop();
  driver?.kill('SIGKILL');
  client?.close();
  await srv?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('leader-elected controllers and sidecars', () => {
  let ctrl: Candidate[] = [];
  let side: Candidate[] = [];

  it('the leaders SIGKILLed mid-provisioning: the others take over; each claim provisioned once and bound once', async () => {
    onTestFailed(reportCandidates);
    ctrl = [await startCandidate('ctrl-a', 'controllers'), await startCandidate('ctrl-b', 'controllers')];
    side = [await startCandidate('side-a', 'csi-sidecar'), await startCandidate('side-b', 'csi-sidecar')];
    const ctrlLeader = await leaderOf(ctrl);
    const sideLeader = await leaderOf(side);
    await createClaims('k', 40);
    // Mid-work: the first PV exists, most claims are not bound yet.
    await vi.waitFor(
      async () => expect((await client.resource('PersistentVolume').list()).items.length).toBeGreaterThan(0),
      { timeout: 30_000, interval: 20 },
    );
    ctrlLeader.child.kill('SIGKILL');
    sideLeader.child.kill('SIGKILL');
    const pvsAtKill = (await client.resource('PersistentVolume').list()).items.length;
    await Promise.all([ctrlLeader.exit, sideLeader.exit]);
    ctrl = ctrl.filter((c) => c !== ctrlLeader);
    side = side.filter((c) => c !== sideLeader);
    await leaderOf(ctrl);
    await leaderOf(side);
    await expectConvergedExactlyOnce(40);
    expect(pvsAtKill).toBeLessThan(40); // the kill did land mid-work
  }, 180_000);

  it('a leader paused with SIGSTOP and resumed after another took over writes nothing and exits with "leaderelection lost"', async () => {
    onTestFailed(reportCandidates);
    const paused = [ctrl[0]!, side[0]!];
    const fresh = [await startCandidate('ctrl-c', 'controllers'), await startCandidate('side-c', 'csi-sidecar')];
    // Work is queued in the leaders when they stop.
    await createClaims('s', 20);
    for (const p of paused) p.child.kill('SIGSTOP');
    await leaderOf([fresh[0]!]);
    await leaderOf([fresh[1]!]);
    // Whatever the paused ones had sent before stopping has arrived by now (the takeover took a lease duration).
    const takenOverAt = Date.now();
    await expectConvergedExactlyOnce(60);
    for (const p of paused) p.child.kill('SIGCONT');
    const codes = await Promise.all(paused.map((p) => p.exit));
    expect(codes).toEqual([1, 1]);
    for (const p of paused) {
      expect(p.stderr()).toContain('leaderelection lost');
      expect(p.proxy.writes().filter((w) => w.atMs >= takenOverAt)).toEqual([]);
    }
    await expectConvergedExactlyOnce(60);
  }, 180_000);
});
