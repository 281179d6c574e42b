/**
 * Entry point of the built-in hostpath driver's worker thread in `stowage up`: the driver's mount
 * and losetup processes, state writes and gRPC serving then stay off the API server's event loop,
 * as they would in a separate process.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { startHostpathDriver } from './server.js';

export interface HostpathWorkerData {
  readonly endpoint: string;
  readonly nodeId: string;
  readonly stateDir: string;
  readonly enableAttach: boolean;
}

export type FromHostpathWorker = { kind: 'listening' } | { kind: 'failed'; message: string };
export type ToHostpathWorker = { kind: 'stop' };

const data = workerData as HostpathWorkerData;
const port = parentPort!;
const stop = new AbortController();
port.on('message', (m: ToHostpathWorker) => {
  if (m.kind === 'stop') stop.abort();
});
try {
  const running = await startHostpathDriver({ ...data, signal: stop.signal });
  port.postMessage({ kind: 'listening' } satisfies FromHostpathWorker);
  await running.done;
} catch (e) {
  port.postMessage({ kind: 'failed', message: (e as Error).message } satisfies FromHostpathWorker);
}
port.close();
