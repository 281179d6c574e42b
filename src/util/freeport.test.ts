import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freeLoopbackPort } from './freeport.js';

describe('freeLoopbackPort', () => {
  it('returns a port another listener can then bind on 127.0.0.1', async () => {
    const port = await freeLoopbackPort();
    expect(port).toBeGreaterThan(0);
    const srv = createServer();
    await new Promise<void>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(port, '127.0.0.1', resolve);
    });
    await new Promise<void>((resolve) => srv.close(() => resolve()));
  });
});
