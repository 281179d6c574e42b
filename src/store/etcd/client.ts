/**
 * A thin etcd v3 client: the KV calls (straight over node:http2, unary.ts) and the Watch stream
 * (over @grpc/grpc-js) EtcdStore needs, with replies parsed into our own types at this edge. Written instead of using `etcd3` because
 * that client hides the compacted revision of a cancelled watch (the 410 path needs it) and adds a
 * layer per call that the store does not use.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { BadRequestError, ExpiredError, TimeoutError, UnavailableError, type StowageError } from '../../util/errors.js';
import { UnaryChannel } from './unary.js';

export interface EtcdKeyValue {
  readonly key: string;
  readonly value: string;
  readonly createRevision: number;
  readonly modRevision: number;
}

export interface EtcdEvent {
  readonly type: 'PUT' | 'DELETE';
  readonly kv: EtcdKeyValue;
  readonly prev?: EtcdKeyValue;
}

export interface RangeReply {
  readonly revision: number;
  readonly kvs: readonly EtcdKeyValue[];
  readonly more: boolean;
  readonly count: number;
}

export interface TxnReply {
  readonly revision: number;
  readonly succeeded: boolean;
  /** Per operation of the branch taken: the key-values it read or (put/delete) the previous ones. */
  readonly results: ReadonlyArray<readonly EtcdKeyValue[]>;
}

export type Op =
  | { readonly kind: 'range'; readonly key: string }
  | { readonly kind: 'put'; readonly key: string; readonly value: string }
  | { readonly kind: 'delete'; readonly key: string };

export interface ModRevisionCompare {
  readonly key: string;
  readonly op: 'EQUAL' | 'GREATER' | 'LESS' | 'NOT_EQUAL';
  readonly modRevision: number;
}

export interface EtcdTls {
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
}

export interface EtcdClientOptions {
  /** `http://host:port` or `https://host:port` URLs (kube-apiserver's --etcd-servers). */
  readonly endpoints: readonly string[];
  readonly tls?: EtcdTls;
  /** Deadline of each unary call. */
  readonly requestTimeoutMs?: number;
}

export interface WatchHandlers {
  onEvents(revision: number, events: readonly EtcdEvent[]): void;
  /**
   * A progress notification: every event up to `revision` has been sent on this watch.
   * `requested` marks the answer to requestProgress (watch id -1): etcd before 3.4.24 and 3.5.8
   * sends it on a side channel that can overtake events still queued (etcd issue 15220), so it is
   * a hint; a periodic notification (this watch's own id) is ordered with the events.
   */
  onProgress(revision: number, requested: boolean): void;
  /** The stream ended: ExpiredError carries the compacted revision; anything else is retryable. */
  onEnd(err: StowageError, compactRevision?: number): void;
}

export interface EtcdWatch {
  cancel(): void;
  /** Asks etcd for a progress notification (etcd ≥ 3.4), answered through onProgress. */
  requestProgress(): void;
}

/** etcd's "required revision has been compacted" refusal of a Range. */
export class CompactedError extends ExpiredError {}

const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
};

function protoFile(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  if (existsSync(join(here, 'etcd.proto'))) return join(here, 'etcd.proto');
  // From dist/ (tsc copies no .proto): walk up to the package root and use the source file.
  for (let dir = here; ;) {
    const candidate = join(dir, 'src', 'store', 'etcd', 'etcd.proto');
    if (existsSync(join(dir, 'package.json')) && existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`etcd.proto not found above ${here}`);
    dir = parent;
  }
}

type Method = protoLoader.MethodDefinition<object, object, object, object>;
let methods: Record<'range' | 'put' | 'txn' | 'compact' | 'watch', Method> | undefined;

function loadMethods(): NonNullable<typeof methods> {
  if (methods) return methods;
  const pkg = protoLoader.loadSync(protoFile(), LOADER_OPTIONS);
  const service = (name: string): protoLoader.ServiceDefinition => {
    const s = pkg[`etcdserverpb.${name}`];
    if (!s || !('Range' in s || 'Watch' in s)) throw new Error(`etcd.proto lacks service ${name}`);
    return s as protoLoader.ServiceDefinition;
  };
  const kv = service('KV');
  const w = service('Watch');
  methods = { range: kv.Range!, put: kv.Put!, txn: kv.Txn!, compact: kv.Compact!, watch: w.Watch! };
  return methods;
}

/** The grpc-js target for kube-style endpoint URLs; IPv4 lists use the `ipv4:` resolver. */
export function grpcTarget(endpoints: readonly string[]): { target: string; secure: boolean } {
  if (endpoints.length === 0) throw new Error('no etcd endpoints');
  const urls = endpoints.map((e) => new URL(e.includes('://') ? e : `http://${e}`));
  const secure = urls[0]!.protocol === 'https:';
  if (urls.some((u) => (u.protocol === 'https:') !== secure)) throw new Error('etcd endpoints mix http and https');
  const hostPorts = urls.map((u) => `${u.hostname}:${u.port || '2379'}`);
  const allIpv4 = urls.every((u) => /^\d+\.\d+\.\d+\.\d+$/.test(u.hostname));
  return { target: allIpv4 ? `ipv4:${hostPorts.join(',')}` : `dns:${hostPorts[0]!}`, secure };
}

/** `scheme://host:port` of each endpoint, for the unary channel. */
export function endpointOrigins(endpoints: readonly string[]): string[] {
  return endpoints.map((e) => {
    const u = new URL(e.includes('://') ? e : `http://${e}`);
    return `${u.protocol}//${u.hostname}:${u.port || '2379'}`;
  });
}

// --- reply parsing (the one place wire objects meet our types) ---

type Wire = Record<string, unknown>;
const isWire = (x: unknown): x is Wire => typeof x === 'object' && x !== null;
const num = (x: unknown): number => (typeof x === 'number' ? x : typeof x === 'string' ? Number(x) : 0);
const text = (x: unknown): string => (Buffer.isBuffer(x) ? x.toString('utf8') : typeof x === 'string' ? x : '');
const list = (x: unknown): unknown[] => (Array.isArray(x) ? x : []);
const headerRevision = (r: unknown): number => (isWire(r) && isWire(r.header) ? num(r.header.revision) : 0);

function parseKv(x: unknown): EtcdKeyValue | undefined {
  if (!isWire(x)) return undefined;
  return {
    key: text(x.key),
    value: text(x.value),
    createRevision: num(x.createRevision),
    modRevision: num(x.modRevision),
  };
}
const parseKvs = (x: unknown): EtcdKeyValue[] => list(x).flatMap((k) => parseKv(k) ?? []);

function parseEvent(x: unknown): EtcdEvent | undefined {
  if (!isWire(x)) return undefined;
  const kv = parseKv(x.kv);
  if (!kv) return undefined;
  const prev = parseKv(x.prevKv);
  return { type: x.type === 'DELETE' ? 'DELETE' : 'PUT', kv, ...(prev ? { prev } : {}) };
}

function toStoreError(e: grpc.ServiceError | Error): StowageError {
  const code = 'code' in e ? e.code : undefined;
  const details = 'details' in e && typeof e.details === 'string' ? e.details : e.message;
  if (/required revision has been compacted/.test(details)) return new CompactedError(details, { cause: e });
  if (/required revision is a future revision/.test(details)) return new BadRequestError(details, { cause: e });
  if (code === grpc.status.DEADLINE_EXCEEDED) return new TimeoutError(`etcd: ${details}`, { cause: e });
  return new UnavailableError(`etcd: ${details}`, { cause: e });
}

const enc = (s: string): Buffer => Buffer.from(s, 'utf8');

/** The end of etcd's key range covering every key that starts with `prefix` (etcd's prefix rule). */
export function prefixRangeEnd(prefix: string): Buffer {
  const b = Buffer.from(prefix, 'utf8');
  for (let i = b.length - 1; i >= 0; i--) {
    if (b[i]! < 0xff) {
      const end = Buffer.from(b.subarray(0, i + 1));
      end[i]! += 1;
      return end;
    }
  }
  return Buffer.from([0]); // every key
}

function requestOp(op: Op): Wire {
  switch (op.kind) {
    case 'range':
      return { requestRange: { key: enc(op.key) } };
    case 'put':
      return { requestPut: { key: enc(op.key), value: enc(op.value), prevKv: true } };
    case 'delete':
      return { requestDeleteRange: { key: enc(op.key), prevKv: true } };
  }
}

function responseKvs(x: unknown): EtcdKeyValue[] {
  if (!isWire(x)) return [];
  if (isWire(x.responseRange)) return parseKvs(x.responseRange.kvs);
  if (isWire(x.responsePut)) return parseKv(x.responsePut.prevKv) ? [parseKv(x.responsePut.prevKv)!] : [];
  if (isWire(x.responseDeleteRange)) return parseKvs(x.responseDeleteRange.prevKvs);
  return [];
}

export class EtcdClient {
  /** Watch streams. */
  private readonly client: grpc.Client;
  /** Every unary call (Range, Txn, Compact): see unary.ts. */
  private readonly unaryChannel: UnaryChannel;
  private readonly m = loadMethods();
  private readonly timeoutMs: number;

  constructor(o: EtcdClientOptions) {
    const { target, secure } = grpcTarget(o.endpoints);
    const creds =
      secure || o.tls?.ca
        ? grpc.credentials.createSsl(o.tls?.ca ?? null, o.tls?.key ?? null, o.tls?.cert ?? null)
        : grpc.credentials.createInsecure();
    this.client = new grpc.Client(target, creds, {
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 2_000,
      'grpc.max_receive_message_length': 64 * 1024 * 1024,
      'grpc.keepalive_time_ms': 10_000,
      'grpc.keepalive_timeout_ms': 5_000,
    });
    this.timeoutMs = o.requestTimeoutMs ?? 10_000;
    this.unaryChannel = new UnaryChannel(endpointOrigins(o.endpoints), o.tls);
  }

  /** `repeatable`: a read, sent again on Unavailable (see UnaryChannel.call). */
  private async unary(m: Method, req: Wire, timeoutMs = this.timeoutMs, repeatable = false): Promise<Wire> {
    let reply: Buffer;
    try {
      reply = await this.unaryChannel.call(m.path, m.requestSerialize(req), timeoutMs, { repeatable });
    } catch (e) {
      throw toStoreError(e instanceof Error ? e : new Error(String(e)));
    }
    const res: unknown = m.responseDeserialize(reply);
    if (!isWire(res)) throw new UnavailableError('etcd: empty reply');
    return res;
  }

  async range(
    o: { key: string; rangeEnd?: Buffer; limit?: number; revision?: number; countOnly?: boolean },
    timeoutMs?: number,
  ): Promise<RangeReply> {
    const req = {
      key: enc(o.key),
      rangeEnd: o.rangeEnd,
      limit: o.limit ?? 0,
      revision: o.revision ?? 0,
      sortOrder: 'ASCEND',
      sortTarget: 'KEY',
      countOnly: o.countOnly ?? false,
    };
    const r = await this.unary(this.m.range, req, timeoutMs, true);
    return { revision: headerRevision(r), kvs: parseKvs(r.kvs), more: r.more === true, count: num(r.count) };
  }

  async txn(compare: readonly ModRevisionCompare[], success: readonly Op[], failure: readonly Op[]): Promise<TxnReply> {
    const r = await this.unary(this.m.txn, {
      compare: compare.map((c) => ({ result: c.op, target: 'MOD', key: enc(c.key), modRevision: c.modRevision })),
      success: success.map(requestOp),
      failure: failure.map(requestOp),
    });
    return {
      revision: headerRevision(r),
      succeeded: r.succeeded === true,
      results: list(r.responses).map(responseKvs),
    };
  }

  /** kube's compaction handshake: put `key` if its version equals `version`, else read it. */
  async txnVersion(
    key: string,
    version: number,
    value: string,
  ): Promise<{ succeeded: boolean; revision: number; version: number }> {
    const r = await this.unary(this.m.txn, {
      compare: [{ result: 'EQUAL', target: 'VERSION', key: enc(key), version }],
      success: [requestOp({ kind: 'put', key, value })],
      failure: [requestOp({ kind: 'range', key })],
    });
    const first = list(r.responses)[0];
    const kv = isWire(first) && isWire(first.responseRange) ? list(first.responseRange.kvs)[0] : undefined;
    return { succeeded: r.succeeded === true, revision: headerRevision(r), version: isWire(kv) ? num(kv.version) : 0 };
  }

  async compact(revision: number): Promise<number> {
    return headerRevision(await this.unary(this.m.compact, { revision, physical: false }));
  }

  /** One watch on its own stream: events with revision ≥ startRevision for keys in [key, rangeEnd). */
  watch(o: { key: string; rangeEnd: Buffer; startRevision: number }, h: WatchHandlers): EtcdWatch {
    const call = this.client.makeBidiStreamRequest<object, object>(
      this.m.watch.path,
      this.m.watch.requestSerialize,
      this.m.watch.responseDeserialize,
      new grpc.Metadata({ waitForReady: true }),
    );
    let ended = false;
    const end = (err: StowageError, compactRevision?: number): void => {
      if (ended) return;
      ended = true;
      call.cancel();
      h.onEnd(err, compactRevision);
    };
    call.on('data', (res: unknown) => {
      if (ended || !isWire(res)) return;
      const compactRevision = num(res.compactRevision);
      if (compactRevision > 0)
        return end(
          new ExpiredError(`etcd: watch from compacted revision ${o.startRevision} (compacted at ${compactRevision})`),
          compactRevision,
        );
      if (res.canceled === true) return end(new UnavailableError(`etcd: watch cancelled: ${text(res.cancelReason)}`));
      const events = list(res.events).flatMap((e) => parseEvent(e) ?? []);
      h.onEvents(headerRevision(res), events);
      // An empty answer that is not the creation is a progress notification (etcd sends it only
      // once the watcher has caught up).
      if (events.length === 0 && res.created !== true) h.onProgress(headerRevision(res), num(res.watchId) === -1);
    });
    call.on('error', (err: grpc.ServiceError) => end(toStoreError(err)));
    call.on('end', () => end(new UnavailableError('etcd: watch stream ended')));
    call.write({
      createRequest: {
        key: enc(o.key),
        rangeEnd: o.rangeEnd,
        startRevision: o.startRevision,
        prevKv: true,
        progressNotify: true,
      },
    });
    return {
      cancel: () => {
        if (ended) return;
        ended = true;
        call.cancel();
      },
      requestProgress: () => {
        if (!ended) call.write({ progressRequest: {} });
      },
    };
  }

  close(): void {
    this.unaryChannel.close();
    this.client.close();
  }
}
