/** The registrar's /healthz: 200 only while its registration socket exists and the driver answers. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type HealthCheck = () => Promise<{ ok: true } | { ok: false; reason: string }>;

/** Parses `host:port`, `:port` or `[v6]:port`. */
export function parseHostPort(s: string): { host?: string; port: number } {
  const i = s.lastIndexOf(':');
  if (i < 0) throw new Error(`--http-endpoint must be host:port, got ${JSON.stringify(s)}`);
  const rawHost = s.slice(0, i).replace(/^\[(.*)\]$/, '$1');
  const port = Number(s.slice(i + 1));
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid port in ${JSON.stringify(s)}`);
  return rawHost === '' ? { port } : { host: rawHost, port };
}

export async function serveHealthz(endpoint: string, check: HealthCheck): Promise<{ server: Server; port: number }> {
  const { host, port } = parseHostPort(endpoint);
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/healthz') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    check().then(
      (r) => {
        if (r.ok) res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
        else res.writeHead(503, { 'content-type': 'text/plain' }).end(`${r.reason}\n`);
      },
      (e: unknown) =>
        res.writeHead(503, { 'content-type': 'text/plain' }).end(`${e instanceof Error ? e.message : String(e)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return { server, port: (server.address() as AddressInfo).port };
}
