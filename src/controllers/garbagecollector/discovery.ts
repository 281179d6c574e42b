/**
 * The resources the garbage collector watches, found through the API server's legacy discovery
 * (GET /api/v1, /apis, /apis/<group>/<version>) as upstream's GetDeletableResources: every
 * top-level resource (no subresources) whose verbs include list, watch and delete, at its group's
 * preferred version.
 */
import type { KindInfo } from '../../client/kinds.js';
import type { RestClient } from '../../client/rest.js';

/** A resource served by the API: how to reach it and the kind of its objects. */
export interface ApiResource extends KindInfo {
  readonly kind: string;
}

const REQUIRED_VERBS = ['list', 'watch', 'delete'] as const;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function records(v: unknown): Record<string, unknown>[] {
  return Array.isArray(v) ? v.filter(isRecord) : [];
}

/** The deletable resources of one APIResourceList answer. */
export function deletableResources(list: unknown, group: string, version: string): ApiResource[] {
  if (!isRecord(list)) return [];
  return records(list.resources).flatMap((r) => {
    const { name, kind, namespaced, verbs } = r;
    if (typeof name !== 'string' || name.includes('/') || typeof kind !== 'string' || typeof namespaced !== 'boolean')
      return [];
    const vs = Array.isArray(verbs) ? verbs : [];
    if (!REQUIRED_VERBS.every((v) => vs.includes(v))) return [];
    return [{ group, version, plural: name, namespaced, kind }];
  });
}

/** The preferred group-versions of an APIGroupList answer. */
export function preferredGroupVersions(groups: unknown): Array<{ group: string; version: string }> {
  if (!isRecord(groups)) return [];
  return records(groups.groups).flatMap((g) => {
    const pv = g.preferredVersion;
    if (typeof g.name !== 'string' || !isRecord(pv) || typeof pv.version !== 'string') return [];
    return [{ group: g.name, version: pv.version }];
  });
}

/** Every deletable resource the server serves (core v1 and each group's preferred version). */
export async function discoverDeletableResources(client: RestClient, signal?: AbortSignal): Promise<ApiResource[]> {
  const get = (path: string): Promise<unknown> => client.http.json({ method: 'GET', path, signal });
  const out = deletableResources(await get('/api/v1'), '', 'v1');
  for (const { group, version } of preferredGroupVersions(await get('/apis'))) {
    out.push(...deletableResources(await get(`/apis/${group}/${version}`), group, version));
  }
  return out;
}
