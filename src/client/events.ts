import type { Event, EventSource, ObjectReference } from 'kubernetes-types/core/v1.js';
import { metaTime } from '../util/metatime.js';
import { realClock, type Clock } from '../util/backoff.js';
import { NotFoundError, toStowageError } from '../util/errors.js';
import { newLogger, type Logger } from '../util/log.js';
import { TokenBucket } from '../util/tokenbucket.js';
import { KINDS, apiVersionOf, type KindName } from './kinds.js';
import type { KubeObjectLike, RestClient } from './rest.js';

export const EVENT_TYPES = ['Normal', 'Warning'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Records core/v1 Events about objects. Never blocks and never throws. */
export interface EventRecorder {
  event(obj: KubeObjectLike | ObjectReference, type: EventType, reason: string, message: string): void;
  /** Resolves when every event recorded so far has been written (or given up on). */
  flush(): Promise<void>;
  /** Stops accepting events and flushes. */
  close(): Promise<void>;
}

/** An object reference for events, with kind/apiVersion taken from the kind table when absent. */
export function referenceTo(obj: KubeObjectLike | ObjectReference, kind?: KindName): ObjectReference {
  const k = kind ?? (obj.kind as KindName | undefined);
  const meta = 'metadata' in obj && obj.metadata ? obj.metadata : undefined;
  const ref: ObjectReference = meta
    ? {
        kind: obj.kind,
        namespace: meta.namespace,
        name: meta.name,
        uid: meta.uid,
        apiVersion: obj.apiVersion,
        resourceVersion: meta.resourceVersion,
      }
    : { ...(obj as ObjectReference) };
  if (k && k in KINDS) {
    ref.kind ??= k;
    ref.apiVersion ??= apiVersionOf(KINDS[k]);
  }
  return ref;
}

/** metav1.Time: RFC 3339 with second precision. */
export { metaTime };

const join = (parts: Array<string | undefined>): string => parts.map((p) => p ?? '').join('');

/** client-go's getEventKey: identical events (same source, object, type, reason, message) share it. */
export function eventKey(e: Event): string {
  const o = e.involvedObject;
  return join([
    e.source?.component,
    e.source?.host,
    o.kind,
    o.namespace,
    o.name,
    o.fieldPath,
    o.uid,
    o.apiVersion,
    e.type,
    e.reason,
    e.message,
  ]);
}

/** client-go's EventAggregatorByReasonFunc: similar events differ only in message. */
export function aggregateKey(e: Event): string {
  const o = e.involvedObject;
  return join([
    e.source?.component,
    e.source?.host,
    o.kind,
    o.namespace,
    o.name,
    o.uid,
    o.apiVersion,
    e.type,
    e.reason,
    e.reportingComponent,
    e.reportingInstance,
  ]);
}

/** client-go's getSpamKey: the spam budget is per source and involved object. */
export function spamKey(e: Event): string {
  const o = e.involvedObject;
  return join([e.source?.component, e.source?.host, o.kind, o.namespace, o.name, o.uid, o.apiVersion]);
}

export interface CorrelatorOptions {
  /** Similar events with this many distinct messages inside the window are combined (client-go: 10). */
  readonly maxSimilar?: number;
  /** Aggregation window for similar events (client-go: 600 s). */
  readonly windowMs?: number;
  /**
   * How long an identical event keeps patching the earlier Event. client-go has no limit (only the
   * LRU); the server's Event TTL ends it, and a patch that finds the Event gone creates a new one.
   */
  readonly dedupWindowMs?: number;
  /** Events a source may send about one object at once (client-go: 25)... */
  readonly spamBurst?: number;
  /** ...refilled at this rate (client-go: one per 5 minutes). */
  readonly spamRefillMs?: number;
  /** Remembered keys (client-go: an LRU of 4096). */
  readonly cacheSize?: number;
}

interface Observed {
  count: number;
  firstTimestamp: string;
  name: string;
  lastMs: number;
}

export type Correlated =
  | { readonly action: 'skip'; readonly event: Event }
  | { readonly action: 'create'; readonly event: Event; readonly key: string }
  | {
      readonly action: 'patch';
      readonly event: Event;
      readonly key: string;
      readonly patch: { count: number; lastTimestamp: string; message: string };
    };

/**
 * The decision half of client-go's EventCorrelator, pure apart from its caches: a spam filter (a
 * token bucket per source and object), an aggregator (ten similar events with different messages
 * within ten minutes are combined), and a logger (an event seen before becomes a patch of count
 * and lastTimestamp on the earlier Event).
 */
export class EventCorrelator {
  private readonly spam = new Map<string, TokenBucket>();
  private readonly similar = new Map<string, { messages: Set<string>; lastMs: number }>();
  private readonly seen = new Map<string, Observed>();
  private readonly o: Required<CorrelatorOptions>;

  constructor(o: CorrelatorOptions = {}) {
    this.o = {
      maxSimilar: o.maxSimilar ?? 10,
      windowMs: o.windowMs ?? 600_000,
      dedupWindowMs: o.dedupWindowMs ?? Infinity,
      spamBurst: o.spamBurst ?? 25,
      spamRefillMs: o.spamRefillMs ?? 300_000,
      cacheSize: o.cacheSize ?? 4096,
    };
  }

  correlate(input: Event, nowMs: number): Correlated {
    if (!this.takeSpamToken(spamKey(input), nowMs)) return { action: 'skip', event: input };
    let event = input;
    let key = eventKey(event);
    const aKey = aggregateKey(event);
    let rec = this.similar.get(aKey);
    if (!rec || nowMs - rec.lastMs > this.o.windowMs) rec = { messages: new Set(), lastMs: nowMs };
    rec.messages.add(event.message ?? '');
    rec.lastMs = nowMs;
    remember(this.similar, aKey, rec, this.o.cacheSize);
    if (rec.messages.size >= this.o.maxSimilar) {
      // Keep the set at the threshold (client-go pops one), so every further one is combined too.
      const first = rec.messages.values().next().value;
      if (first !== undefined) rec.messages.delete(first);
      const ts = metaTime(nowMs);
      event = {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: event.metadata?.name, namespace: event.metadata?.namespace },
        involvedObject: event.involvedObject,
        reason: event.reason,
        message: `(combined from similar events): ${event.message ?? ''}`,
        type: event.type,
        source: event.source,
        count: 1,
        firstTimestamp: ts,
        lastTimestamp: ts,
      };
      key = aKey;
    }
    const prev = this.seen.get(key);
    if (prev && nowMs - prev.lastMs <= this.o.dedupWindowMs) {
      const lastTimestamp = event.lastTimestamp ?? metaTime(nowMs);
      const patched: Event = {
        ...event,
        metadata: { ...event.metadata, name: prev.name },
        count: prev.count + 1,
        firstTimestamp: prev.firstTimestamp,
        lastTimestamp,
      };
      return {
        action: 'patch',
        event: patched,
        key,
        patch: { count: prev.count + 1, lastTimestamp, message: event.message ?? '' },
      };
    }
    return { action: 'create', event, key };
  }

  private takeSpamToken(key: string, nowMs: number): boolean {
    const b = this.spam.get(key) ?? new TokenBucket(1000 / this.o.spamRefillMs, this.o.spamBurst, nowMs);
    remember(this.spam, key, b, this.o.cacheSize);
    return b.tryAccept(nowMs);
  }

  /** Records what the server stored for `key` so the next identical event patches it. */
  observe(key: string, stored: Event, nowMs: number): void {
    remember(
      this.seen,
      key,
      {
        count: stored.count ?? 1,
        firstTimestamp: stored.firstTimestamp ?? metaTime(nowMs),
        name: stored.metadata?.name ?? '',
        lastMs: nowMs,
      },
      this.o.cacheSize,
    );
  }
}

function remember<V>(m: Map<string, V>, k: string, v: V, max: number): void {
  m.delete(k); // re-insert at the end: Map order doubles as LRU order
  m.set(k, v);
  if (m.size > max) {
    const oldest = m.keys().next().value;
    if (oldest !== undefined) m.delete(oldest);
  }
}

export interface EventRecorderOptions {
  readonly client: RestClient;
  readonly component: string;
  readonly host?: string;
  readonly clock?: Clock;
  readonly log?: Logger;
  /** Events waiting to be written beyond this are dropped (logged). */
  readonly queueSize?: number;
  readonly correlator?: CorrelatorOptions;
  /** Write attempts per event for retryable failures (client-go: 12). */
  readonly maxTries?: number;
  readonly retryDelayMs?: number;
}

export function newEventRecorder(o: EventRecorderOptions): EventRecorder {
  return new Recorder(o);
}

class Recorder implements EventRecorder {
  private readonly queue: Event[] = [];
  private readonly correlator: EventCorrelator;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly source: EventSource;
  private draining: Promise<void> | undefined;
  private closed = false;
  private seq = 0n;

  constructor(private readonly o: EventRecorderOptions) {
    this.clock = o.clock ?? realClock;
    this.log = o.log ?? newLogger(`events/${o.component}`);
    this.correlator = new EventCorrelator(o.correlator);
    this.source = o.host ? { component: o.component, host: o.host } : { component: o.component };
  }

  event(obj: KubeObjectLike | ObjectReference, type: EventType, reason: string, message: string): void {
    if (this.closed) return;
    const ref = referenceTo(obj);
    if (!ref.name || !ref.kind) {
      this.log.error('event dropped: object reference lacks kind or name', { reason, message });
      return;
    }
    if (this.queue.length >= (this.o.queueSize ?? 1000)) {
      this.log.warn('event dropped: queue full', { object: `${ref.kind}/${ref.name}`, reason });
      return;
    }
    const now = this.clock.now();
    // client-go names events <object name>.<hex unix nanoseconds>; the counter keeps names unique within a millisecond.
    const nanos = BigInt(now) * 1_000_000n + (this.seq++ % 1_000_000n);
    const ts = metaTime(now);
    this.queue.push({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${ref.name}.${nanos.toString(16)}`, namespace: ref.namespace || 'default' },
      involvedObject: ref,
      reason,
      message,
      type,
      source: { ...this.source },
      firstTimestamp: ts,
      lastTimestamp: ts,
      count: 1,
      reportingComponent: this.o.component,
      reportingInstance: this.o.host ?? '',
    });
    this.kick();
  }

  async flush(): Promise<void> {
    while (this.draining) await this.draining;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  /** One writer at a time, in order; restarts if an event slipped in while the last one finished. */
  private kick(): void {
    if (this.draining) return;
    this.draining = this.drain().finally(() => {
      this.draining = undefined;
      if (this.queue.length > 0) this.kick();
    });
  }

  private async drain(): Promise<void> {
    for (let e = this.queue.shift(); e; e = this.queue.shift()) {
      try {
        await this.write(e);
      } catch (err) {
        this.log.warn('event not written', {
          reason: e.reason,
          object: `${e.involvedObject.kind}/${e.involvedObject.name}`,
          error: toStowageError(err).message,
        });
      }
    }
  }

  private async write(e: Event): Promise<void> {
    const events = this.o.client.resource('Event');
    const c = this.correlator.correlate(e, this.clock.now());
    if (c.action === 'skip') {
      this.log.debug('event dropped by the spam filter', {
        reason: e.reason,
        object: `${e.involvedObject.kind}/${e.involvedObject.name}`,
      });
      return;
    }
    const ns = c.event.metadata?.namespace;
    const tries = this.o.maxTries ?? 3;
    for (let attempt = 1; ; attempt++) {
      try {
        let stored: Event;
        if (c.action === 'patch') {
          try {
            stored = await events.patch(c.event.metadata?.name ?? '', 'merge', c.patch, { namespace: ns });
          } catch (err) {
            // The earlier Event expired (TTL) or was deleted: record a fresh one, as client-go does.
            if (!(err instanceof NotFoundError)) throw err;
            const { resourceVersion: _rv, ...meta } = c.event.metadata ?? {};
            const fresh: Event = { ...c.event, metadata: meta };
            stored = await events.create(fresh, { namespace: ns });
          }
        } else {
          stored = await events.create(c.event, { namespace: ns });
        }
        this.correlator.observe(c.key, stored, this.clock.now());
        return;
      } catch (err) {
        const se = toStowageError(err);
        if (!se.retryable || attempt >= tries) throw se;
        await this.clock.sleep((this.o.retryDelayMs ?? 1000) * attempt);
      }
    }
  }
}
