/**
 * B4: plugin registration latency — from a registration socket appearing in the node's
 * plugins_registry to the driver's CSINode entry being visible through the API (seen by a watch).
 * In one process, as `stowage up` runs it: API server (SQLite), node agent, one CSI driver serving
 * NodeGetInfo for every driver name, and one registration server per driver.
 *   node dist/bench/register.js [SEQUENTIAL=100] [ROUNDS=10] [CONCURRENT=20]
 * Prints one line: p50/p99 ms one at a time, and with CONCURRENT sockets created at once.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { CSINode } from 'kubernetes-types/storage/v1.js';
import { startTestApiServer } from '../src/cli/testing.test-kit.js';
import { RestClient } from '../src/client/rest.js';
import { csiServices, registrationService } from '../src/csi/proto/index.js';
import { startNodeAgent } from '../src/node/agent.js';
import { setLogLevel, type Logger } from '../src/util/log.js';
import { percentile } from './harness.js';

const SEQUENTIAL = Number(process.argv[2] ?? 100);
const ROUNDS = Number(process.argv[3] ?? 10);
const CONCURRENT = Number(process.argv[4] ?? 20);
const NODE = 'bench-node';
const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };
setLogLevel('error');

const dir = mkdtempSync(join(tmpdir(), 'stowage-bench-register-'));
mkdirSync(join(dir, 'api'));
const api = await startTestApiServer({ dataDir: join(dir, 'api') });
const client = new RestClient({ server: api.baseUrl, token: api.token, caPem: api.caPem });
const ac = new AbortController();
const root = join(dir, 'node');
const agent = await startNodeAgent({ client, nodeName: NODE, rootDir: root, signal: ac.signal, log: quiet });
const registry = agent.dirs.pluginsRegistry;

// One CSI driver answers NodeGetInfo for every registered name.
const driverSock = join(agent.dirs.plugins, 'bench', 'csi.sock');
mkdirSync(join(agent.dirs.plugins, 'bench'), { recursive: true });
const driver = new grpc.Server();
const unary =
  <T>(v: T): grpc.handleUnaryCall<unknown, T> =>
  (_c, cb) =>
    cb(null, v);
driver.addService(csiServices().identity, {
  Probe: unary({ ready: { value: true } }),
  GetPluginInfo: unary({ name: 'bench', vendorVersion: '1' }),
});
driver.addService(csiServices().node, {
  NodeGetInfo: unary({
    nodeId: 'bench-node-id',
    maxVolumesPerNode: 0,
    accessibleTopology: { segments: { 'topology.bench/node': NODE } },
  }),
});
await bind(driver, driverSock);

// Visibility through the API: a CSINode watch records when each driver name first appears / leaves.
const appeared = new Map<string, (t: number) => void>();
const left = new Map<string, () => void>();
const watchAc = new AbortController();
void (async () => {
  for (;;) {
    try {
      for await (const ev of client.resource('CSINode').watch({ signal: watchAc.signal })) {
        const now = performance.now();
        const names = new Set(
          ev.type === 'DELETED' ? [] : ((ev.object as CSINode).spec?.drivers ?? []).map((d) => d.name),
        );
        for (const [n, resolve] of appeared) if (names.has(n)) (appeared.delete(n), resolve(now));
        for (const [n, resolve] of left) if (!names.has(n)) (left.delete(n), resolve());
      }
    } catch {
      /* the watch ended: re-open it */
    }
    if (watchAc.signal.aborted) return;
  }
})();

let seq = 0;
/** Creates one registration socket; resolves with ms until its CSINode entry was visible, and a remover. */
async function registerOne(): Promise<{ ms: number; remove: () => Promise<void> }> {
  const name = `d${seq++}.bench.csi.stowage.io`;
  const sock = join(registry, `${name}-reg.sock`);
  const server = new grpc.Server();
  server.addService(registrationService(), {
    GetInfo: unary({ type: 'CSIPlugin', name, endpoint: driverSock, supportedVersions: ['1.0.0'] }),
    NotifyRegistrationStatus: unary({}),
  });
  const visible = new Promise<number>((resolve) => appeared.set(name, resolve));
  const t0 = performance.now();
  await bind(server, sock);
  const t1 = await visible;
  return {
    ms: t1 - t0,
    remove: async () => {
      const gone = new Promise<void>((resolve) => left.set(name, resolve));
      server.forceShutdown();
      await rm(sock, { force: true });
      await gone;
    },
  };
}

/** Lets the deregistrations' remaining writes (node annotation, status, Events) finish first. */
async function quiesce(): Promise<void> {
  await agent.pluginManager.idle();
  await agent.recorder.flush();
}

const one: number[] = [];
for (let i = 0; i < SEQUENTIAL; i++) {
  const r = await registerOne();
  one.push(r.ms);
  await r.remove();
  await quiesce();
}
const many: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const rs = await Promise.all(Array.from({ length: CONCURRENT }, () => registerOne()));
  many.push(...rs.map((r) => r.ms));
  await Promise.all(rs.map((r) => r.remove()));
  await quiesce();
}

const fmt = (xs: number[]): string => {
  const s = [...xs].sort((a, b) => a - b);
  return `p50 ${percentile(s, 50).toFixed(1)} ms, p99 ${percentile(s, 99).toFixed(1)} ms (n=${s.length})`;
};
console.log(
  `register (B4, socket → CSINode entry visible): one at a time ${fmt(one)}; ${CONCURRENT} at once ${fmt(many)}`,
);

watchAc.abort();
ac.abort();
await agent.stop();
driver.forceShutdown();
client.close();
await api.close();
rmSync(dir, { recursive: true, force: true });

function bind(s: grpc.Server, path: string): Promise<void> {
  return new Promise((resolve, reject) =>
    s.bindAsync(`unix://${path}`, grpc.ServerCredentials.createInsecure(), (e) => (e ? reject(e) : resolve())),
  );
}
