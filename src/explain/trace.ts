/**
 * The CSI call trace as the API serves it: a query (by volume, PV, claim, pod, driver, time, failed
 * only) resolved against the objects into a hub filter, and each call as a `CSICall` item.
 */
import type { CsiCall, CsiCallFilter } from '../csi/tracehub.js';
import { podClaimNames } from '../controllers/scheduler/types.js';
import type { ExplainSource } from './source.js';
import { EXPLAIN_API_VERSION } from './types.js';

export interface TraceQuery {
  /** A CSI volume id (the PV's volumeHandle). */
  readonly volume?: string;
  /** A PersistentVolume name. */
  readonly pv?: string;
  /** A claim (with `namespace`): its volume's calls and the CreateVolume made for it. */
  readonly claim?: string;
  /** A pod (with `namespace`): the calls for its claims' volumes and those made for the pod. */
  readonly pod?: string;
  readonly namespace?: string;
  readonly driver?: string;
  readonly sinceMs?: number;
  readonly failedOnly?: boolean;
  readonly afterId?: number;
}

export class TraceQueryError extends Error {}

/** Parses the URL query of a csicalls request; a TraceQueryError names the bad parameter. */
export function parseTraceQuery(q: URLSearchParams): TraceQuery {
  const str = (k: string): string | undefined => q.get(k) || undefined;
  const since = str('since');
  let sinceMs: number | undefined;
  if (since !== undefined) {
    sinceMs = Date.parse(since);
    if (Number.isNaN(sinceMs)) throw new TraceQueryError(`since: not an RFC 3339 time: ${since}`);
  }
  const sinceSeconds = str('sinceSeconds');
  if (sinceSeconds !== undefined) {
    const n = Number(sinceSeconds);
    if (!Number.isInteger(n) || n < 0)
      throw new TraceQueryError(`sinceSeconds: not a non-negative integer: ${sinceSeconds}`);
    sinceMs = Date.now() - n * 1000;
  }
  const rv = str('resourceVersion');
  const afterId = rv === undefined ? undefined : Number(rv);
  if (afterId !== undefined && (!Number.isInteger(afterId) || afterId < 0))
    throw new TraceQueryError(`resourceVersion: not a non-negative integer: ${rv ?? ''}`);
  const failed = str('failed');
  if (failed !== undefined && failed !== 'true' && failed !== 'false')
    throw new TraceQueryError(`failed: must be true or false, not ${failed}`);
  if ((str('claim') || str('pod')) && !str('namespace'))
    throw new TraceQueryError('namespace: required with claim or pod');
  return {
    volume: str('volume'),
    pv: str('pv'),
    claim: str('claim'),
    pod: str('pod'),
    namespace: str('namespace'),
    driver: str('driver'),
    sinceMs,
    failedOnly: failed === 'true',
    afterId,
  };
}

/** The hub filter of a query, resolving PV, claim and pod names to volume ids now. */
export function resolveTraceQuery(q: TraceQuery, s: ExplainSource): CsiCallFilter {
  const volumeIds = new Set<string>();
  const requestNames = new Set<string>();
  const addPv = (name: string | undefined): void => {
    const h = name ? s.volume(name)?.spec?.csi?.volumeHandle : undefined;
    if (h) volumeIds.add(h);
  };
  const addClaim = (ns: string, name: string): void => {
    const c = s.claim(ns, name);
    if (!c) return;
    addPv(c.spec?.volumeName);
    // external-provisioner names the volume it creates for a claim pvc-<claim uid>.
    if (c.metadata?.uid) requestNames.add(`pvc-${c.metadata.uid}`);
  };
  if (q.volume) volumeIds.add(q.volume);
  addPv(q.pv);
  const ns = q.namespace ?? '';
  if (q.claim) addClaim(ns, q.claim);
  if (q.pod) {
    const p = s.pod(ns, q.pod);
    for (const name of p ? podClaimNames(p) : []) addClaim(ns, name);
  }
  const scoped = q.volume !== undefined || q.pv !== undefined || q.claim !== undefined || q.pod !== undefined;
  return {
    ...(scoped ? { volumeIds, requestNames } : {}),
    ...(q.pod ? { object: { kind: 'Pod', namespace: ns, name: q.pod } } : {}),
    ...(q.claim ? { object: { kind: 'PersistentVolumeClaim', namespace: ns, name: q.claim } } : {}),
    ...(q.driver ? { driver: q.driver } : {}),
    ...(q.sinceMs !== undefined ? { sinceMs: q.sinceMs } : {}),
    ...(q.failedOnly ? { failedOnly: true } : {}),
    ...(q.afterId !== undefined ? { afterId: q.afterId } : {}),
  };
}

/** One call as the API shows it. */
export function csiCallItem(c: CsiCall): Record<string, unknown> {
  return {
    apiVersion: EXPLAIN_API_VERSION,
    kind: 'CSICall',
    metadata: { name: String(c.id), resourceVersion: String(c.id) },
    time: new Date(c.startMs).toISOString(),
    durationSeconds: c.durationMs / 1000,
    method: c.method,
    driver: c.driver,
    caller: c.caller,
    ...(c.volumeId !== undefined ? { volumeId: c.volumeId } : {}),
    ...(c.object ? { object: c.object } : {}),
    request: c.request,
    code: c.code,
    ...(c.error !== undefined ? { error: c.error } : {}),
    ...(c.response !== undefined ? { response: c.response } : {}),
  };
}
