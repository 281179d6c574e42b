/**
 * The few protobuf wire-format pieces the OpenAPI v2 document needs: length-delimited fields
 * (strings, nested messages) and varints (bools). Messages are built bottom-up as byte arrays.
 */

function varint(n: number): number[] {
  const out: number[] = [];
  let v = n;
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return out;
}

const WIRE_VARINT = 0;
const WIRE_LEN = 2;

/** Builds one message; fields are written in the order they are added. */
export class ProtoMessage {
  private readonly parts: Buffer[] = [];

  /** A string field; empty strings are omitted, as proto3 does. */
  string(field: number, s: string | undefined): this {
    if (s) this.bytes(field, Buffer.from(s, 'utf8'));
    return this;
  }

  strings(field: number, values: readonly string[] | undefined): this {
    for (const s of values ?? []) this.bytes(field, Buffer.from(s, 'utf8'));
    return this;
  }

  /** A bool field; false is omitted, as proto3 does. */
  bool(field: number, b: boolean | undefined): this {
    if (b) this.parts.push(Buffer.from([...varint((field << 3) | WIRE_VARINT), 1]));
    return this;
  }

  /** A nested message (written even when empty: presence matters for messages). */
  message(field: number, m: ProtoMessage): this {
    return this.bytes(field, m.encode());
  }

  messages(field: number, ms: readonly ProtoMessage[]): this {
    for (const m of ms) this.message(field, m);
    return this;
  }

  encode(): Buffer {
    return Buffer.concat(this.parts);
  }

  private bytes(field: number, b: Buffer): this {
    this.parts.push(Buffer.from(varint((field << 3) | WIRE_LEN)), Buffer.from(varint(b.length)), b);
    return this;
  }
}
