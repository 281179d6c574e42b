import type { RestClient } from './rest.js';

export interface SelfSubject {
  readonly username: string;
  readonly groups: readonly string[];
}

/** Who the API server takes this client's credential for (authentication.k8s.io/v1 SelfSubjectReview, `kubectl auth whoami`). */
export async function whoAmI(client: RestClient, signal?: AbortSignal): Promise<SelfSubject> {
  const api = client.dynamic('SelfSubjectReview', { group: 'authentication.k8s.io', version: 'v1', plural: 'selfsubjectreviews', namespaced: false });
  const out: unknown = await api.create({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview', metadata: {} }, { signal });
  const info: unknown = typeof out === 'object' && out !== null && 'status' in out && typeof out.status === 'object' && out.status !== null && 'userInfo' in out.status ? out.status.userInfo : undefined;
  const rec = typeof info === 'object' && info !== null ? (info as Record<string, unknown>) : {};
  const username = typeof rec.username === 'string' ? rec.username : '';
  const groups = Array.isArray(rec.groups) ? rec.groups.filter((g): g is string => typeof g === 'string') : [];
  return { username, groups };
}
