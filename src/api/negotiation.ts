/**
 * Media types, as kube-apiserver negotiates them: what a request body may be (Content-Type) and
 * what a response is written as (Accept). Bodies are decoded from JSON or YAML; responses are
 * JSON (a meta.k8s.io Table when asked) or YAML. Protobuf is never written (client-go asks
 * `application/vnd.kubernetes.protobuf, application/json` and gets JSON) and read only for the few
 * kinds kubectl sends no other way (protobody.ts).
 */
import { ApiNotAcceptableError, ApiUnsupportedMediaTypeError } from './status.js';

/** One media type of an Accept header, e.g. `application/json;as=Table;v=v1;g=meta.k8s.io`. */
export interface MediaType {
  readonly type: string;
  readonly params: Readonly<Record<string, string>>;
}

const JSON_TYPE = 'application/json';
const YAML_TYPE = 'application/yaml';
const PROTOBUF_TYPE = 'application/vnd.kubernetes.protobuf';

/** The media types kube-apiserver names in its 406 and 415 messages. */
const KUBE_MEDIA_TYPES = `${JSON_TYPE}, ${YAML_TYPE}, ${PROTOBUF_TYPE}`;
/** What this server really reads and writes. */
const SERVED_MEDIA_TYPES = `${JSON_TYPE}, ${YAML_TYPE}`;

/** The 415 for a protobuf body of a kind this server does not decode from protobuf (see protobody.ts). */
export const PROTOBUF_UNSUPPORTED = `the body of the request was in ${PROTOBUF_TYPE}, which this server does not decode - accepted media types include: ${SERVED_MEDIA_TYPES}`;

export function parseMediaType(s: string): MediaType {
  const [type, ...ps] = s.split(';').map((x) => x.trim());
  const params: Record<string, string> = {};
  for (const p of ps) {
    const i = p.indexOf('=');
    if (i > 0) params[p.slice(0, i).trim()] = p.slice(i + 1).trim();
  }
  return { type: (type ?? '').toLowerCase(), params };
}

/** The media types of an Accept header in the order given; none given means JSON. */
export function parseAccept(header: string | undefined): MediaType[] {
  if (!header || !header.trim()) return [{ type: JSON_TYPE, params: {} }];
  return header
    .split(',')
    .filter((p) => p.trim() !== '')
    .map(parseMediaType);
}

export function mediaTypeString(m: MediaType): string {
  return [m.type, ...Object.entries(m.params).map(([k, v]) => `${k}=${v}`)].join(';');
}

/** The format of a request body. */
export type BodyFormat = 'json' | 'yaml' | 'protobuf';

/**
 * The format of a create/update body from its Content-Type (none means JSON, as kube-apiserver
 * takes its first serializer). Anything else, patch types included, is 415 UnsupportedMediaType.
 */
export function bodyFormat(contentType: string | undefined): BodyFormat {
  if (contentType === undefined || contentType.trim() === '') return 'json';
  const { type } = parseMediaType(contentType);
  if (type === JSON_TYPE) return 'json';
  if (type === YAML_TYPE) return 'yaml';
  if (type === PROTOBUF_TYPE) return 'protobuf';
  throw new ApiUnsupportedMediaTypeError(
    `the body of the request was in an unknown format - accepted media types include: ${KUBE_MEDIA_TYPES}`,
  );
}

/** How a response is written: JSON, YAML, or a meta.k8s.io/v1 Table (in JSON). */
export type ResponseFormat = 'json' | 'yaml' | 'table';

export interface NegotiateOptions {
  /** A watch: YAML cannot be streamed. */
  readonly stream?: boolean;
  /** Whether a Table may be answered (resource reads). */
  readonly table?: boolean;
}

function isTable(m: MediaType): boolean {
  return m.params.as === 'Table' && (m.params.g === 'meta.k8s.io' || m.params.g === undefined);
}

/** What one Accept entry lets this server answer, or undefined when it cannot produce it. */
function producible(m: MediaType, o: NegotiateOptions): ResponseFormat | undefined {
  if (m.params.q !== undefined && Number(m.params.q) === 0) return undefined;
  const json = m.type === JSON_TYPE || m.type === '*/*' || m.type === 'application/*';
  if (json && m.params.as === undefined) return 'json';
  if (m.type === JSON_TYPE && o.table && isTable(m)) return 'table';
  if (m.type === YAML_TYPE && m.params.as === undefined && !o.stream) return 'yaml';
  return undefined;
}

/**
 * The response format an Accept header asks for. A Table anywhere in the list wins (kubectl lists
 * it first, then plain JSON); otherwise the first entry the server can produce. Nothing producible
 * is 406 NotAcceptable with kube-apiserver's message, or, when only protobuf was asked, one naming
 * the JSON this server speaks.
 */
export function negotiateResponse(accept: string | undefined, o: NegotiateOptions = {}): ResponseFormat {
  const types = parseAccept(accept);
  if (o.table && types.some((m) => producible(m, o) === 'table')) return 'table';
  for (const m of types) {
    const f = producible(m, o);
    if (f) return f;
  }
  if (types.every((m) => m.type === PROTOBUF_TYPE)) {
    throw new ApiNotAcceptableError(`406: Not Acceptable\n\nAvailable representations: ${SERVED_MEDIA_TYPES}`);
  }
  throw new ApiNotAcceptableError(`406: Not Acceptable\n\nAvailable representations: ${KUBE_MEDIA_TYPES}`);
}

/** Content-Type of a response in format `f` (a Table is JSON). */
export function contentTypeOf(f: ResponseFormat): string {
  return f === 'yaml' ? YAML_TYPE : JSON_TYPE;
}
