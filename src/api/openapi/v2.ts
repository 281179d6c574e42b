/**
 * `GET /openapi/v2`: the Swagger 2.0 document of the served kinds, built from the same schemas as
 * /openapi/v3. kubectl up to 1.28 needs it for `apply` (it fetches it before computing a patch and
 * fails without it), and asks for it as protobuf (gnostic's openapi_v2.Document); other clients get
 * JSON. Only `definitions` are filled: that is what kubectl's models are built from.
 */
import { createHash } from 'node:crypto';
import {
  definitionClosure,
  definitionRoots,
  INT_OR_STRING,
  OPENAPI_INFO,
  QUANTITY,
  type OpenApiResource,
} from './documents.js';
import { ProtoMessage } from './protowire.js';

/** The media type kubectl asks for (client-go's openAPIV2mimePb); the server answers with the `.v1.0` form. */
export const OPENAPI_V2_PROTOBUF_ACCEPT = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
export const OPENAPI_V2_PROTOBUF_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

export interface OpenApiV2 {
  readonly json: string;
  readonly protobuf: Buffer;
  /** Quoted, as an ETag header. */
  readonly etag: string;
}

type JsonSchema = Record<string, unknown>;

const V3_REF = '#/components/schemas/';
const V2_REF = '#/definitions/';

/** A v3 schema as Swagger 2.0: refs point into `definitions`; a lone `allOf: [$ref]` (v3's way to describe a ref) becomes the ref. */
export function toV2Schema(s: unknown): JsonSchema {
  const src = s as JsonSchema;
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(src)) {
    if (k === '$ref' && typeof v === 'string') out[k] = v.startsWith(V3_REF) ? V2_REF + v.slice(V3_REF.length) : v;
    else if (k === 'properties' && v && typeof v === 'object')
      out[k] = Object.fromEntries(Object.entries(v).map(([p, ps]) => [p, toV2Schema(ps)]));
    else if ((k === 'items' || k === 'additionalProperties') && v && typeof v === 'object') out[k] = toV2Schema(v);
    else if (k === 'allOf' && Array.isArray(v)) {
      if (v.length === 1 && typeof (v[0] as JsonSchema).$ref === 'string') Object.assign(out, toV2Schema(v[0]));
      else out[k] = v.map(toV2Schema);
    } else if (k === 'nullable' || k === 'oneOf' || k === 'anyOf')
      continue; // not Swagger 2.0
    else out[k] = v;
  }
  return out;
}

/** Every definition the served kinds (and their lists) need, in v2 form, sorted by name. */
function v2Definitions(resources: readonly OpenApiResource[]): Record<string, JsonSchema> {
  const v3 = definitionClosure(definitionRoots(resources));
  const out = Object.fromEntries(
    Object.keys(v3)
      .sort()
      .map((k) => [k, toV2Schema(v3[k])]),
  );
  // Swagger 2.0 as kube publishes it: Quantity a plain string (no format), IntOrString a string of format int-or-string.
  if (out[QUANTITY]) out[QUANTITY] = { description: out[QUANTITY].description, type: 'string' };
  if (out[INT_OR_STRING])
    out[INT_OR_STRING] = { description: out[INT_OR_STRING].description, type: 'string', format: 'int-or-string' };
  return out;
}

/** gnostic's Any: any JSON value, carried as YAML text (JSON is YAML). */
function anyValue(v: unknown): ProtoMessage {
  return new ProtoMessage().string(2, JSON.stringify(v));
}

/** openapi_v2.Schema (field numbers from gnostic's OpenAPIv2 message definitions). */
function schemaMessage(s: JsonSchema): ProtoMessage {
  const m = new ProtoMessage()
    .string(1, s.$ref as string | undefined)
    .string(2, s.format as string | undefined)
    .string(3, s.title as string | undefined)
    .string(4, s.description as string | undefined);
  if (s.default !== undefined) m.message(5, anyValue(s.default));
  m.strings(19, s.required as string[] | undefined);
  if (Array.isArray(s.enum)) m.messages(20, s.enum.map(anyValue));
  if (typeof s.additionalProperties === 'boolean') m.message(21, new ProtoMessage().bool(2, s.additionalProperties));
  else if (s.additionalProperties)
    m.message(21, new ProtoMessage().message(1, schemaMessage(s.additionalProperties as JsonSchema)));
  if (typeof s.type === 'string') m.message(22, new ProtoMessage().strings(1, [s.type]));
  if (s.items)
    m.message(
      23,
      new ProtoMessage().messages(
        1,
        (Array.isArray(s.items) ? s.items : [s.items]).map((i: JsonSchema) => schemaMessage(i)),
      ),
    );
  if (Array.isArray(s.allOf))
    m.messages(
      24,
      s.allOf.map((x: JsonSchema) => schemaMessage(x)),
    );
  if (s.properties) m.message(25, namedSchemas(s.properties as Record<string, JsonSchema>));
  m.bool(27, s.readOnly as boolean | undefined);
  for (const [k, v] of Object.entries(s)) {
    if (k.startsWith('x-')) m.message(31, new ProtoMessage().string(1, k).message(2, anyValue(v)));
  }
  return m;
}

/** A message whose field 1 is `repeated NamedSchema` (Definitions, Properties). */
function namedSchemas(entries: Record<string, JsonSchema>): ProtoMessage {
  return new ProtoMessage().messages(
    1,
    Object.entries(entries).map(([name, s]) => new ProtoMessage().string(1, name).message(2, schemaMessage(s))),
  );
}

export function buildOpenApiV2(resources: readonly OpenApiResource[]): OpenApiV2 {
  const defs = v2Definitions(resources);
  const json = JSON.stringify({ swagger: '2.0', info: { ...OPENAPI_INFO }, paths: {}, definitions: defs });
  const protobuf = new ProtoMessage()
    .string(1, '2.0')
    .message(2, new ProtoMessage().string(1, OPENAPI_INFO.title).string(2, OPENAPI_INFO.version))
    .message(8, new ProtoMessage())
    .message(9, namedSchemas(defs))
    .encode();
  return { json, protobuf, etag: `"${createHash('sha512').update(json).digest('hex').toUpperCase()}"` };
}

const built = new WeakMap<readonly OpenApiResource[], OpenApiV2>();

/** Built once per resources array. */
export function openApiV2(resources: readonly OpenApiResource[]): OpenApiV2 {
  let v = built.get(resources);
  if (!v) built.set(resources, (v = buildOpenApiV2(resources)));
  return v;
}
