/** Shared setup for the volume manager integration tests: API server, hostpath driver, claims, pods. */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import { expect, vi } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../src/cli/testing.test-kit.js';
import type { RestClient } from '../src/client/index.js';
import { CsiClient } from '../src/csi/client.js';
import { startHostpathDriver, type RunningHostpathDriver } from '../src/csi/hostpath/index.js';
import { listLoopDevices } from '../src/mount/loop.js';
import { mountsUnder } from '../src/mount/mountinfo.js';
import { HOST_PATHS_ANNOTATION } from '../src/node/volumemanager/volume-manager.js';
import { NotFoundError } from '../src/util/errors.js';

export const DRIVER = 'hostpath.csi.stowage.io';
export const NODE = 'vm-node';

export async function until<T>(
  what: string,
  fn: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 20_000,
): Promise<T> {
  return vi.waitFor(
    async () => {
      const v = await fn();
      if (v === undefined || v === null || v === false) throw new Error(`still waiting for ${what}`);
      return v;
    },
    { timeout: timeoutMs, interval: 30 },
  );
}

export interface Env {
  readonly api: TestApiServer;
  readonly client: RestClient;
  readonly dir: string;
  readonly rootDir: string;
  readonly socket: string;
  readonly driver: RunningHostpathDriver;
  readonly csi: CsiClient;
  close(): Promise<void>;
}

export async function startEnv(o: { attachRequired?: boolean } = {}): Promise<Env> {
  const dir = mkdtempSync(path.join(tmpdir(), 'vm-it-'));
  const rootDir = path.join(dir, 'kubelet');
  mkdirSync(rootDir);
  const api = await startTestApiServer();
  const client = api.plane.client;
  const abort = new AbortController();
  const socket = path.join(dir, 'csi.sock');
  const driver = await startHostpathDriver({
    endpoint: socket,
    nodeId: NODE,
    stateDir: path.join(dir, 'hostpath'),
    signal: abort.signal,
  });
  const csi = new CsiClient({ endpoint: socket });
  await client.resource('Node').create({ metadata: { name: NODE } });
  await client
    .resource('CSIDriver')
    .create({ metadata: { name: DRIVER }, spec: { attachRequired: o.attachRequired ?? false, podInfoOnMount: true } });
  return {
    api,
    client,
    dir,
    rootDir,
    socket,
    driver,
    csi,
    close: async () => {
      csi.close();
      abort.abort();
      await driver.done;
      await api.close();
      expect(await mountsUnder(dir)).toEqual([]);
      const loops = (await listLoopDevices()).filter((l) => l.backingFile.startsWith(dir));
      expect(loops).toEqual([]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** CreateVolume on the driver, then a static PV with its csi source and a claim pre-bound to it. */
export async function staticClaim(
  env: Env,
  name: string,
  o: { block?: boolean; bytes?: number } = {},
): Promise<{ pv: string; handle: string }> {
  const bytes = o.bytes ?? 1024 * 1024;
  const cap = o.block
    ? { block: {}, accessMode: { mode: 'SINGLE_NODE_WRITER' as const } }
    : { mount: {}, accessMode: { mode: 'SINGLE_NODE_WRITER' as const } };
  const created = await env.csi.createVolume({
    name,
    capacityRange: { requiredBytes: bytes },
    volumeCapabilities: [cap],
  });
  const handle = created.volume?.volumeId ?? '';
  const pv = `pv-${name}`;
  await env.client.resource('PersistentVolume').create({
    metadata: { name: pv },
    spec: {
      capacity: { storage: String(bytes) },
      accessModes: ['ReadWriteOnce'],
      storageClassName: '',
      volumeMode: o.block ? 'Block' : 'Filesystem',
      csi: { driver: DRIVER, volumeHandle: handle },
    },
  });
  const pvc: PersistentVolumeClaim = {
    metadata: { name, namespace: 'default' },
    spec: {
      accessModes: ['ReadWriteOnce'],
      storageClassName: '',
      volumeName: pv,
      volumeMode: o.block ? 'Block' : 'Filesystem',
      resources: { requests: { storage: String(bytes) } },
    },
  };
  await env.client.resource('PersistentVolumeClaim').create(pvc);
  await until(
    `claim ${name} bound`,
    async () =>
      (await env.client.resource('PersistentVolumeClaim').get(name, { namespace: 'default' })).status?.phase ===
      'Bound',
  );
  return { pv, handle };
}

export function claimPod(
  name: string,
  claims: Array<{ volume: string; claim: string; readOnly?: boolean }>,
  o: { subPaths?: Array<{ volume: string; subPath: string }> } = {},
): Pod {
  return {
    metadata: { name, namespace: 'default' },
    spec: {
      nodeName: NODE,
      containers: [
        {
          name: 'app',
          image: 'busybox',
          volumeMounts: [
            ...claims.map((c) => ({ name: c.volume, mountPath: `/data/${c.volume}` })),
            ...(o.subPaths ?? []).map((s, i) => ({ name: s.volume, mountPath: `/sub/${i}`, subPath: s.subPath })),
          ],
        },
      ],
      volumes: claims.map((c) => ({
        name: c.volume,
        persistentVolumeClaim: { claimName: c.claim, ...(c.readOnly ? { readOnly: true } : {}) },
      })),
    },
  };
}

export async function createPod(env: Env, pod: Pod): Promise<Pod> {
  return env.client.resource('Pod').create(pod);
}

export async function waitRunning(
  env: Env,
  name: string,
  timeoutMs = 20_000,
): Promise<{ pod: Pod; hostPaths: Record<string, string> }> {
  const pod = await until(
    `pod ${name} Running`,
    async () => {
      const p = await env.client.resource('Pod').get(name, { namespace: 'default' });
      return p.status?.phase === 'Running' && p.metadata?.annotations?.[HOST_PATHS_ANNOTATION] ? p : undefined;
    },
    timeoutMs,
  );
  return {
    pod,
    hostPaths: JSON.parse(pod.metadata?.annotations?.[HOST_PATHS_ANNOTATION] ?? '{}') as Record<string, string>,
  };
}

export async function deletePodAndWait(env: Env, name: string): Promise<void> {
  await env.client.resource('Pod').delete(name, { namespace: 'default' });
  await until(`pod ${name} gone`, async () => {
    try {
      await env.client.resource('Pod').get(name, { namespace: 'default' });
      return false;
    } catch (e) {
      return e instanceof NotFoundError;
    }
  });
}

export async function events(
  env: Env,
  podName: string,
): Promise<Array<{ reason: string; message: string; type: string }>> {
  const list = await env.client.resource('Event').list({ namespace: 'default' });
  return list.items
    .filter((e) => e.involvedObject.name === podName)
    .map((e) => ({ reason: e.reason ?? '', message: e.message ?? '', type: e.type ?? '' }));
}
