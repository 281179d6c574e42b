import type { IncomingMessage } from 'node:http';
import { request, Agent } from 'node:https';

export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  /** Parsed JSON body (undefined when not JSON). */
  readonly body: any;
}

export interface Target {
  readonly baseUrl: string;
  readonly token: string;
  readonly caPem: string;
}

const agents = new WeakMap<Target, Agent>();

/** Reads a whole response: status, headers, text, and the body parsed when it is JSON. */
export function readResponse(res: IncomingMessage): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('error', reject);
    res.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: parsed });
    });
  });
}

/** One HTTPS request to the test API server with the admin token. */
export function api(
  t: Target,
  method: string,
  path: string,
  body?: unknown,
  o: { contentType?: string; accept?: string; token?: string | null; headers?: Record<string, string> } = {},
): Promise<RawResponse> {
  let agent = agents.get(t);
  if (!agent) agents.set(t, (agent = new Agent({ ca: t.caPem, keepAlive: true })));
  const url = new URL(path, t.baseUrl);
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  const headers: Record<string, string> = { Accept: o.accept ?? 'application/json', ...(o.headers ?? {}) };
  const token = o.token === undefined ? t.token : o.token;
  if (token) headers.Authorization = `Bearer ${token}`;
  if (payload !== undefined) {
    headers['Content-Type'] = o.contentType ?? 'application/json';
    headers['Content-Length'] = String(Buffer.byteLength(payload));
  }
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent }, (res) => void readResponse(res).then(resolve, reject));
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** Opens a watch and collects its events until `until` returns true for the collected list. */
export function watchUntil(
  t: Target,
  path: string,
  until: (events: any[]) => boolean,
  o: { accept?: string; timeoutMs?: number } = {},
): Promise<any[]> {
  let agent = agents.get(t);
  if (!agent) agents.set(t, (agent = new Agent({ ca: t.caPem, keepAlive: true })));
  const url = new URL(path, t.baseUrl);
  return new Promise((resolve, reject) => {
    const events: any[] = [];
    let buf = '';
    const req = request(
      url,
      {
        method: 'GET',
        headers: { Accept: o.accept ?? 'application/json', Authorization: `Bearer ${t.token}` },
        agent: new Agent({ ca: t.caPem }),
      },
      (res) => {
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          buf += c;
          let i;
          while ((i = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, i);
            buf = buf.slice(i + 1);
            if (line.trim()) events.push(JSON.parse(line));
          }
          if (until(events)) {
            req.destroy();
            resolve(events);
          }
        });
        res.on('end', () => resolve(events));
      },
    );
    req.on('error', (e) => ((e as NodeJS.ErrnoException).code === 'ECONNRESET' ? resolve(events) : reject(e)));
    req.end();
    if (o.timeoutMs)
      setTimeout(() => {
        req.destroy();
        resolve(events);
      }, o.timeoutMs).unref();
  });
}
