/** A bounded, observable record of CSI calls made to one driver (what the dashboard shows). */

export interface CallTrace {
  /** Full gRPC method, e.g. `/csi.v1.Node/NodePublishVolume`. */
  readonly method: string;
  readonly volumeId?: string;
  /** Epoch milliseconds when the call started. */
  readonly startMs: number;
  readonly durationMs: number;
  /** gRPC status code name: `OK`, `NOT_FOUND`, `DEADLINE_EXCEEDED`, ... */
  readonly code: string;
  readonly error?: string;
}

export type CallListener<T = CallTrace> = (t: T) => void;

export const DEFAULT_TRACE_CAPACITY = 1000;

/** Ring buffer of the last `capacity` calls, oldest first; listeners see every call as it ends. */
export class TraceRing<T = CallTrace> {
  private readonly buf: T[] = [];
  private next = 0;
  private readonly listeners = new Set<CallListener<T>>();

  constructor(readonly capacity: number = DEFAULT_TRACE_CAPACITY) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`trace capacity must be a positive integer, got ${capacity}`);
  }

  push(t: T): void {
    if (this.buf.length < this.capacity) this.buf.push(t);
    else this.buf[this.next] = t;
    this.next = (this.next + 1) % this.capacity;
    for (const l of this.listeners) {
      try {
        l(t);
      } catch {
        // A broken listener must not break the call path or starve the other listeners.
      }
    }
  }

  /** A fresh array, oldest call first. */
  list(): readonly T[] {
    if (this.buf.length < this.capacity) return [...this.buf];
    return [...this.buf.slice(this.next), ...this.buf.slice(0, this.next)];
  }

  /** Returns the unsubscribe function. */
  subscribe(l: CallListener<T>): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
}
