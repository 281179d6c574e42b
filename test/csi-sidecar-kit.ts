/** Shared setup for the csi-sidecar integration tests: API server, hostpath driver, sidecar. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Event, PersistentVolumeClaim } from 'kubernetes-types/core/v1.js';
import type { StorageClass } from 'kubernetes-types/storage/v1.js';
import { vi } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../src/cli/testing.test-kit.js';
import { loadKubeconfig, RestClient } from '../src/client/index.js';
import { CsiClient, type CallOptions } from '../src/csi/client.js';
import { startHostpathDriver, TOPOLOGY_KEY, type RunningHostpathDriver } from '../src/csi/hostpath/index.js';
import type * as T from '../src/csi/proto/types.js';
import { runCsiSidecar, type CsiSidecarOptions } from '../src/csi/sidecar/sidecar.js';
import type { Logger } from '../src/util/log.js';

export const DRIVER = 'hostpath.csi.stowage.io';
export const NODE = 'n1';
export { TOPOLOGY_KEY };

export function quietLogger(): Logger {
  const out = (level: string) => (msg: string, f?: Record<string, unknown>) =>
    process.stderr.write(`${level} [sidecar-test] ${msg} ${f ? JSON.stringify(f) : ''}\n`);
  const l: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: out('WARN'),
    error: out('ERROR'),
    child: () => l,
  };
  return l;
}

/** A CsiClient that records controller requests and lets a test hook after CreateVolume. */
export class RecordingCsiClient extends CsiClient {
  readonly creates: T.CreateVolumeRequest[] = [];
  readonly publishes: T.ControllerPublishVolumeRequest[] = [];
  readonly expands: T.ControllerExpandVolumeRequest[] = [];
  readonly deletes: T.DeleteVolumeRequest[] = [];
  /** Controller capabilities to hide from the sidecar (to play a less capable driver). */
  hideControllerCaps: readonly string[] = [];
  afterCreate?: () => void;
  afterDelete?: () => void;
  failExpandAbove?: bigint;
  override async createVolume(req: T.CreateVolumeRequest, o?: CallOptions): Promise<T.CreateVolumeResponse__Output> {
    this.creates.push(req);
    const r = await super.createVolume(req, o);
    this.afterCreate?.();
    return r;
  }
  override async controllerCapabilities(): Promise<ReadonlySet<T.ControllerCapabilityName>> {
    const all = await super.controllerCapabilities();
    return new Set([...all].filter((c) => !this.hideControllerCaps.includes(c)));
  }
  override async deleteVolume(req: T.DeleteVolumeRequest, o?: CallOptions): Promise<T.DeleteVolumeResponse__Output> {
    this.deletes.push(req);
    const r = await super.deleteVolume(req, o);
    this.afterDelete?.();
    return r;
  }
  override controllerPublishVolume(
    req: T.ControllerPublishVolumeRequest,
    o?: CallOptions,
  ): Promise<T.ControllerPublishVolumeResponse__Output> {
    this.publishes.push(req);
    return super.controllerPublishVolume(req, o);
  }
  override controllerExpandVolume(
    req: T.ControllerExpandVolumeRequest,
    o?: CallOptions,
  ): Promise<T.ControllerExpandVolumeResponse__Output> {
    this.expands.push(req);
    return super.controllerExpandVolume(req, o);
  }
}

export interface Env {
  srv: TestApiServer;
  client: RestClient;
  driver: RunningHostpathDriver;
  stateDir: string;
  socket: string;
  /** Starts a sidecar; returns its stopper (resolves when it has stopped). */
  startSidecar(o?: Partial<CsiSidecarOptions> & { hideControllerCaps?: string[] }): {
    csi: RecordingCsiClient;
    stop(): Promise<void>;
    done: Promise<void>;
  };
  close(): Promise<void>;
}

export async function startEnv(o: { enableAttach?: boolean; capacityBytes?: number } = {}): Promise<Env> {
  const srv = await startTestApiServer();
  const client = new RestClient(await loadKubeconfig(srv.kubeconfigPath));
  const dir = mkdtempSync(join(tmpdir(), 'stowage-sidecar-'));
  const stateDir = join(dir, 'state');
  const socket = join(dir, 'csi.sock');
  const driverAc = new AbortController();
  const driver = await startHostpathDriver({
    endpoint: socket,
    nodeId: NODE,
    stateDir,
    enableAttach: o.enableAttach ?? false,
    ...(o.capacityBytes !== undefined ? { capacityBytes: o.capacityBytes } : {}),
    signal: driverAc.signal,
    logger: quietLogger(),
  });
  await client.resource('Node').create({ metadata: { name: NODE, labels: { [TOPOLOGY_KEY]: NODE } } });
  await client.resource('CSINode').create({
    metadata: { name: NODE },
    spec: { drivers: [{ name: DRIVER, nodeID: NODE, topologyKeys: [TOPOLOGY_KEY] }] },
  });
  const sidecars: Array<{ stop(): Promise<void> }> = [];
  return {
    srv,
    client,
    driver,
    stateDir,
    socket,
    startSidecar(so = {}) {
      const ac = new AbortController();
      const { hideControllerCaps, ...rest } = so;
      const csi = new RecordingCsiClient({ endpoint: socket, log: quietLogger() });
      csi.hideControllerCaps = hideControllerCaps ?? [];
      const done = runCsiSidecar({
        client,
        csi,
        signal: ac.signal,
        rateLimit: { initialMs: 50, capMs: 1_000 },
        resyncMs: 0,
        log: quietLogger(),
        ...rest,
      });
      done.catch(() => undefined);
      const stop = async (): Promise<void> => {
        ac.abort();
        await done.catch(() => undefined);
        csi.close();
      };
      sidecars.push({ stop });
      return { csi, stop, done };
    },
    async close() {
      for (const s of sidecars) await s.stop();
      driverAc.abort();
      await driver.done;
      client.close();
      await srv.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function storageClass(name: string, extra: Partial<StorageClass> = {}): StorageClass {
  return {
    metadata: { name },
    provisioner: DRIVER,
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'Immediate',
    allowVolumeExpansion: true,
    ...extra,
  };
}

export function claim(
  name: string,
  cls: string,
  size = '1Mi',
  extra: Partial<NonNullable<PersistentVolumeClaim['spec']>> = {},
  ns = 'default',
): PersistentVolumeClaim {
  return {
    metadata: { name, namespace: ns },
    spec: {
      accessModes: ['ReadWriteOnce'],
      storageClassName: cls,
      resources: { requests: { storage: size } },
      ...extra,
    },
  };
}

/** Waits (polling the API, not sleeping for a fixed time) until `fn` passes. */
export function eventually<T>(fn: () => Promise<T> | T, timeout = 20_000): Promise<T> {
  return vi.waitFor(fn, { timeout, interval: 50 });
}

export async function eventsFor(client: RestClient, ns: string, name: string): Promise<Event[]> {
  const list = await client.resource('Event').list({ namespace: ns });
  return list.items.filter((e) => e.involvedObject.name === name);
}
