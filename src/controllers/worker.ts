/**
 * Entry point of the controllers' worker thread in `stowage up`: the API server and the
 * controllers then use both cores, as they would as separate processes, while staying one
 * program. The thread talks to the API server like any client (its private unix socket) and
 * sends its rendered metrics to the main thread, which serves them on /metrics.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { RestClient } from '../client/index.js';
import { COMPONENTS, componentUserAgent } from '../kube/version.js';
import { MetricsRegistry } from '../util/metrics.js';
import { runControllers } from './manager.js';
import type { EvictionLimits } from './nodelifecycle/zones.js';

export interface ControllersWorkerData {
  readonly socketPath: string;
  readonly token: string;
  /** The node lifecycle flags of `stowage up`. */
  readonly nodeMonitorGracePeriodMs?: number;
  readonly nodeMonitorPeriodMs?: number;
  readonly evictionLimits?: EvictionLimits;
}

export type FromControllersWorker = { kind: 'metrics'; text: string } | { kind: 'stopped' };
export type ToControllersWorker = { kind: 'stop' };

const METRICS_PUSH_MS = 2_000;

const data = workerData as ControllersWorkerData;
const port = parentPort!;
const client = new RestClient({
  server: 'http://stowage-apiserver',
  socketPath: data.socketPath,
  token: data.token,
  maxSockets: 64,
  userAgent: componentUserAgent(COMPONENTS.controllerManager),
});
const metrics = new MetricsRegistry();
const stop = new AbortController();
port.on('message', (m: ToControllersWorker) => {
  if (m.kind === 'stop') stop.abort();
});
const push = setInterval(
  () => port.postMessage({ kind: 'metrics', text: metrics.render() } satisfies FromControllersWorker),
  METRICS_PUSH_MS,
);
await runControllers({
  client,
  signal: stop.signal,
  metrics,
  nodeMonitorGracePeriodMs: data.nodeMonitorGracePeriodMs,
  nodeMonitorPeriodMs: data.nodeMonitorPeriodMs,
  evictionLimits: data.evictionLimits,
});
clearInterval(push);
client.close();
port.postMessage({ kind: 'stopped' } satisfies FromControllersWorker);
port.close();
