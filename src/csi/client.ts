/**
 * Typed CSI client for one driver endpoint: every RPC of Identity, Controller and Node over one
 * channel, a deadline on every call, gRPC status → CsiError, per-connection capability caches and
 * a bounded call trace.
 */
import * as grpc from '@grpc/grpc-js';
import { csiProto, registrationProto } from './proto/index.js';
import type * as T from './proto/types.js';
import { grpcCodeName, toCsiError, CsiError } from './errors.js';
import { newClient, socketPath, unary, waitReady, type AnyMethod } from './grpc.js';
import { TraceRing, DEFAULT_TRACE_CAPACITY, type CallListener, type CallTrace } from './trace.js';
import { processCsiTrace, type CsiCallInput, type CsiTraceHub, type TraceObject } from './tracehub.js';
import { redactSecrets } from './redact.js';
import { newLogger, type Logger } from '../util/log.js';

export type CallKind = 'identity' | 'controller' | 'node';

// identity: cheap metadata calls. controller: the external-* sidecars' default --timeout is in
// the 10-15 s range. node: kubelet csiTimeout for stage/publish is 2 min (mkfs can be slow).
export const DEFAULT_TIMEOUTS: Readonly<Record<CallKind, number>> = {
  identity: 10_000,
  controller: 15_000,
  node: 120_000,
};

export interface CsiClientOptions {
  /** `unix:///path/csi.sock` or a bare path. */
  readonly endpoint: string;
  readonly timeouts?: Partial<Record<CallKind, number>>;
  readonly traceCapacity?: number;
  readonly log?: Logger;
  /** Called before every Controller* call; throwing refuses it (a leader-elected sidecar's gate). */
  readonly controllerGate?: () => void;
  /**
   * Who calls, for calls no single Kubernetes component owns (Identity, capabilities); the others
   * are named after the component that makes them (callerOf). Default `stowage`.
   */
  readonly caller?: string;
  /** The driver's name when known (a registered driver); else learnt from GetPluginInfo. */
  readonly driverName?: string;
  /** Where every call is also recorded (default: this process's hub; null: nowhere). */
  readonly traceHub?: CsiTraceHub | null;
}

/** Per-call overrides. Aborting `signal` cancels the call (CANCELLED). */
export interface CallOptions {
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /** The object this call is made for, kept in the trace (a claim, a pod...). */
  readonly for?: TraceObject;
}

/** The Kubernetes component that makes each CSI call (Identity and capability calls: everyone). */
const CALLER_OF_METHOD: Readonly<Record<string, string>> = {
  CreateVolume: 'csi-provisioner',
  DeleteVolume: 'csi-provisioner',
  GetCapacity: 'csi-provisioner',
  ValidateVolumeCapabilities: 'csi-provisioner',
  ControllerPublishVolume: 'csi-attacher',
  ControllerUnpublishVolume: 'csi-attacher',
  ListVolumes: 'csi-attacher',
  ControllerGetVolume: 'csi-attacher',
  ControllerExpandVolume: 'csi-resizer',
  ControllerModifyVolume: 'csi-resizer',
  CreateSnapshot: 'csi-snapshotter',
  DeleteSnapshot: 'csi-snapshotter',
  ListSnapshots: 'csi-snapshotter',
};

export function callerOf(method: string, fallback: string): string {
  const [, service = '', name = ''] = /^\/csi\.v1\.(\w+)\/(\w+)$/.exec(method) ?? [];
  if (service === 'Node' && name !== 'NodeGetCapabilities') return 'kubelet';
  return CALLER_OF_METHOD[name] ?? fallback;
}

/** Answers longer than this (as JSON) are kept as their size only. */
const MAX_TRACED_RESPONSE = 8192;

function traceableResponse(res: unknown): unknown {
  const json = JSON.stringify(redactSecrets(res));
  return json.length > MAX_TRACED_RESPONSE ? { truncated: `${json.length} bytes` } : (JSON.parse(json) as unknown);
}

export interface ConnectOptions {
  /** Give up after this long (default: wait until `signal` aborts). */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

// The channel retries connecting with its own backoff (grpc.ts CHANNEL_OPTIONS); we wake up this
// often only to log that we are still waiting, as node-driver-registrar does every 10 s.
const CONNECT_LOG_INTERVAL_MS = 10_000;

export class CsiClient {
  readonly endpoint: string;
  private readonly client: grpc.Client;
  private readonly timeouts: Record<CallKind, number>;
  private readonly ring: TraceRing<CsiCallInput>;
  private readonly hub: CsiTraceHub | null;
  private readonly caller: string;
  /** The driver's name once GetPluginInfo answered; the endpoint until then. */
  private driverName: string;
  private readonly log: Logger;
  private readonly defs = csiProto().csi.v1;
  private pluginCaps?: Promise<T.GetPluginCapabilitiesResponse__Output>;
  private controllerCaps?: Promise<ReadonlySet<T.ControllerCapabilityName>>;
  private nodeCaps?: Promise<ReadonlySet<T.NodeCapabilityName>>;
  private closed = false;
  private readonly controllerGate: (() => void) | undefined;

  constructor(o: CsiClientOptions) {
    this.controllerGate = o.controllerGate;
    this.endpoint = socketPath(o.endpoint);
    this.client = newClient(this.endpoint);
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...o.timeouts };
    this.ring = new TraceRing<CsiCallInput>(o.traceCapacity ?? DEFAULT_TRACE_CAPACITY);
    this.hub = o.traceHub === undefined ? processCsiTrace : o.traceHub;
    this.caller = o.caller ?? 'stowage';
    this.driverName = o.driverName ?? this.endpoint;
    this.log = o.log ?? newLogger('csi-client');
    this.watchConnection(this.client.getChannel().getConnectivityState(false));
  }

  /**
   * Waits until the driver's socket accepts a connection. Rejects with CsiError(UNAVAILABLE) on
   * timeout, or with the abort reason.
   */
  async connect(o: ConnectOptions = {}): Promise<void> {
    const start = Date.now();
    for (;;) {
      const left =
        o.timeoutMs === undefined
          ? CONNECT_LOG_INTERVAL_MS
          : Math.min(CONNECT_LOG_INTERVAL_MS, o.timeoutMs - (Date.now() - start));
      try {
        await waitReady(this.client, Math.max(left, 0), o.signal);
        return;
      } catch (e) {
        if (o.signal?.aborted) throw o.signal.reason;
        if (this.closed) throw new CsiError('connect', grpc.status.CANCELLED, 'client closed');
        if (o.timeoutMs !== undefined && Date.now() - start >= o.timeoutMs) {
          throw new CsiError('connect', grpc.status.UNAVAILABLE, `${this.endpoint} not ready after ${o.timeoutMs} ms`, {
            cause: e,
          });
        }
        this.log.info('still connecting to CSI driver', { endpoint: this.endpoint, waitedMs: Date.now() - start });
      }
    }
  }

  // ---- Identity -------------------------------------------------------------------------------
  async getPluginInfo(o?: CallOptions): Promise<T.GetPluginInfoResponse__Output> {
    const r = await this.call('identity', this.defs.Identity.service.GetPluginInfo, {}, o);
    if (r.name) this.driverName = r.name;
    return r;
  }
  getPluginCapabilities(o?: CallOptions): Promise<T.GetPluginCapabilitiesResponse__Output> {
    return this.call('identity', this.defs.Identity.service.GetPluginCapabilities, {}, o);
  }
  probe(o?: CallOptions): Promise<T.ProbeResponse__Output> {
    return this.call('identity', this.defs.Identity.service.Probe, {}, o);
  }
  /** Probe's `ready`: an unset value means ready (CSI spec). */
  async isReady(o?: CallOptions): Promise<boolean> {
    const r = await this.probe(o);
    return r.ready === null || r.ready.value;
  }

  // ---- Controller -----------------------------------------------------------------------------
  createVolume(req: T.CreateVolumeRequest, o?: CallOptions): Promise<T.CreateVolumeResponse__Output> {
    return this.call('controller', this.defs.Controller.service.CreateVolume, req, o);
  }
  deleteVolume(req: T.DeleteVolumeRequest, o?: CallOptions): Promise<T.DeleteVolumeResponse__Output> {
    return this.call('controller', this.defs.Controller.service.DeleteVolume, req, o);
  }
  controllerPublishVolume(
    req: T.ControllerPublishVolumeRequest,
    o?: CallOptions,
  ): Promise<T.ControllerPublishVolumeResponse__Output> {
    return this.call('controller', this.defs.Controller.service.ControllerPublishVolume, req, o);
  }
  controllerUnpublishVolume(
    req: T.ControllerUnpublishVolumeRequest,
    o?: CallOptions,
  ): Promise<T.ControllerUnpublishVolumeResponse__Output> {
    return this.call('controller', this.defs.Controller.service.ControllerUnpublishVolume, req, o);
  }
  validateVolumeCapabilities(
    req: T.ValidateVolumeCapabilitiesRequest,
    o?: CallOptions,
  ): Promise<T.ValidateVolumeCapabilitiesResponse__Output> {
    return this.call('controller', this.defs.Controller.service.ValidateVolumeCapabilities, req, o);
  }
  listVolumes(req: T.ListVolumesRequest = {}, o?: CallOptions): Promise<T.ListVolumesResponse__Output> {
    return this.call('controller', this.defs.Controller.service.ListVolumes, req, o);
  }
  getCapacity(req: T.GetCapacityRequest = {}, o?: CallOptions): Promise<T.GetCapacityResponse__Output> {
    return this.call('controller', this.defs.Controller.service.GetCapacity, req, o);
  }
  controllerGetCapabilities(o?: CallOptions): Promise<T.ControllerGetCapabilitiesResponse__Output> {
    return this.call('controller', this.defs.Controller.service.ControllerGetCapabilities, {}, o);
  }
  createSnapshot(req: T.CreateSnapshotRequest, o?: CallOptions): Promise<T.CreateSnapshotResponse__Output> {
    return this.call('controller', this.defs.Controller.service.CreateSnapshot, req, o);
  }
  deleteSnapshot(req: T.DeleteSnapshotRequest, o?: CallOptions): Promise<T.DeleteSnapshotResponse__Output> {
    return this.call('controller', this.defs.Controller.service.DeleteSnapshot, req, o);
  }
  listSnapshots(req: T.ListSnapshotsRequest = {}, o?: CallOptions): Promise<T.ListSnapshotsResponse__Output> {
    return this.call('controller', this.defs.Controller.service.ListSnapshots, req, o);
  }
  controllerExpandVolume(
    req: T.ControllerExpandVolumeRequest,
    o?: CallOptions,
  ): Promise<T.ControllerExpandVolumeResponse__Output> {
    return this.call('controller', this.defs.Controller.service.ControllerExpandVolume, req, o);
  }
  controllerGetVolume(
    req: T.ControllerGetVolumeRequest,
    o?: CallOptions,
  ): Promise<T.ControllerGetVolumeResponse__Output> {
    return this.call('controller', this.defs.Controller.service.ControllerGetVolume, req, o);
  }
  controllerModifyVolume(
    req: T.ControllerModifyVolumeRequest,
    o?: CallOptions,
  ): Promise<T.ControllerModifyVolumeResponse__Output> {
    return this.call('controller', this.defs.Controller.service.ControllerModifyVolume, req, o);
  }

  // ---- Node -----------------------------------------------------------------------------------
  nodeStageVolume(req: T.NodeStageVolumeRequest, o?: CallOptions): Promise<T.NodeStageVolumeResponse__Output> {
    return this.call('node', this.defs.Node.service.NodeStageVolume, req, o);
  }
  nodeUnstageVolume(req: T.NodeUnstageVolumeRequest, o?: CallOptions): Promise<T.NodeUnstageVolumeResponse__Output> {
    return this.call('node', this.defs.Node.service.NodeUnstageVolume, req, o);
  }
  nodePublishVolume(req: T.NodePublishVolumeRequest, o?: CallOptions): Promise<T.NodePublishVolumeResponse__Output> {
    return this.call('node', this.defs.Node.service.NodePublishVolume, req, o);
  }
  nodeUnpublishVolume(
    req: T.NodeUnpublishVolumeRequest,
    o?: CallOptions,
  ): Promise<T.NodeUnpublishVolumeResponse__Output> {
    return this.call('node', this.defs.Node.service.NodeUnpublishVolume, req, o);
  }
  nodeGetVolumeStats(req: T.NodeGetVolumeStatsRequest, o?: CallOptions): Promise<T.NodeGetVolumeStatsResponse__Output> {
    return this.call('node', this.defs.Node.service.NodeGetVolumeStats, req, o);
  }
  nodeExpandVolume(req: T.NodeExpandVolumeRequest, o?: CallOptions): Promise<T.NodeExpandVolumeResponse__Output> {
    return this.call('node', this.defs.Node.service.NodeExpandVolume, req, o);
  }
  nodeGetCapabilities(o?: CallOptions): Promise<T.NodeGetCapabilitiesResponse__Output> {
    return this.call('node', this.defs.Node.service.NodeGetCapabilities, {}, o);
  }
  nodeGetInfo(o?: CallOptions): Promise<T.NodeGetInfoResponse__Output> {
    return this.call('node', this.defs.Node.service.NodeGetInfo, {}, o);
  }

  // ---- Capabilities (cached until the connection drops) ----------------------------------------
  /** Plugin service capabilities, e.g. CONTROLLER_SERVICE. */
  async pluginCapabilities(): Promise<ReadonlySet<T.PluginServiceCapabilityName>> {
    const r = await this.cachedPluginCaps();
    return new Set(r.capabilities.flatMap((c) => (c.service ? [c.service.type] : [])));
  }
  /** Plugin volume-expansion modes (ONLINE / OFFLINE), from the same GetPluginCapabilities reply. */
  async volumeExpansionModes(): Promise<ReadonlySet<T.VolumeExpansionName>> {
    const r = await this.cachedPluginCaps();
    return new Set(r.capabilities.flatMap((c) => (c.volumeExpansion ? [c.volumeExpansion.type] : [])));
  }
  controllerCapabilities(): Promise<ReadonlySet<T.ControllerCapabilityName>> {
    this.controllerCaps ??= this.uncacheOnError(
      this.controllerGetCapabilities().then((r) => new Set(r.capabilities.flatMap((c) => (c.rpc ? [c.rpc.type] : [])))),
      () => (this.controllerCaps = undefined),
    );
    return this.controllerCaps;
  }
  nodeCapabilities(): Promise<ReadonlySet<T.NodeCapabilityName>> {
    this.nodeCaps ??= this.uncacheOnError(
      this.nodeGetCapabilities().then((r) => new Set(r.capabilities.flatMap((c) => (c.rpc ? [c.rpc.type] : [])))),
      () => (this.nodeCaps = undefined),
    );
    return this.nodeCaps;
  }

  // ---- Trace ----------------------------------------------------------------------------------
  /** The last calls (bounded ring), oldest first; a fresh array every time. */
  trace(): readonly CallTrace[] {
    return this.ring.list();
  }
  /** Called after every call ends; returns the unsubscribe function. */
  onCall(listener: CallListener<CsiCallInput>): () => void {
    return this.ring.subscribe(listener);
  }

  close(): void {
    this.closed = true;
    this.client.close();
  }

  // ---- internals ------------------------------------------------------------------------------
  private cachedPluginCaps(): Promise<T.GetPluginCapabilitiesResponse__Output> {
    this.pluginCaps ??= this.uncacheOnError(this.getPluginCapabilities(), () => (this.pluginCaps = undefined));
    return this.pluginCaps;
  }

  private uncacheOnError<V>(p: Promise<V>, drop: () => void): Promise<V> {
    p.catch(drop);
    return p;
  }

  // A driver that restarts may come back with other capabilities: forget them whenever the
  // channel leaves READY.
  private watchConnection(state: grpc.connectivityState): void {
    if (this.closed) return;
    const channel = this.client.getChannel();
    channel.watchConnectivityState(state, Infinity, () => {
      const now = channel.getConnectivityState(false);
      if (state === grpc.connectivityState.READY && now !== grpc.connectivityState.READY) {
        this.pluginCaps = this.controllerCaps = this.nodeCaps = undefined;
      }
      if (now !== grpc.connectivityState.SHUTDOWN) this.watchConnection(now);
    });
  }

  private async call<Req, Res>(kind: CallKind, def: AnyMethod<Req, Res>, req: Req, o?: CallOptions): Promise<Res> {
    const startMs = Date.now();
    const t0 = performance.now();
    const reqVolumeId = volumeIdOf(req);
    if (kind === 'controller') this.controllerGate?.();
    try {
      const res = await unary(this.client, def, req, o?.timeoutMs ?? this.timeouts[kind], o?.signal);
      this.record(def.path, req, o, {
        volumeId: reqVolumeId ?? volumeIdOf(res),
        startMs,
        durationMs: performance.now() - t0,
        code: 'OK',
        response: res,
      });
      return res;
    } catch (e) {
      const err = toCsiError(def.path, e);
      this.record(def.path, req, o, {
        volumeId: reqVolumeId,
        startMs,
        durationMs: performance.now() - t0,
        code: grpcCodeName(err.grpcCode),
        error: err.details,
      });
      throw err;
    }
  }

  private record(
    method: string,
    req: unknown,
    o: CallOptions | undefined,
    r: {
      volumeId: string | undefined;
      startMs: number;
      durationMs: number;
      code: string;
      error?: string;
      response?: unknown;
    },
  ): void {
    const t: CsiCallInput = {
      method,
      ...(r.volumeId === undefined ? {} : { volumeId: r.volumeId }),
      startMs: r.startMs,
      durationMs: r.durationMs,
      code: r.code,
      ...(r.error === undefined ? {} : { error: r.error }),
      driver: this.driverName,
      caller: callerOf(method, this.caller),
      request: redactSecrets(req),
      ...(r.response === undefined ? {} : { response: traceableResponse(r.response) }),
      ...(o?.for ? { object: o.for } : {}),
    };
    this.ring.push(t);
    this.hub?.record(t);
  }
}

/** The volume a request or response is about: volume_id, source_volume_id, or a created volume's id. */
export function volumeIdOf(m: unknown): string | undefined {
  if (typeof m !== 'object' || m === null) return undefined;
  const r = m as { volumeId?: unknown; sourceVolumeId?: unknown; volume?: unknown };
  if (typeof r.volumeId === 'string' && r.volumeId !== '') return r.volumeId;
  if (typeof r.sourceVolumeId === 'string' && r.sourceVolumeId !== '') return r.sourceVolumeId;
  if (typeof r.volume === 'object' && r.volume !== null) return volumeIdOf(r.volume);
  return undefined;
}

/**
 * Client for a plugin's registration socket (`<name>-reg.sock`): what the kubelet's plugin
 * watcher does. Used by tests and by the node agent's plugin manager.
 */
export class RegistrationClient {
  readonly endpoint: string;
  private readonly client: grpc.Client;
  private readonly defs = registrationProto().pluginregistration.Registration.service;

  constructor(
    endpoint: string,
    private readonly timeoutMs = 10_000,
  ) {
    this.endpoint = socketPath(endpoint);
    this.client = newClient(this.endpoint);
  }

  getInfo(o?: CallOptions): Promise<T.PluginInfo__Output> {
    return unary(this.client, this.defs.GetInfo, {}, o?.timeoutMs ?? this.timeoutMs, o?.signal);
  }

  notifyRegistrationStatus(s: T.RegistrationStatus, o?: CallOptions): Promise<T.RegistrationStatusResponse__Output> {
    return unary(this.client, this.defs.NotifyRegistrationStatus, s, o?.timeoutMs ?? this.timeoutMs, o?.signal);
  }

  close(): void {
    this.client.close();
  }
}

export { CsiError } from './errors.js';
export type { CallTrace, CallListener } from './trace.js';
export type { CsiCall, CsiCallInput, TraceObject } from './tracehub.js';
