/**
 * Typed CRI client (runtime.v1 RuntimeService + ImageService) for one runtime endpoint: one
 * channel, a deadline on every call, gRPC status → CriError, and a bounded call trace — the same
 * pieces as the CSI client (src/csi/grpc.ts, errors.ts, trace.ts).
 */
import * as grpc from '@grpc/grpc-js';
import { GrpcError, grpcCodeName, toGrpcError, type GrpcErrorFactory } from '../../csi/errors.js';
import { newClient, socketPath, unary, waitReady, type AnyMethod } from '../../csi/grpc.js';
import { TraceRing, DEFAULT_TRACE_CAPACITY, type CallListener } from '../../csi/trace.js';
import { criProto } from './proto/index.js';
import type * as T from './proto/types.js';

/** A failed CRI call. */
export class CriError extends GrpcError {}

const newCriError: GrpcErrorFactory<CriError> = (m, c, d, o) => new CriError(m, c, d, o);

export function toCriError(method: string, e: unknown): CriError {
  return toGrpcError(CriError, newCriError, method, e);
}

export type CriCallKind = 'runtime' | 'image';

// runtime: the kubelet's --runtime-request-timeout default (2 min). image: pulls are bounded by
// the image's size, not a fixed deadline in the kubelet; we still bound them.
export const DEFAULT_CRI_TIMEOUTS: Readonly<Record<CriCallKind, number>> = { runtime: 120_000, image: 600_000 };

/** One CRI call as the trace records it; ids name what the call was about when known. */
export interface CriCallTrace {
  /** Full gRPC method, e.g. `/runtime.v1.RuntimeService/StartContainer`. */
  readonly method: string;
  readonly podSandboxId?: string;
  readonly containerId?: string;
  readonly image?: string;
  readonly startMs: number;
  readonly durationMs: number;
  readonly code: string;
  readonly error?: string;
}

export interface CriClientOptions {
  /** `unix:///run/containerd/containerd.sock` or a bare path. */
  readonly endpoint: string;
  readonly timeouts?: Partial<Record<CriCallKind, number>>;
  readonly traceCapacity?: number;
}

export interface CriCallOptions {
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

export class CriClient {
  readonly endpoint: string;
  private readonly client: grpc.Client;
  private readonly timeouts: Record<CriCallKind, number>;
  private readonly ring: TraceRing<CriCallTrace>;
  private readonly defs = criProto().runtime.v1;

  constructor(o: CriClientOptions) {
    this.endpoint = socketPath(o.endpoint);
    this.client = newClient(this.endpoint);
    this.timeouts = { ...DEFAULT_CRI_TIMEOUTS, ...o.timeouts };
    this.ring = new TraceRing<CriCallTrace>(o.traceCapacity ?? DEFAULT_TRACE_CAPACITY);
  }

  /** Waits until the runtime's socket accepts a connection; rejects with CriError(UNAVAILABLE) after `timeoutMs`. */
  async connect(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    try {
      await waitReady(this.client, timeoutMs, signal);
    } catch (e) {
      if (signal?.aborted) throw signal.reason;
      throw new CriError('connect', grpc.status.UNAVAILABLE, `${this.endpoint} not ready after ${timeoutMs} ms`, {
        cause: e,
      });
    }
  }

  // ---- RuntimeService ---------------------------------------------------------------------------
  version(o?: CriCallOptions): Promise<T.VersionResponse__Output> {
    return this.call('runtime', this.rt.Version, { version: 'v1' }, o);
  }
  status(o?: CriCallOptions): Promise<T.StatusResponse__Output> {
    return this.call('runtime', this.rt.Status, {}, o);
  }
  runPodSandbox(req: T.RunPodSandboxRequest, o?: CriCallOptions): Promise<T.RunPodSandboxResponse__Output> {
    return this.call('runtime', this.rt.RunPodSandbox, req, o);
  }
  stopPodSandbox(podSandboxId: string, o?: CriCallOptions): Promise<T.StopPodSandboxResponse__Output> {
    return this.call('runtime', this.rt.StopPodSandbox, { podSandboxId }, o);
  }
  removePodSandbox(podSandboxId: string, o?: CriCallOptions): Promise<T.RemovePodSandboxResponse__Output> {
    return this.call('runtime', this.rt.RemovePodSandbox, { podSandboxId }, o);
  }
  podSandboxStatus(podSandboxId: string, o?: CriCallOptions): Promise<T.PodSandboxStatusResponse__Output> {
    return this.call('runtime', this.rt.PodSandboxStatus, { podSandboxId }, o);
  }
  listPodSandbox(filter?: T.PodSandboxFilter, o?: CriCallOptions): Promise<T.PodSandbox__Output[]> {
    return this.call('runtime', this.rt.ListPodSandbox, filter ? { filter } : {}, o).then((r) => r.items);
  }
  createContainer(req: T.CreateContainerRequest, o?: CriCallOptions): Promise<T.CreateContainerResponse__Output> {
    return this.call('runtime', this.rt.CreateContainer, req, o);
  }
  startContainer(containerId: string, o?: CriCallOptions): Promise<T.StartContainerResponse__Output> {
    return this.call('runtime', this.rt.StartContainer, { containerId }, o);
  }
  /** Stops with `timeoutSeconds` of grace before SIGKILL; the deadline covers the grace (as the kubelet's does). */
  stopContainer(
    containerId: string,
    timeoutSeconds: number,
    o?: CriCallOptions,
  ): Promise<T.StopContainerResponse__Output> {
    const timeoutMs = o?.timeoutMs ?? this.timeouts.runtime + timeoutSeconds * 1000;
    return this.call('runtime', this.rt.StopContainer, { containerId, timeout: timeoutSeconds }, { ...o, timeoutMs });
  }
  removeContainer(containerId: string, o?: CriCallOptions): Promise<T.RemoveContainerResponse__Output> {
    return this.call('runtime', this.rt.RemoveContainer, { containerId }, o);
  }
  listContainers(filter?: T.ContainerFilter, o?: CriCallOptions): Promise<T.Container__Output[]> {
    return this.call('runtime', this.rt.ListContainers, filter ? { filter } : {}, o).then((r) => r.containers);
  }
  /** After the caller renamed a container's log file: the runtime writes to a new file at its path. */
  reopenContainerLog(containerId: string, o?: CriCallOptions): Promise<T.ReopenContainerLogResponse__Output> {
    return this.call('runtime', this.rt.ReopenContainerLog, { containerId }, o);
  }
  containerStatus(containerId: string, o?: CriCallOptions): Promise<T.ContainerStatusResponse__Output> {
    return this.call('runtime', this.rt.ContainerStatus, { containerId }, o);
  }
  /** Runs `cmd` in the container; `timeoutSeconds` 0 = no limit on the runtime's side. */
  execSync(
    containerId: string,
    cmd: readonly string[],
    timeoutSeconds: number,
    o?: CriCallOptions,
  ): Promise<T.ExecSyncResponse__Output> {
    const timeoutMs = o?.timeoutMs ?? this.timeouts.runtime + timeoutSeconds * 1000;
    return this.call(
      'runtime',
      this.rt.ExecSync,
      { containerId, cmd: [...cmd], timeout: timeoutSeconds },
      { ...o, timeoutMs },
    );
  }

  /** Prepares a streaming exec; the answer is a URL on the runtime's streaming server. */
  exec(req: T.ExecRequest, o?: CriCallOptions): Promise<T.ExecResponse__Output> {
    return this.call('runtime', this.rt.Exec, req, o);
  }
  /** Prepares a streaming attach to the container's own stdio. */
  attach(req: T.AttachRequest, o?: CriCallOptions): Promise<T.AttachResponse__Output> {
    return this.call('runtime', this.rt.Attach, req, o);
  }

  // ---- ImageService -----------------------------------------------------------------------------
  /** The image when present, `null` when the runtime does not have it. */
  imageStatus(image: string, o?: CriCallOptions): Promise<T.Image__Output | null> {
    return this.call('image', this.img.ImageStatus, { image: { image } }, o).then((r) => r.image);
  }
  pullImage(req: T.PullImageRequest, o?: CriCallOptions): Promise<T.PullImageResponse__Output> {
    return this.call('image', this.img.PullImage, req, o);
  }
  removeImage(image: string, o?: CriCallOptions): Promise<T.RemoveImageResponse__Output> {
    return this.call('image', this.img.RemoveImage, { image: { image } }, o);
  }

  // ---- Trace ------------------------------------------------------------------------------------
  trace(): readonly CriCallTrace[] {
    return this.ring.list();
  }
  onCall(listener: CallListener<CriCallTrace>): () => void {
    return this.ring.subscribe(listener);
  }

  close(): void {
    this.client.close();
  }

  // ---- internals --------------------------------------------------------------------------------
  private get rt(): typeof this.defs.RuntimeService.service {
    return this.defs.RuntimeService.service;
  }
  private get img(): typeof this.defs.ImageService.service {
    return this.defs.ImageService.service;
  }

  private async call<Req, Res>(
    kind: CriCallKind,
    def: AnyMethod<Req, Res>,
    req: Req,
    o?: CriCallOptions,
  ): Promise<Res> {
    const startMs = Date.now();
    const t0 = performance.now();
    const subject = { ...subjectOf(req) };
    try {
      const res = await unary(this.client, def, req, o?.timeoutMs ?? this.timeouts[kind], o?.signal, toCriError);
      this.ring.push({
        method: def.path,
        ...subject,
        ...subjectOf(res),
        startMs,
        durationMs: performance.now() - t0,
        code: 'OK',
      });
      return res;
    } catch (e) {
      const err = toCriError(def.path, e);
      this.ring.push({
        method: def.path,
        ...subject,
        startMs,
        durationMs: performance.now() - t0,
        code: grpcCodeName(err.grpcCode),
        error: err.details,
      });
      throw err;
    }
  }
}

type Subject = Pick<CriCallTrace, 'podSandboxId' | 'containerId' | 'image'>;

/** The sandbox, container and image a request or response names, for the trace. */
export function subjectOf(m: unknown): Subject {
  const out: { podSandboxId?: string; containerId?: string; image?: string } = {};
  if (typeof m !== 'object' || m === null) return out;
  const r = m as { podSandboxId?: unknown; containerId?: unknown; image?: unknown };
  if (typeof r.podSandboxId === 'string' && r.podSandboxId !== '') out.podSandboxId = r.podSandboxId;
  if (typeof r.containerId === 'string' && r.containerId !== '') out.containerId = r.containerId;
  const img = typeof r.image === 'object' && r.image !== null ? (r.image as { image?: unknown }).image : undefined;
  if (typeof img === 'string' && img !== '') out.image = img;
  return out;
}
