/**
 * B-CSI: full node-side volume cycles through CsiClient against the built-in hostpath driver:
 * CreateVolume → NodeStageVolume → NodePublishVolume → NodeUnpublishVolume → NodeUnstageVolume →
 * DeleteVolume (the driver advertises STAGE_UNSTAGE_VOLUME, so publish needs a stage first).
 * Real unix socket, real bind mounts: needs root. Driver and client share this process.
 *   node dist/bench/csi.js [N=200] [C=4]
 * Prints one line: cycles/s and p50/p99 per RPC from the client's call trace.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CsiClient, type CallTrace } from '../src/csi/client.js';
import { startHostpathDriver } from '../src/csi/hostpath/index.js';
import { percentile } from './harness.js';
import type { Logger } from '../src/util/log.js';

const N = Number(process.argv[2] ?? 200);
const C = Number(process.argv[3] ?? 4);
const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };

const dir = mkdtempSync(join(tmpdir(), 'stowage-bench-csi-'));
const ac = new AbortController();
const running = await startHostpathDriver({
  endpoint: join(dir, 'csi.sock'),
  nodeId: 'bench-node',
  stateDir: join(dir, 'state'),
  signal: ac.signal,
  logger: quiet,
});
const client = new CsiClient({ endpoint: running.socketPath, traceCapacity: N * 6 + 16 });
const byMethod = new Map<string, number[]>();
client.onCall((t: CallTrace) => {
  if (t.code !== 'OK') return; // a failed call also rejects its cycle, which ends the run
  const name = t.method.slice(t.method.lastIndexOf('/') + 1);
  const list = byMethod.get(name) ?? [];
  list.push(t.durationMs);
  byMethod.set(name, list);
});

const cap = { mount: {}, accessMode: { mode: 'SINGLE_NODE_WRITER' as const } };
async function cycle(i: number): Promise<void> {
  const { volume } = await client.createVolume({
    name: `bench-${i}`,
    capacityRange: { requiredBytes: 1 << 20 },
    volumeCapabilities: [cap],
  });
  const volumeId = volume!.volumeId;
  const pod = join(dir, 'pods', String(i));
  mkdirSync(pod, { recursive: true });
  const staging = join(pod, 'staging');
  const target = join(pod, 'mount');
  mkdirSync(staging);
  await client.nodeStageVolume({ volumeId, stagingTargetPath: staging, volumeCapability: cap });
  await client.nodePublishVolume({ volumeId, stagingTargetPath: staging, targetPath: target, volumeCapability: cap });
  await client.nodeUnpublishVolume({ volumeId, targetPath: target });
  await client.nodeUnstageVolume({ volumeId, stagingTargetPath: staging });
  await client.deleteVolume({ volumeId });
}

try {
  await client.connect({ timeoutMs: 10_000 });
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: C }, async () => {
      for (let i = next++; i < N; i = next++) await cycle(i);
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  const order = [
    'CreateVolume',
    'NodeStageVolume',
    'NodePublishVolume',
    'NodeUnpublishVolume',
    'NodeUnstageVolume',
    'DeleteVolume',
  ];
  const per = order
    .map((m) => {
      const s = [...(byMethod.get(m) ?? [])].sort((a, b) => a - b);
      return `${m} p50 ${percentile(s, 50).toFixed(1)}ms p99 ${percentile(s, 99).toFixed(1)}ms`;
    })
    .join('; ');
  console.log(`csi: ${N} cycles, ${C} concurrent: ${(N / secs).toFixed(1)} cycles/s; ${per}`);
} finally {
  client.close();
  ac.abort();
  await running.done;
  rmSync(dir, { recursive: true, force: true });
}
