/**
 * Per-driver registration status as users see it: the Node annotation `stowage.io/csi-plugins`
 * (JSON {driver: {state, reason, since}}, read with `kubectl get node -o yaml`) and one Event on
 * the Node per transition (`kubectl describe node`).
 */
import type { EventType } from '../../../client/events.js';

export const PLUGIN_STATUS_ANNOTATION = 'stowage.io/csi-plugins';

export const PLUGIN_STATES = ['registered', 'failing', 'unhealthy'] as const;
export type PluginState = (typeof PLUGIN_STATES)[number];

/** Event reasons, one per kind of transition. */
export const PLUGIN_EVENT_REASONS = {
  registered: 'PluginRegistered',
  failing: 'PluginRegistrationFailed',
  unhealthy: 'PluginUnhealthy',
  recovered: 'PluginHealthy',
  deregistered: 'PluginDeregistered',
} as const;

export interface PluginStatus {
  readonly state: PluginState;
  /** Why it is failing or unhealthy; absent when registered. */
  readonly reason?: string;
  /** RFC 3339 time of the last state change. */
  readonly since: string;
  /** The registration socket the status is about. */
  readonly socket: string;
  /** Failing because nothing answers on the socket (rather than a refusal or an error). */
  readonly unreachable?: boolean;
}

export interface StatusEvent {
  readonly type: EventType;
  readonly reason: string;
  readonly message: string;
}

/** What a signal means for a driver's status. */
export type StatusSignal =
  | { readonly kind: 'registered'; readonly socket: string; readonly endpoint: string }
  | { readonly kind: 'failed'; readonly socket: string; readonly reason: string; readonly unreachable: boolean }
  | { readonly kind: 'unhealthy'; readonly reason: string }
  | { readonly kind: 'healthy' }
  | { readonly kind: 'deregistered'; readonly socket: string }
  | { readonly kind: 'socketRemoved'; readonly socket: string };

export type Transition =
  | { readonly kind: 'unchanged' }
  | { readonly kind: 'set'; readonly status: PluginStatus; readonly event?: StatusEvent }
  | { readonly kind: 'delete'; readonly event?: StatusEvent };

/**
 * The pure transition table. Health signals only apply to registered drivers; a failure of a
 * second socket does not hide a working registration from another one; `since` moves only when
 * the state changes.
 */
export function transition(
  driver: string,
  prev: PluginStatus | undefined,
  s: StatusSignal,
  nowIso: string,
): Transition {
  const since = (state: PluginState): string => (prev?.state === state ? prev.since : nowIso);
  switch (s.kind) {
    case 'registered': {
      const event: StatusEvent = {
        type: 'Normal',
        reason: PLUGIN_EVENT_REASONS.registered,
        message: `CSI driver ${driver} registered (endpoint ${s.endpoint}, registration socket ${s.socket})`,
      };
      if (prev?.state === 'registered' && prev.socket === s.socket) return { kind: 'unchanged' };
      return { kind: 'set', status: { state: 'registered', since: since('registered'), socket: s.socket }, event };
    }
    case 'failed': {
      if (prev && prev.state !== 'failing' && prev.socket !== s.socket) return { kind: 'unchanged' };
      if (prev?.state === 'failing' && prev.reason === s.reason && prev.socket === s.socket)
        return { kind: 'unchanged' };
      // A refused node-driver-registrar exits and leaves its socket behind: the retries then only
      // find a dead socket, and the reason it was refused is what the user needs to see.
      if (s.unreachable && prev?.state === 'failing' && !prev.unreachable && prev.socket === s.socket)
        return { kind: 'unchanged' };
      const event: StatusEvent = {
        type: 'Warning',
        reason: PLUGIN_EVENT_REASONS.failing,
        message: `CSI driver ${driver}: ${s.reason}`,
      };
      const status: PluginStatus = {
        state: 'failing',
        reason: s.reason,
        since: since('failing'),
        socket: s.socket,
        ...(s.unreachable ? { unreachable: true } : {}),
      };
      return { kind: 'set', status, event };
    }
    case 'unhealthy': {
      if (!prev || prev.state === 'failing') return { kind: 'unchanged' };
      if (prev.state === 'unhealthy')
        return prev.reason === s.reason
          ? { kind: 'unchanged' }
          : { kind: 'set', status: { ...prev, reason: s.reason } };
      const event: StatusEvent = {
        type: 'Warning',
        reason: PLUGIN_EVENT_REASONS.unhealthy,
        message: `CSI driver ${driver} is registered but not healthy: ${s.reason}`,
      };
      return {
        kind: 'set',
        status: { state: 'unhealthy', reason: s.reason, since: nowIso, socket: prev.socket },
        event,
      };
    }
    case 'healthy': {
      if (prev?.state !== 'unhealthy') return { kind: 'unchanged' };
      const event: StatusEvent = {
        type: 'Normal',
        reason: PLUGIN_EVENT_REASONS.recovered,
        message: `CSI driver ${driver} is answering again`,
      };
      return { kind: 'set', status: { state: 'registered', since: nowIso, socket: prev.socket }, event };
    }
    case 'deregistered': {
      if (!prev || prev.socket !== s.socket) return { kind: 'unchanged' };
      return {
        kind: 'delete',
        event: {
          type: 'Normal',
          reason: PLUGIN_EVENT_REASONS.deregistered,
          message: `CSI driver ${driver} deregistered (registration socket ${s.socket} removed or replaced)`,
        },
      };
    }
    case 'socketRemoved':
      // A stale socket cleaned up is no news; a refusal stays visible until the driver registers.
      return prev?.state === 'failing' && prev.unreachable && prev.socket === s.socket
        ? { kind: 'delete' }
        : { kind: 'unchanged' };
  }
}

/** Parses the annotation written by an earlier run; anything malformed is dropped. */
export function parseStatusAnnotation(raw: string | undefined): Record<string, PluginStatus> {
  if (!raw) return {};
  try {
    const v: unknown = JSON.parse(raw);
    if (typeof v !== 'object' || v === null) return {};
    const out: Record<string, PluginStatus> = {};
    for (const [k, s] of Object.entries(v)) {
      if (typeof s !== 'object' || s === null) continue;
      const r = s as Record<string, unknown>;
      if (
        typeof r.state === 'string' &&
        (PLUGIN_STATES as readonly string[]).includes(r.state) &&
        typeof r.since === 'string'
      ) {
        out[k] = {
          state: r.state as PluginState,
          since: r.since,
          socket: typeof r.socket === 'string' ? r.socket : '',
          ...(typeof r.reason === 'string' ? { reason: r.reason } : {}),
          ...(r.unreachable === true ? { unreachable: true } : {}),
        };
      }
    }
    return out;
  } catch {
    return {}; // not ours to fix: the next write replaces it
  }
}
