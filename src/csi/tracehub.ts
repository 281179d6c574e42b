/**
 * Every CSI call of every Stowage component in this process (sidecar, node agent, registrar): a
 * bounded ring per volume, one for calls about no volume, and live subscribers. The API server
 * serves it as explain.stowage.io/v1alpha1 csicalls; in `stowage up` every component shares it.
 */
import { TraceRing, type CallTrace } from './trace.js';

/** The object a call was made for (a claim for CreateVolume, a pod for NodePublishVolume...). */
export interface TraceObject {
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
}

export interface CsiCall extends CallTrace {
  /** Increasing in this process: the resume point of a watch. */
  readonly id: number;
  /** The driver's name as GetPluginInfo gave it (the endpoint until then). */
  readonly driver: string;
  /** The Kubernetes component that makes this call (csi-provisioner, csi-attacher, kubelet...). */
  readonly caller: string;
  /** The request with its secrets redacted (redact.ts). */
  readonly request: unknown;
  /** The answer, when the call succeeded (large answers are summarized). */
  readonly response?: unknown;
  readonly object?: TraceObject;
}

export interface CsiCallFilter {
  /** Any of these volume ids. */
  readonly volumeIds?: ReadonlySet<string>;
  /** Or made for this object (kind, namespace, name). */
  readonly object?: TraceObject;
  /** Or whose request names one of these (CreateVolume's `pvc-<claim uid>`). */
  readonly requestNames?: ReadonlySet<string>;
  readonly driver?: string;
  /** Calls that started at or after this epoch ms. */
  readonly sinceMs?: number;
  /** Calls with a larger id only (a watch resuming). */
  readonly afterId?: number;
  readonly failedOnly?: boolean;
}

export interface CsiTraceHubOptions {
  /** Calls kept per volume (default 100). */
  readonly perVolume?: number;
  /** Volumes kept; the least recently called is forgotten first (default 1000). */
  readonly volumes?: number;
  /** Calls about no volume kept (default 500). */
  readonly other?: number;
}

export type CsiCallInput = Omit<CsiCall, 'id'>;

function sameObject(a: TraceObject | undefined, b: TraceObject): boolean {
  return !!a && a.kind === b.kind && a.name === b.name && (a.namespace ?? '') === (b.namespace ?? '');
}

export function matchesCall(c: CsiCall, f: CsiCallFilter): boolean {
  if (f.afterId !== undefined && c.id <= f.afterId) return false;
  if (f.driver !== undefined && c.driver !== f.driver) return false;
  if (f.sinceMs !== undefined && c.startMs < f.sinceMs) return false;
  if (f.failedOnly && c.code === 'OK') return false;
  if (f.volumeIds === undefined && f.object === undefined && f.requestNames === undefined) return true;
  if (f.volumeIds && c.volumeId !== undefined && f.volumeIds.has(c.volumeId)) return true;
  if (f.requestNames && f.requestNames.has(requestName(c.request))) return true;
  return f.object !== undefined && sameObject(c.object, f.object);
}

function requestName(r: unknown): string {
  const name = typeof r === 'object' && r !== null ? (r as { name?: unknown }).name : undefined;
  return typeof name === 'string' ? name : '';
}

export class CsiTraceHub {
  private nextId = 1;
  private readonly byVolume = new Map<string, TraceRing<CsiCall>>();
  private readonly other: TraceRing<CsiCall>;
  private readonly listeners = new Set<(c: CsiCall) => void>();
  private readonly perVolume: number;
  private readonly maxVolumes: number;

  constructor(o: CsiTraceHubOptions = {}) {
    this.perVolume = o.perVolume ?? 100;
    this.maxVolumes = o.volumes ?? 1000;
    this.other = new TraceRing<CsiCall>(o.other ?? 500);
  }

  record(input: CsiCallInput): CsiCall {
    const c: CsiCall = { ...input, id: this.nextId++ };
    if (c.volumeId === undefined) this.other.push(c);
    else {
      let ring = this.byVolume.get(c.volumeId);
      if (ring)
        this.byVolume.delete(c.volumeId); // re-inserted below: Map order is recency
      else ring = new TraceRing<CsiCall>(this.perVolume);
      this.byVolume.set(c.volumeId, ring);
      ring.push(c);
      if (this.byVolume.size > this.maxVolumes) {
        const oldest = this.byVolume.keys().next().value;
        if (oldest !== undefined) this.byVolume.delete(oldest);
      }
    }
    for (const l of this.listeners) {
      try {
        l(c);
      } catch {
        // A broken subscriber must not break the call path.
      }
    }
    return c;
  }

  /** The kept calls that match, oldest first. */
  query(f: CsiCallFilter = {}): CsiCall[] {
    const rings =
      f.volumeIds && f.object === undefined && f.requestNames === undefined
        ? [...f.volumeIds].flatMap((v) => this.byVolume.get(v) ?? [])
        : [this.other, ...this.byVolume.values()];
    return rings
      .flatMap((r) => r.list())
      .filter((c) => matchesCall(c, f))
      .sort((a, b) => a.id - b.id);
  }

  /** The id of the last call recorded (0 before any). */
  lastId(): number {
    return this.nextId - 1;
  }

  /** Every call as it is recorded; returns the unsubscribe function. */
  subscribe(l: (c: CsiCall) => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
}

/** This process's hub: what every CsiClient records into unless given another. */
export const processCsiTrace = new CsiTraceHub();
