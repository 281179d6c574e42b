import { createServer } from 'node:net';

/** A TCP port on 127.0.0.1 that was free a moment ago (for tests and benchmarks that start servers). */
export async function freeLoopbackPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', resolve);
  });
  const addr = srv.address();
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  if (addr === null || typeof addr === 'string') throw new Error('no TCP address for a loopback listener');
  return addr.port;
}
