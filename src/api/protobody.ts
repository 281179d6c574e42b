/**
 * Protobuf request bodies of the few kinds kubectl ≥ 1.32 sends only as protobuf from its typed
 * clients: the self-subject reviews (`auth whoami`, `auth can-i`) and Eviction (`drain`). Every
 * other kind stays 415, as the message says. A body is kube's envelope: the magic `k8s\0`, then a
 * runtime.Unknown {typeMeta = 1 {apiVersion = 1, kind = 2}, raw = 2}; `raw` is the kind's message.
 * Field numbers are those of Kubernetes' generated.proto files.
 */
import { ApiUnsupportedMediaTypeError, badRequest } from './status.js';

type Field = readonly [name: string, type: 'string' | 'int64' | 'bool' | 'repeatedString' | 'stringMap' | Message];
interface Message {
  readonly [field: number]: Field;
}

const OBJECT_META: Message = {
  1: ['name', 'string'],
  2: ['generateName', 'string'],
  3: ['namespace', 'string'],
  5: ['uid', 'string'],
  6: ['resourceVersion', 'string'],
  11: ['labels', 'stringMap'],
  12: ['annotations', 'stringMap'],
};
const DELETE_OPTIONS: Message = {
  1: ['gracePeriodSeconds', 'int64'],
  2: ['preconditions', { 1: ['uid', 'string'], 2: ['resourceVersion', 'string'] }],
  3: ['orphanDependents', 'bool'],
  4: ['propagationPolicy', 'string'],
  5: ['dryRun', 'repeatedString'],
};
const RESOURCE_ATTRIBUTES: Message = {
  1: ['namespace', 'string'],
  2: ['verb', 'string'],
  3: ['group', 'string'],
  4: ['version', 'string'],
  5: ['resource', 'string'],
  6: ['subresource', 'string'],
  7: ['name', 'string'],
};

/** `apiVersion/kind` → the message of the kind (status fields are the server's to fill: not read). */
const KINDS: Readonly<Record<string, Message>> = {
  'authentication.k8s.io/v1/SelfSubjectReview': { 1: ['metadata', OBJECT_META] },
  'authorization.k8s.io/v1/SelfSubjectAccessReview': {
    1: ['metadata', OBJECT_META],
    2: [
      'spec',
      {
        1: ['resourceAttributes', RESOURCE_ATTRIBUTES],
        2: ['nonResourceAttributes', { 1: ['path', 'string'], 2: ['verb', 'string'] }],
      },
    ],
  },
  'authorization.k8s.io/v1/SelfSubjectRulesReview': {
    1: ['metadata', OBJECT_META],
    2: ['spec', { 1: ['namespace', 'string'] }],
  },
  'policy/v1/Eviction': { 1: ['metadata', OBJECT_META], 2: ['deleteOptions', DELETE_OPTIONS] },
};

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

class Reader {
  private pos = 0;
  constructor(private readonly buf: Buffer) {}
  done(): boolean {
    return this.pos >= this.buf.length;
  }
  varint(): bigint {
    let out = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (this.pos >= this.buf.length || shift > 63n)
        throw badRequest('error decoding body: truncated protobuf varint');
      const b = this.buf[this.pos++]!;
      out |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return out;
    }
  }
  bytes(): Buffer {
    const n = Number(this.varint());
    if (this.pos + n > this.buf.length) throw badRequest('error decoding body: truncated protobuf field');
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }
  skip(wire: number): void {
    if (wire === 0) this.varint();
    else if (wire === 2) this.bytes();
    else if (wire === 1) this.pos += 8;
    else if (wire === 5) this.pos += 4;
    else throw badRequest(`error decoding body: unsupported protobuf wire type ${wire}`);
  }
}

/** Each (field number, wire type, reader positioned at its value) of a message. */
function* fields(buf: Buffer): Generator<[number, number, Reader]> {
  const r = new Reader(buf);
  while (!r.done()) {
    const tag = Number(r.varint());
    yield [tag >>> 3, tag & 7, r];
  }
}

function decodeMessage(buf: Buffer, m: Message): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [num, wire, r] of fields(buf)) {
    const f = m[num];
    if (!f) {
      r.skip(wire);
      continue;
    }
    const [name, type] = f;
    if (type === 'int64') out[name] = Number(BigInt.asIntN(64, r.varint()));
    else if (type === 'bool') out[name] = r.varint() !== 0n;
    else if (type === 'string') out[name] = r.bytes().toString('utf8');
    else if (type === 'repeatedString')
      out[name] = [...((out[name] as string[] | undefined) ?? []), r.bytes().toString('utf8')];
    else if (type === 'stringMap') {
      const entry = decodeMessage(r.bytes(), { 1: ['key', 'string'], 2: ['value', 'string'] });
      out[name] = {
        ...((out[name] as Record<string, string> | undefined) ?? {}),
        [String(entry.key ?? '')]: String(entry.value ?? ''),
      };
    } else out[name] = decodeMessage(r.bytes(), type);
  }
  // Go's zero values are not sent as JSON fields would be: drop the empty strings proto3 carries.
  for (const [k, v] of Object.entries(out)) if (v === '') delete out[k];
  return out;
}

/** The body as the JSON object it encodes, for the kinds above; 415 for any other kind. */
export function decodeProtobufBody(body: Buffer, unsupported: string): Record<string, unknown> {
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC))
    throw badRequest('error decoding body: protobuf body without the k8s envelope');
  const unknown = decodeMessage(body.subarray(MAGIC.length), {
    1: ['typeMeta', { 1: ['apiVersion', 'string'], 2: ['kind', 'string'] }],
  });
  const tm = (unknown.typeMeta ?? {}) as { apiVersion?: string; kind?: string };
  const message = KINDS[`${tm.apiVersion ?? ''}/${tm.kind ?? ''}`];
  if (!message) throw new ApiUnsupportedMediaTypeError(unsupported);
  let raw: Buffer = Buffer.alloc(0);
  for (const [num, wire, r] of fields(body.subarray(MAGIC.length))) {
    if (num === 2 && wire === 2) raw = r.bytes();
    else r.skip(wire);
  }
  return { apiVersion: tm.apiVersion, kind: tm.kind, ...decodeMessage(raw, message) };
}
