/** Shared setup of the plugin manager integration tests: API server, node agent, drivers, registrars. */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { Event, Node } from 'kubernetes-types/core/v1.js';
import type { CSINode } from 'kubernetes-types/storage/v1.js';
import { startTestApiServer, type TestApiServer } from '../src/cli/testing.test-kit.js';
import { RestClient } from '../src/client/rest.js';
import { registrationService } from '../src/csi/proto/index.js';
import type { PluginInfo, RegistrationStatus } from '../src/csi/proto/types.js';
import { runRegistrar } from '../src/csi/registrar/registrar.js';
import { startHostpathDriver } from '../src/csi/hostpath/index.js';
import { startNodeAgent, type NodeAgent } from '../src/node/agent.js';
import { NotFoundError } from '../src/util/errors.js';
import type { Logger } from '../src/util/log.js';

export const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };
export const NODE = 'node-it';

export interface Env {
  readonly dir: string;
  readonly api: TestApiServer;
  readonly client: RestClient;
  readonly root: string;
  readonly registry: string;
  agent?: NodeAgent;
  /** Aborted at teardown: stops agents, drivers and registrars started with it. */
  readonly ac: AbortController;
  readonly cleanups: Array<() => Promise<void> | void>;
}

export async function setupEnv(): Promise<Env> {
  const dir = mkdtempSync(join(tmpdir(), 'stowage-pm-'));
  mkdirSync(join(dir, 'api'));
  let api: TestApiServer;
  try {
    api = await startTestApiServer({ dataDir: join(dir, 'api') });
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  const client = new RestClient({ server: api.baseUrl, token: api.token, caPem: api.caPem });
  const root = join(dir, 'node');
  return { dir, api, client, root, registry: join(root, 'plugins_registry'), ac: new AbortController(), cleanups: [] };
}

export async function teardownEnv(env: Env): Promise<void> {
  env.ac.abort();
  await env.agent?.stop();
  for (const c of env.cleanups.splice(0).reverse()) await c();
  env.client.close();
  await env.api.close();
  rmSync(env.dir, { recursive: true, force: true });
}

export async function startAgent(env: Env, o: { healthPeriodMs?: number } = {}): Promise<NodeAgent> {
  const ac = new AbortController();
  env.ac.signal.addEventListener('abort', () => ac.abort(), { once: true });
  const agent = await startNodeAgent({
    client: env.client,
    nodeName: NODE,
    rootDir: env.root,
    signal: ac.signal,
    log: quiet,
    backoffCapMs: 2_000,
    healthPeriodMs: o.healthPeriodMs,
  });
  env.agent = agent;
  return agent;
}

/** The hostpath driver on `<root>/plugins/<name>/csi.sock`. */
export async function startHostpath(
  env: Env,
  name = 'hostpath.csi.stowage.io',
  nodeId = 'hp-node-1',
  maxVolumesPerNode = 0,
) {
  const ac = new AbortController();
  const sock = join(env.root, 'plugins', name, 'csi.sock');
  mkdirSync(join(env.root, 'plugins', name), { recursive: true });
  const d = await startHostpathDriver({
    endpoint: `unix://${sock}`,
    nodeId,
    stateDir: join(env.dir, `state-${name}`),
    driverName: name,
    maxVolumesPerNode,
    signal: ac.signal,
    logger: quiet,
  });
  const stop = async (): Promise<void> => {
    ac.abort();
    await d.done;
  };
  env.cleanups.push(stop);
  return { socket: sock, stop };
}

/** Our registrar for the driver at `driverSock`; `stop()` removes its socket. */
export async function startRegistrarFor(env: Env, driverSock: string) {
  const ac = new AbortController();
  let ready!: (s: string) => void;
  const readyP = new Promise<string>((r) => (ready = r));
  const run = runRegistrar({
    csiAddress: `unix://${driverSock}`,
    kubeletRegistrationPath: driverSock,
    pluginRegistrationPath: env.registry,
    timeoutMs: 2_000,
    signal: ac.signal,
    log: quiet,
    onReady: (r) => ready(r.socketPath),
  });
  run.catch(() => undefined); // a refused registrar rejects; tests look at `run` when they care
  const socketPath = await Promise.race([
    readyP,
    run.then(() => {
      throw new Error('registrar ended before ready');
    }),
  ]);
  const stop = async (): Promise<void> => {
    ac.abort();
    await run.catch(() => undefined);
  };
  env.cleanups.push(stop);
  return { socketPath, run, stop };
}

/** A registration server we control, for refusal cases: answers GetInfo with `info`, records notifications. */
export async function startFakeRegistration(env: Env, socketPath: string, info: PluginInfo) {
  const notified: RegistrationStatus[] = [];
  const server = new grpc.Server();
  server.addService(registrationService(), {
    GetInfo: (_c: unknown, cb: grpc.sendUnaryData<PluginInfo>) => cb(null, info),
    NotifyRegistrationStatus: (c: grpc.ServerUnaryCall<RegistrationStatus, object>, cb: grpc.sendUnaryData<object>) => {
      notified.push(c.request);
      cb(null, {});
    },
  });
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${socketPath}`, grpc.ServerCredentials.createInsecure(), (e) =>
      e ? reject(e) : resolve(),
    ),
  );
  const stop = (): Promise<void> => new Promise((r) => server.tryShutdown(() => r()));
  env.cleanups.push(stop);
  return { notified, stop };
}

export async function getNode(env: Env): Promise<Node> {
  return env.client.resource('Node').get(NODE);
}

export async function getCsiNode(env: Env): Promise<CSINode | undefined> {
  try {
    return await env.client.resource('CSINode').get(NODE);
  } catch (e) {
    if (e instanceof NotFoundError) return undefined;
    throw e;
  }
}

export function nodeIds(node: Node): Record<string, string> {
  const raw = node.metadata?.annotations?.['csi.volume.kubernetes.io/nodeid'];
  return raw ? (JSON.parse(raw) as Record<string, string>) : {};
}

export function pluginStatuses(node: Node): Record<string, { state: string; reason?: string; since: string }> {
  const raw = node.metadata?.annotations?.['stowage.io/csi-plugins'];
  return raw ? (JSON.parse(raw) as Record<string, { state: string; reason?: string; since: string }>) : {};
}

export async function nodeEvents(env: Env): Promise<Event[]> {
  await env.agent?.recorder.flush();
  const list = await env.client.resource('Event').list({ namespace: 'default' });
  return list.items.filter((e) => e.involvedObject.kind === 'Node' && e.involvedObject.name === NODE);
}
