/**
 * Crash consistency of the built-in hostpath driver, with real processes and real kills: a
 * `bin/stowage csi-hostpath` child is started with STOWAGE_CRASH_AT=<step> and SIGKILLs itself at
 * that instant of an RPC; a driver restarted on the same state dir then gets the same call again,
 * and the disk must hold exactly what the state names — one volume or snapshot per name, no
 * directory, file, temp file or loop device that no record accounts for.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { status as grpcStatus } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHostpathDriver, type RunningHostpathDriver } from '../src/csi/hostpath/server.js';
import { parseState, STATE_FILE, type DriverStateData } from '../src/csi/hostpath/state.js';
import type { VolumeCapability } from '../src/csi/proto/types.js';
import { listLoopDevices } from '../src/mount/loop.js';
import { findMount, readMountInfo } from '../src/mount/mountinfo.js';
import {
  blockCap,
  call,
  connect,
  MiB,
  mountCap,
  quietLogger,
  removeAndExpectNothingLeft,
  type Clients,
} from './csi-hostpath-kit.js';
import { BIN, built, isRoot } from './helpers/env.js';

const NODE = 'crash-node';
const onPath = (program: string): boolean =>
  [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/sbin'].some(
    (d) => d !== '' && existsSync(path.join(d, program)),
  );
const hasExt4 = onPath('mkfs.ext4') && onPath('resize2fs');
if (!hasExt4) console.warn('hostpath crash tests of ext4 volumes skipped: mkfs.ext4 and resize2fs needed');
const ext4Cap: VolumeCapability = {
  mount: { fsType: 'ext4', mountFlags: [] },
  accessMode: { mode: 'SINGLE_NODE_WRITER' },
};

/** One driver directory: its state dir, socket, and the CO's staging and target paths. */
interface Site {
  readonly dir: string;
  readonly stateDir: string;
  readonly sock: string;
  readonly staging: string;
  readonly target: string;
}

/** What a case's setup made, for its call and checks. */
interface Made {
  volumeId?: string;
  snapshotId?: string;
}

interface Case {
  readonly name: string;
  /** Steps the call passes, each killed at in its own run. */
  readonly steps: readonly string[];
  readonly fs?: boolean;
  /** Runs on an in-process driver before the crash run. */
  setup(c: Clients, s: Site): Promise<Made>;
  call(c: Clients, s: Site, m: Made): Promise<unknown>;
  /** After the retry succeeded: what must be true of the state and the host. */
  check(st: DriverStateData, s: Site, m: Made): Promise<void>;
}

/**
 * The crash points inside the n first state writes of a call (temp file written; renamed, directory
 * not yet synced). They are the same code for every call, so only a few cases pass through them.
 */
const STATE_STEPS = (n: number): string[] =>
  Array.from({ length: n }, (_, i) => [`state:tmp-written@${i + 1}`, `state:renamed@${i + 1}`]).flat();

const createReq = (name: string, cap: VolumeCapability, extra: object = {}) => ({
  name,
  capacityRange: { requiredBytes: 8 * MiB },
  volumeCapabilities: [cap],
  ...extra,
});
const stageReq = (s: Site, volumeId: string, cap: VolumeCapability) => ({
  volumeId,
  stagingTargetPath: s.staging,
  volumeCapability: cap,
});
const publishReq = (s: Site, volumeId: string, cap: VolumeCapability) => ({
  volumeId,
  stagingTargetPath: s.staging,
  targetPath: s.target,
  volumeCapability: cap,
});

async function createVol(c: Clients, name: string, cap: VolumeCapability): Promise<string> {
  return (await call(c.controller, 'CreateVolume', createReq(name, cap))).volume.volumeId as string;
}

const loopsOf = async (s: Site, id: string): Promise<{ device: string; readOnly: boolean }[]> =>
  (await listLoopDevices()).filter((l) => l.backingFile === path.join(s.stateDir, 'volumes', id));

const named = (st: DriverStateData, name: string) => Object.values(st.volumes).filter((v) => v.name === name);

function createCase(
  name: string,
  cap: VolumeCapability,
  o: { source?: 'volume' | 'snapshot'; stateSteps?: boolean } = {},
): Case {
  const { source } = o;
  return {
    name,
    steps: [
      'CreateVolume:intent',
      'CreateVolume:data',
      'CreateVolume:settled',
      ...(o.stateSteps ? STATE_STEPS(2) : []),
    ],
    async setup(c) {
      if (!source) return {};
      const volumeId = await createVol(c, 'src', cap);
      if (source === 'volume') return { volumeId };
      const snap = await call(c.controller, 'CreateSnapshot', { name: 'src-snap', sourceVolumeId: volumeId });
      return { volumeId, snapshotId: snap.snapshot.snapshotId as string };
    },
    call: (c, _s, m) =>
      call(
        c.controller,
        'CreateVolume',
        createReq(
          'v',
          cap,
          source
            ? {
                volumeContentSource:
                  source === 'volume'
                    ? { volume: { volumeId: m.volumeId } }
                    : { snapshot: { snapshotId: m.snapshotId } },
              }
            : {},
        ),
      ),
    async check(st) {
      expect(named(st, 'v')).toHaveLength(1);
    },
  };
}

const CASES: Case[] = [
  createCase('CreateVolume (directory)', mountCap(), { stateSteps: true }),
  createCase('CreateVolume (block)', blockCap()),
  createCase('CreateVolume (clone of a volume)', mountCap(), { source: 'volume' }),
  createCase('CreateVolume (restore of a snapshot)', blockCap(), { source: 'snapshot' }),
  {
    name: 'DeleteVolume (block)',
    steps: ['DeleteVolume:intent', 'DeleteVolume:data-removed', 'DeleteVolume:settled'],
    setup: async (c) => ({ volumeId: await createVol(c, 'v', blockCap()) }),
    call: (c, _s, m) => call(c.controller, 'DeleteVolume', { volumeId: m.volumeId }),
    async check(st, s, m) {
      expect(named(st, 'v')).toHaveLength(0);
      expect(await loopsOf(s, m.volumeId!)).toEqual([]);
    },
  },
  {
    name: 'CreateSnapshot',
    steps: ['CreateSnapshot:intent', 'CreateSnapshot:data', 'CreateSnapshot:settled', ...STATE_STEPS(2)],
    setup: async (c) => ({ volumeId: await createVol(c, 'v', mountCap()) }),
    call: (c, _s, m) => call(c.controller, 'CreateSnapshot', { name: 'snap', sourceVolumeId: m.volumeId }),
    async check(st) {
      expect(Object.values(st.snapshots).filter((x) => x.name === 'snap')).toHaveLength(1);
    },
  },
  {
    name: 'DeleteVolume (directory)',
    steps: ['DeleteVolume:intent', 'DeleteVolume:data-removed', 'DeleteVolume:settled', ...STATE_STEPS(2)],
    setup: async (c) => ({ volumeId: await createVol(c, 'v', mountCap()) }),
    call: (c, _s, m) => call(c.controller, 'DeleteVolume', { volumeId: m.volumeId }),
    async check(st) {
      expect(named(st, 'v')).toHaveLength(0);
    },
  },
  {
    name: 'DeleteSnapshot',
    steps: ['DeleteSnapshot:intent', 'DeleteSnapshot:data-removed', 'DeleteSnapshot:settled'],
    async setup(c) {
      const volumeId = await createVol(c, 'v', blockCap());
      const snap = await call(c.controller, 'CreateSnapshot', { name: 'snap', sourceVolumeId: volumeId });
      return { volumeId, snapshotId: snap.snapshot.snapshotId as string };
    },
    call: (c, _s, m) => call(c.controller, 'DeleteSnapshot', { snapshotId: m.snapshotId }),
    async check(st) {
      expect(Object.values(st.snapshots)).toEqual([]);
    },
  },
  {
    name: 'ControllerExpandVolume (block)',
    steps: ['ControllerExpandVolume:recorded', 'ControllerExpandVolume:grown', ...STATE_STEPS(1)],
    setup: async (c) => ({ volumeId: await createVol(c, 'v', blockCap()) }),
    async call(c, _s, m) {
      const r = await call(c.controller, 'ControllerExpandVolume', {
        volumeId: m.volumeId,
        capacityRange: { requiredBytes: 16 * MiB },
      });
      // The retry answers as the lost first reply would have: the node must still refresh the device.
      expect(r).toMatchObject({ capacityBytes: 16 * MiB, nodeExpansionRequired: true });
      return r;
    },
    async check(st, s, m) {
      expect(st.volumes[m.volumeId!]!.capacityBytes).toBe(16 * MiB);
      expect((await stat(path.join(s.stateDir, 'volumes', m.volumeId!))).size).toBe(16 * MiB);
    },
  },
  {
    name: 'NodeStageVolume (block)',
    steps: ['NodeStageVolume:loop-attached', 'NodeStageVolume:recorded'],
    setup: async (c) => ({ volumeId: await createVol(c, 'v', blockCap()) }),
    call: (c, s, m) => call(c.node, 'NodeStageVolume', stageReq(s, m.volumeId!, blockCap())),
    async check(st, s, m) {
      expect(Object.keys(st.volumes[m.volumeId!]!.staged)).toEqual([s.staging]);
      expect(await loopsOf(s, m.volumeId!)).toHaveLength(1);
    },
  },
  {
    name: 'NodeStageVolume (directory)',
    steps: ['NodeStageVolume:mounted', 'NodeStageVolume:recorded'],
    setup: async (c) => ({ volumeId: await createVol(c, 'v', mountCap()) }),
    call: (c, s, m) => call(c.node, 'NodeStageVolume', stageReq(s, m.volumeId!, mountCap())),
    async check(st, s, m) {
      expect(Object.keys(st.volumes[m.volumeId!]!.staged)).toEqual([s.staging]);
      expect((await readMountInfo()).filter((x) => x.mountPoint === s.staging)).toHaveLength(1);
    },
  },
  {
    name: 'NodeStageVolume (ext4)',
    fs: true,
    steps: [
      'NodeStageVolume:loop-attached',
      'NodeStageVolume:formatted',
      'NodeStageVolume:mounted',
      'NodeStageVolume:recorded',
    ],
    setup: async (c) => ({ volumeId: await createVol(c, 'v', ext4Cap) }),
    call: (c, s, m) => call(c.node, 'NodeStageVolume', stageReq(s, m.volumeId!, ext4Cap)),
    async check(st, s, m) {
      expect(Object.keys(st.volumes[m.volumeId!]!.staged)).toEqual([s.staging]);
      const loops = await loopsOf(s, m.volumeId!);
      expect(loops).toHaveLength(1);
      expect((await findMount(s.staging))?.source).toBe(loops[0]!.device);
    },
  },
  {
    name: 'NodeUnstageVolume (ext4)',
    fs: true,
    steps: ['NodeUnstageVolume:unmounted', 'NodeUnstageVolume:recorded'],
    async setup(c, s) {
      const volumeId = await createVol(c, 'v', ext4Cap);
      await call(c.node, 'NodeStageVolume', stageReq(s, volumeId, ext4Cap));
      return { volumeId };
    },
    call: (c, s, m) => call(c.node, 'NodeUnstageVolume', { volumeId: m.volumeId, stagingTargetPath: s.staging }),
    async check(st, s, m) {
      expect(st.volumes[m.volumeId!]!.staged).toEqual({});
      expect(await loopsOf(s, m.volumeId!)).toEqual([]);
      expect(await findMount(s.staging)).toBeUndefined();
    },
  },
  {
    name: 'NodePublishVolume (block, read-only: its own loop device)',
    steps: ['NodePublishVolume:mounted', 'NodePublishVolume:recorded'],
    async setup(c, s) {
      const volumeId = await createVol(c, 'v', blockCap());
      await call(c.node, 'NodeStageVolume', stageReq(s, volumeId, blockCap()));
      return { volumeId };
    },
    call: (c, s, m) => call(c.node, 'NodePublishVolume', { ...publishReq(s, m.volumeId!, blockCap()), readonly: true }),
    async check(st, s, m) {
      expect(Object.keys(st.volumes[m.volumeId!]!.published)).toEqual([s.target]);
      expect((await loopsOf(s, m.volumeId!)).map((l) => l.readOnly).sort()).toEqual([false, true]);
    },
  },
  {
    name: 'NodeUnpublishVolume (block, read-only)',
    steps: ['NodeUnpublishVolume:unmounted', 'NodeUnpublishVolume:recorded'],
    async setup(c, s) {
      const volumeId = await createVol(c, 'v', blockCap());
      await call(c.node, 'NodeStageVolume', stageReq(s, volumeId, blockCap()));
      await call(c.node, 'NodePublishVolume', { ...publishReq(s, volumeId, blockCap()), readonly: true });
      return { volumeId };
    },
    call: (c, s, m) => call(c.node, 'NodeUnpublishVolume', { volumeId: m.volumeId, targetPath: s.target }),
    async check(st, s, m) {
      expect(st.volumes[m.volumeId!]!.published).toEqual({});
      expect((await loopsOf(s, m.volumeId!)).map((l) => l.readOnly)).toEqual([false]);
      expect(existsSync(s.target)).toBe(false);
    },
  },
  {
    name: 'NodeExpandVolume (block)',
    steps: ['NodeExpandVolume:device-refreshed'],
    async setup(c, s) {
      const volumeId = await createVol(c, 'v', blockCap());
      await call(c.node, 'NodeStageVolume', stageReq(s, volumeId, blockCap()));
      await call(c.node, 'NodePublishVolume', publishReq(s, volumeId, blockCap()));
      await call(c.controller, 'ControllerExpandVolume', { volumeId, capacityRange: { requiredBytes: 16 * MiB } });
      return { volumeId };
    },
    call: (c, s, m) => call(c.node, 'NodeExpandVolume', { volumeId: m.volumeId, volumePath: s.target }),
    async check(_st, s, m) {
      const loops = await loopsOf(s, m.volumeId!);
      expect(loops).toHaveLength(1);
      const sectors = Number(await readFile(`/sys/block/${path.basename(loops[0]!.device)}/size`, 'utf8'));
      expect(sectors * 512).toBe(16 * MiB);
    },
  },
];

/** Every directory or file on disk is named by a settled record, and nothing else is there. */
async function expectOnlyWhatStateNames(s: Site): Promise<DriverStateData> {
  const st = parseState(await readFile(path.join(s.stateDir, STATE_FILE), 'utf8'));
  expect((await readdir(s.stateDir)).sort(), 'temp files left').toEqual([STATE_FILE, 'volumes', 'snapshots'].sort());
  expect(
    Object.values(st.volumes)
      .filter((v) => v.pending)
      .map((v) => v.id),
    'volume intents left',
  ).toEqual([]);
  expect(
    Object.values(st.snapshots)
      .filter((x) => x.pending)
      .map((x) => x.id),
    'snapshot intents left',
  ).toEqual([]);
  expect((await readdir(path.join(s.stateDir, 'volumes'))).sort(), 'volume data no record names').toEqual(
    Object.keys(st.volumes).sort(),
  );
  expect((await readdir(path.join(s.stateDir, 'snapshots'))).sort(), 'snapshot data no record names').toEqual(
    Object.keys(st.snapshots).sort(),
  );
  const names = Object.values(st.volumes).map((v) => v.name);
  expect(new Set(names).size, 'two volumes with one name').toBe(names.length);
  const loops = (await listLoopDevices()).filter((l) => l.backingFile.startsWith(s.stateDir));
  for (const l of loops)
    expect(st.volumes[path.basename(l.backingFile)], `loop device ${l.device} of no volume`).toBeDefined();
  return st;
}

describe.skipIf(!built || !isRoot)(
  'hostpath driver killed with SIGKILL at every step of every RPC (root, bin/stowage)',
  () => {
    let root = '';
    const inProcess: { running: RunningHostpathDriver; ac: AbortController }[] = [];

    beforeAll(async () => {
      root = await mkdtemp(path.join(os.tmpdir(), 'stowage-hp-crash-'));
    });
    afterAll(async () => {
      for (const d of inProcess) d.ac.abort();
      await Promise.all(inProcess.map((d) => d.running.done));
      if (root) await removeAndExpectNothingLeft(root);
    });

    const startInProcess = async (s: Site): Promise<{ c: Clients; stop: () => Promise<void> }> => {
      const ac = new AbortController();
      const running = await startHostpathDriver({
        endpoint: `unix://${s.sock}`,
        nodeId: NODE,
        stateDir: s.stateDir,
        signal: ac.signal,
        logger: quietLogger(),
      });
      const entry = { running, ac };
      inProcess.push(entry);
      const c = connect(s.sock);
      return {
        c,
        stop: async () => {
          c.close();
          ac.abort();
          await running.done;
          inProcess.splice(inProcess.indexOf(entry), 1);
        },
      };
    };

    /** Runs the call on a `bin/stowage csi-hostpath` that kills itself at `step`; resolves with how it ended. */
    const callAndCrash = async (
      s: Site,
      step: string,
      fn: (c: Clients) => Promise<unknown>,
    ): Promise<{ error: string; signal: NodeJS.Signals | null }> => {
      const child = spawn(
        process.execPath,
        [BIN, 'csi-hostpath', '--endpoint', `unix://${s.sock}`, '--node-id', NODE, '--state-dir', s.stateDir],
        {
          stdio: ['ignore', 'ignore', 'pipe'],
          env: { ...process.env, STOWAGE_CRASH_AT: step, STOWAGE_LOG_LEVEL: 'warn' },
        },
      );
      let stderr = '';
      child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        child.once('exit', (_code, signal) => resolve(signal)),
      );
      const c = connect(s.sock);
      try {
        await new Promise<void>((resolve, reject) =>
          c.controller.waitForReady(Date.now() + 30_000, (e) =>
            e ? reject(new Error(`${e.message}: ${stderr}`)) : resolve(),
          ),
        );
        const error = await fn(c).then(
          () => 'none: the call succeeded',
          (e: unknown) => (e instanceof Error && 'code' in e ? (grpcStatus[Number(e.code)] ?? e.message) : String(e)),
        );
        // Killed at the step, the child is gone or going; otherwise (the test fails) it is stopped here.
        if (error !== 'UNAVAILABLE') child.kill('SIGKILL');
        return { error, signal: await exited };
      } finally {
        c.close();
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
    };

    let n = 0;
    const runs = CASES.filter((k) => !k.fs || hasExt4).flatMap((k) =>
      k.steps.map((step) => ({ k, step, label: `${k.name} killed at ${step}` })),
    );

    it.each(runs)(
      '$label → the retry converges to exactly what the state names',
      { timeout: 60_000 },
      async ({ k, step }) => {
        const dir = path.join(root, `case-${(n += 1)}`);
        const s: Site = {
          dir,
          stateDir: path.join(dir, 'state'),
          sock: path.join(dir, 'csi.sock'),
          staging: path.join(dir, 'staging'),
          target: path.join(dir, 'target'),
        };
        await mkdir(dir, { recursive: true });

        const first = await startInProcess(s);
        const made = await k.setup(first.c, s);
        await first.stop();

        const crashed = await callAndCrash(s, step, (c) => k.call(c, s, made));
        // The connection dropped (UNAVAILABLE) because the process was killed at the step.
        expect(crashed, 'the driver died at the step, before replying').toEqual({
          error: 'UNAVAILABLE',
          signal: 'SIGKILL',
        });

        // Restarted on the same state: start-up settles what the crash left; the CO retries the call.
        const again = await startInProcess(s);
        await k.call(again.c, s, made);
        const st = await expectOnlyWhatStateNames(s);
        await k.check(st, s, made);

        // A second retry changes nothing (idempotent), and a full teardown leaves nothing behind.
        await k.call(again.c, s, made);
        expect(await expectOnlyWhatStateNames(s)).toEqual(st);
        await teardown(again.c, s);
        await again.stop();
        const end = await expectOnlyWhatStateNames(s);
        expect(end.volumes).toEqual({});
        expect(end.snapshots).toEqual({});
        await removeAndExpectNothingLeft(dir);
      },
    );
  },
);

/** Unpublishes, unstages and deletes everything the state names, through the driver. */
async function teardown(c: Clients, s: Site): Promise<void> {
  const st = parseState(await readFile(path.join(s.stateDir, STATE_FILE), 'utf8'));
  for (const v of Object.values(st.volumes)) {
    for (const t of Object.keys(v.published))
      await call(c.node, 'NodeUnpublishVolume', { volumeId: v.id, targetPath: t });
    for (const p of Object.keys(v.staged))
      await call(c.node, 'NodeUnstageVolume', { volumeId: v.id, stagingTargetPath: p });
  }
  for (const x of Object.values(st.snapshots)) await call(c.controller, 'DeleteSnapshot', { snapshotId: x.id });
  for (const v of Object.values(st.volumes)) await call(c.controller, 'DeleteVolume', { volumeId: v.id });
}
