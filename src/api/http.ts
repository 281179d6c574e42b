import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { badRequest, HttpError, toStatus } from './status.js';

export const MAX_BODY_BYTES = 3 * 1024 * 1024; // kube-apiserver's default request size limit

/** One media type of an Accept header, e.g. `application/json;as=Table;v=v1;g=meta.k8s.io`. */
export interface MediaType {
  readonly type: string;
  readonly params: Readonly<Record<string, string>>;
}

export function parseAccept(header: string | undefined): MediaType[] {
  if (!header) return [{ type: 'application/json', params: {} }];
  return header.split(',').map((part) => {
    const [type, ...ps] = part.split(';').map((s) => s.trim());
    const params: Record<string, string> = {};
    for (const p of ps) {
      const i = p.indexOf('=');
      if (i > 0) params[p.slice(0, i).trim()] = p.slice(i + 1).trim();
    }
    return { type: (type ?? '').toLowerCase(), params };
  });
}

export function mediaTypeString(m: MediaType): string {
  return [m.type, ...Object.entries(m.params).map(([k, v]) => `${k}=${v}`)].join(';');
}

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    const b = c as Buffer;
    size += b.length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728');
    chunks.push(b);
  }
  return Buffer.concat(chunks);
}

/** Decodes a request body as JSON (or YAML when the content type says so). */
export function decodeBody(body: Buffer, contentType: string | undefined): unknown {
  const text = body.toString('utf8');
  if (text.trim() === '') throw badRequest('Object \'Kind\' is missing in \'\'');
  const ct = (contentType ?? 'application/json').split(';')[0]!.trim().toLowerCase();
  try {
    if (ct === 'application/yaml' || ct === 'application/x-yaml' || ct === 'text/yaml') return parseYaml(text, { version: '1.1' });
    return JSON.parse(text);
  } catch (e) {
    throw badRequest(`error decoding body: ${(e as Error).message}`);
  }
}

export interface SendOptions {
  readonly contentType?: string;
  readonly headers?: Readonly<Record<string, string | string[]>>;
}

export function sendJson(res: ServerResponse, code: number, body: unknown, o: SendOptions = {}): void {
  sendRaw(res, code, typeof body === 'string' ? body : JSON.stringify(body), o);
}

export function sendRaw(res: ServerResponse, code: number, body: string | Buffer, o: SendOptions = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const buf = typeof body === 'string' ? Buffer.from(body) : body;
  res.writeHead(code, {
    'Content-Type': o.contentType ?? 'application/json',
    'Content-Length': String(buf.length),
    'Cache-Control': 'no-cache, private',
    ...(o.headers ?? {}),
  });
  res.end(buf);
}

export function sendError(res: ServerResponse, e: unknown): void {
  const s = toStatus(e);
  sendJson(res, s.code, s);
}
