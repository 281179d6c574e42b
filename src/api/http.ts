import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { bodyFormat, contentTypeOf, PROTOBUF_UNSUPPORTED, type ResponseFormat } from './negotiation.js';
import { decodeProtobufBody } from './protobody.js';
import { ApiRequestEntityTooLargeError, badRequest, toStatus } from './status.js';

export const MAX_BODY_BYTES = 3 * 1024 * 1024; // kube-apiserver's default request size limit

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    const b = c as Buffer;
    size += b.length;
    if (size > MAX_BODY_BYTES) throw new ApiRequestEntityTooLargeError('Request entity too large: limit is 3145728');
    chunks.push(b);
  }
  return Buffer.concat(chunks);
}

/**
 * Decodes a request body as its Content-Type says: JSON or YAML (YAML 1.1, as kubectl parses it);
 * any other type is 415 (see negotiation.ts).
 */
export function decodeBody(body: Buffer, contentType: string | undefined): unknown {
  const format = bodyFormat(contentType);
  if (format === 'protobuf') return decodeProtobufBody(body, PROTOBUF_UNSUPPORTED);
  const text = body.toString('utf8');
  if (text.trim() === '') throw badRequest("Object 'Kind' is missing in ''");
  try {
    if (format === 'yaml') return parseYaml(text, { version: '1.1' });
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

/**
 * Sends a JSON document (`json`, already serialized) in the negotiated format: as it is, or
 * re-encoded as YAML.
 */
export function sendAs(
  res: ServerResponse,
  format: ResponseFormat,
  code: number,
  json: string,
  headers?: SendOptions['headers'],
): void {
  const body = format === 'yaml' ? stringifyYaml(JSON.parse(json)) : json;
  sendRaw(res, code, body, { contentType: contentTypeOf(format), headers });
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
