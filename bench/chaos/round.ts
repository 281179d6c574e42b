/**
 * One chaos round: a batch of claims and pods taken through provisioning, binding, attach, mount,
 * expansion and teardown, while seeded random processes are SIGKILLed at seeded random moments
 * and restarted (and, with a fault matrix, the driver's calls fail, stall and lose replies). After
 * each phase the cluster must converge (a generous bound) and the invariants hold. The seed alone
 * replays the round's choices (the moments hit depend on the machine's speed too).
 * Snapshots are not exercised: the CSI sidecar has no snapshotter (and the API no VolumeSnapshot
 * kinds); the driver's snapshots/ directory is still checked for orphans.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { AlreadyExistsError, NotFoundError } from '../../src/util/errors.js';
import { seededRandom } from '../../src/util/seeded-random.js';
import { DRIVER, logTail, startCluster, type Cluster, type ProcessName } from './cluster.js';
import type { CsiFault, FaultDecider } from './fault-proxy.js';
import { detachLoop } from '../../src/mount/loop.js';
import { run } from '../../src/mount/exec.js';
import { checkEmpty, checkSteady, loopsUnder, mountPointsUnder, takeSnapshot, type Snapshot } from './invariants.js';

export const PHASES = ['provision', 'mount', 'expand', 'teardown'] as const;
export type Phase = (typeof PHASES)[number];

export interface RoundOptions {
  readonly seed: number;
  readonly mode: 'allinone' | 'split';
  readonly attach: boolean;
  /** Claims (each with one pod). */
  readonly claims: number;
  readonly killsPerPhase: number;
  /** Processes to kill (default: any of the mode's). */
  readonly targets?: readonly ProcessName[];
  /** Inject driver faults through the proxy (split mode only). */
  readonly faults?: boolean;
  /** Bound of each convergence wait. */
  readonly convergeMs?: number;
  /** Keep the data dir of a failed round for inspection. */
  readonly keepOnFailure?: boolean;
  readonly log?: (line: string) => void;
}

export interface RoundResult {
  readonly seed: number;
  readonly kills: readonly { phase: Phase; target: ProcessName; atMs: number }[];
  /** Faults injected by the proxy, by `kind:method`. */
  readonly faults: Readonly<Record<string, number>>;
  /** Convergence time of each phase, from its last restart (ms). */
  readonly convergenceMs: readonly number[];
  /** Processes that exited by themselves and were restarted (e.g. a registrar refused while the API was down). */
  readonly exits: readonly string[];
  readonly violations: readonly string[];
  readonly dataDir?: string;
}

const CONTROLLER_METHODS = [
  'CreateVolume',
  'DeleteVolume',
  'ControllerPublishVolume',
  'ControllerUnpublishVolume',
  'ControllerExpandVolume',
];
const NODE_METHODS = [
  'NodeStageVolume',
  'NodeUnstageVolume',
  'NodePublishVolume',
  'NodeUnpublishVolume',
  'NodeExpandVolume',
];

/**
 * The driver-fault matrix: a quarter of the calls that change something fail, stall or lose their
 * reply. Hangs are for controller calls only (the sidecar's deadline is 5 s; a node call's is the
 * kubelet's 2 min, too long for a round).
 */
export function faultMatrix(random: () => number): FaultDecider {
  const codes = [grpc.status.UNAVAILABLE, grpc.status.INTERNAL, grpc.status.ABORTED, grpc.status.DEADLINE_EXCEEDED];
  return (method) => {
    const controller = CONTROLLER_METHODS.includes(method);
    if (!controller && !NODE_METHODS.includes(method)) return undefined;
    if (random() >= 0.25) return undefined;
    const pick = random();
    const code = codes[Math.floor(random() * codes.length)]!;
    const faults: CsiFault[] = [
      { kind: 'error', code },
      { kind: 'errorAfter', code },
      { kind: 'delay', ms: 100 + Math.floor(random() * 1500) },
      { kind: 'drop', forward: random() < 0.5 },
      ...(controller ? [{ kind: 'hang', forward: random() < 0.5 } as const] : []),
    ];
    return faults[Math.floor(pick * faults.length)];
  };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns true; false after `boundMs`. API errors (a killed server) count as not yet. */
async function until(fn: () => Promise<boolean>, boundMs: number): Promise<boolean> {
  const end = Date.now() + boundMs;
  for (;;) {
    try {
      if (await fn()) return true;
    } catch {
      // the API server may be restarting
    }
    if (Date.now() > end) return false;
    await sleep(250);
  }
}

const claim = (i: number): object => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: `chaos-${i}` },
  spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'chaos', resources: { requests: { storage: '1Mi' } } },
});
const pod = (i: number): object => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: `chaos-${i}` },
  spec: {
    containers: [{ name: 'app', image: 'busybox', volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
    volumes: [{ name: 'data', persistentVolumeClaim: { claimName: `chaos-${i}` } }],
  },
});

/** Retries an API write across a restarting server; an AlreadyExists/NotFound means it was done. */
async function write(fn: () => Promise<unknown>): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      await fn();
      return;
    } catch (e) {
      if (e instanceof AlreadyExistsError || e instanceof NotFoundError) return;
      if (i > 200) throw e;
      await sleep(250);
    }
  }
}

export async function runRound(o: RoundOptions): Promise<RoundResult> {
  const log = o.log ?? (() => undefined);
  const random = seededRandom(o.seed);
  const faultRandom = seededRandom(o.seed ^ 0x5eed);
  const convergeMs = o.convergeMs ?? 120_000;
  const dataDir = mkdtempSync(join(tmpdir(), `stowage-chaos-${o.seed}-`));
  const kills: { phase: Phase; target: ProcessName; atMs: number }[] = [];
  const convergenceMs: number[] = [];
  const violations: string[] = [];
  const t0 = Date.now();
  let cluster: Cluster | undefined;
  let faults: Record<string, number> = {};
  let exits: string[] = [];
  try {
    cluster = await startCluster({
      dataDir,
      mode: o.mode,
      attach: o.attach,
      ...(o.faults && o.mode === 'split' ? { faults: faultMatrix(faultRandom) } : {}),
    });
    const c = cluster;
    const targets = o.targets ?? c.processes;
    const api = {
      claims: () => c.client.resource('PersistentVolumeClaim'),
      pods: () => c.client.resource('Pod'),
    };
    const bindingMode = random() < 0.5 ? 'Immediate' : 'WaitForFirstConsumer';
    await write(() =>
      c.client.resource('StorageClass').create({
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
        metadata: { name: 'chaos' },
        provisioner: DRIVER,
        allowVolumeExpansion: true,
        volumeBindingMode: bindingMode,
      }),
    );
    const n = o.claims;
    const idx = Array.from({ length: n }, (_, i) => i);
    const actions: Record<Phase, () => Promise<void>> = {
      provision: async () =>
        void (await Promise.all(
          idx.map((i) => write(() => api.claims().create(claim(i) as never, { namespace: 'default' }))),
        )),
      mount: async () =>
        void (await Promise.all(
          idx.map((i) => write(() => api.pods().create(pod(i) as never, { namespace: 'default' }))),
        )),
      expand: async () =>
        void (await Promise.all(
          idx.map((i) =>
            write(() =>
              api
                .claims()
                .patch(
                  `chaos-${i}`,
                  'merge',
                  { spec: { resources: { requests: { storage: '2Mi' } } } },
                  { namespace: 'default' },
                ),
            ),
          ),
        )),
      teardown: async () => {
        await Promise.all(idx.map((i) => write(() => api.pods().delete(`chaos-${i}`, { namespace: 'default' }))));
        await Promise.all(idx.map((i) => write(() => api.claims().delete(`chaos-${i}`, { namespace: 'default' }))));
      },
    };
    const converged: Record<Phase, (s: Snapshot) => string[]> = {
      // WaitForFirstConsumer: a claim binds only once its pod exists; until then it stays Pending.
      provision: (s) =>
        s.claims.length === n &&
        s.claims.every((x) => x.status?.phase === (bindingMode === 'Immediate' ? 'Bound' : 'Pending')) &&
        s.volumes.length === (bindingMode === 'Immediate' ? n : 0)
          ? checkSteady({ ...s, claims: s.claims.filter((x) => x.status?.phase === 'Bound') }, { attach: o.attach })
          : ['not converged'],
      mount: (s) =>
        s.pods.length === n && s.pods.every((p) => p.status?.phase === 'Running')
          ? checkSteady(s, { attach: o.attach })
          : ['not converged'],
      expand: (s) =>
        s.claims.every((x) => x.status?.capacity?.storage === '2Mi') &&
        s.pods.every((p) => p.status?.phase === 'Running')
          ? checkSteady(s, { attach: o.attach })
          : ['not converged'],
      teardown: (s) => checkEmpty(s),
    };
    for (const phase of PHASES) {
      const action = actions[phase]();
      let lastRestart = Date.now();
      for (let k = 0; k < o.killsPerPhase; k++) {
        const target = targets[Math.floor(random() * targets.length)]!;
        const delay = Math.floor(random() * 2500);
        const downFor = Math.floor(random() * 1000);
        await sleep(delay);
        kills.push({ phase, target, atMs: Date.now() - t0 });
        log(`seed ${o.seed}: ${phase}: SIGKILL ${target} (down ${downFor} ms)`);
        await c.kill(target);
        await sleep(downFor);
        await c.start(target);
        lastRestart = Date.now();
      }
      await action;
      let last: string[] = ['not converged'];
      const ok = await until(async () => {
        const s = await takeSnapshot(c);
        last = converged[phase](s);
        return last.length === 0;
      }, convergeMs);
      convergenceMs.push(Date.now() - lastRestart);
      if (!ok) {
        const detail =
          last.length === 1 && last[0] === 'not converged'
            ? describe(await takeSnapshot(c).catch(() => undefined))
            : last;
        violations.push(
          ...detail.map(
            (l) =>
              `[seed ${o.seed} ${o.mode}${o.attach ? ' attach' : ''}${o.faults ? ' faults' : ''} ${bindingMode} ${phase}] ${l}`,
          ),
        );
        log(`seed ${o.seed}: ${phase} did not converge within ${convergeMs} ms:\n  ${detail.join('\n  ')}`);
        for (const p of c.processes) log(`--- ${p} log tail ---\n${logTail(dataDir, p)}`);
        break;
      }
      log(`seed ${o.seed}: ${phase} converged ${convergenceMs.at(-1)} ms after the last restart`);
    }
  } catch (e) {
    // The harness itself failed (e.g. a server that never came back): reported, not thrown, so a
    // soak goes on and the data dir is kept.
    violations.push(`[seed ${o.seed} ${o.mode}] harness: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    faults = Object.fromEntries(cluster?.proxy?.injected ?? []);
    exits = (cluster?.exits ?? []).map((e) => `${e.name}(${e.code})`);
    await cluster?.stop();
    await cleanupHost(dataDir);
    if (violations.length === 0 || !o.keepOnFailure) rmSync(dataDir, { recursive: true, force: true });
  }
  return {
    seed: o.seed,
    kills,
    faults,
    convergenceMs,
    exits,
    violations,
    ...(violations.length > 0 && o.keepOnFailure ? { dataDir } : {}),
  };
}

/** What a cluster that did not converge looks like (the not-yet-converged objects). */
function describe(s: Snapshot | undefined): string[] {
  if (!s) return ['did not converge, and the API server does not answer'];
  const out = [
    ...s.claims
      .filter((c) => c.status?.phase !== 'Bound')
      .map((c) => `claim ${c.metadata?.name} is ${c.status?.phase}`),
    ...s.pods
      .filter((p) => p.status?.phase !== 'Running')
      .map((p) => `pod ${p.metadata?.name} is ${p.status?.phase}${p.metadata?.deletionTimestamp ? ' (deleting)' : ''}`),
    ...s.claims
      .filter((c) => c.status?.capacity?.storage !== '2Mi')
      .map((c) => `claim ${c.metadata?.name} has capacity ${c.status?.capacity?.storage}`),
  ];
  return [`did not converge: ${out.slice(0, 10).join('; ')}`, ...checkSteady(s, { attach: false }).slice(0, 10)];
}

/** Unmounts and detaches whatever a failed round left under its data dir, so the next starts clean. */
export async function cleanupHost(dataDir: string): Promise<void> {
  for (const m of await mountPointsUnder(dataDir)) await run('umount', ['-l', m]).catch(() => undefined);
  for (const l of await loopsUnder(dataDir)) await detachLoop(l).catch(() => undefined);
}
