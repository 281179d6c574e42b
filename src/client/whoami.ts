import { backoffDelay, DEFAULT_BACKOFF, type Clock } from '../util/backoff.js';
import { UnauthorizedError } from '../util/errors.js';
import type { Logger } from '../util/log.js';
import type { RestClient } from './rest.js';

export interface SelfSubject {
  readonly username: string;
  readonly groups: readonly string[];
}

/** Who the API server takes this client's credential for (authentication.k8s.io/v1 SelfSubjectReview, `kubectl auth whoami`). */
export async function whoAmI(client: RestClient, signal?: AbortSignal): Promise<SelfSubject> {
  const api = client.dynamic('SelfSubjectReview', {
    group: 'authentication.k8s.io',
    version: 'v1',
    plural: 'selfsubjectreviews',
    namespaced: false,
  });
  const out: unknown = await api.create(
    { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview', metadata: {} },
    { signal },
  );
  const info: unknown =
    typeof out === 'object' &&
    out !== null &&
    'status' in out &&
    typeof out.status === 'object' &&
    out.status !== null &&
    'userInfo' in out.status
      ? out.status.userInfo
      : undefined;
  const rec = typeof info === 'object' && info !== null ? (info as Record<string, unknown>) : {};
  const username = typeof rec.username === 'string' ? rec.username : '';
  const groups = Array.isArray(rec.groups) ? rec.groups.filter((g): g is string => typeof g === 'string') : [];
  return { username, groups };
}

/**
 * whoAmI, asked again with backoff until the API server answers (a node starting while the server
 * is away waits for it, as its registration does); a refused credential (401) ends it.
 */
export async function whoAmIWhenReachable(
  client: RestClient,
  o: { clock: Clock; signal: AbortSignal; log: Logger },
): Promise<SelfSubject> {
  for (let failures = 0; ;) {
    try {
      return await whoAmI(client, o.signal);
    } catch (e) {
      if (o.signal.aborted || e instanceof UnauthorizedError) throw e;
      failures++;
      const delay = backoffDelay(DEFAULT_BACKOFF, failures);
      o.log.warn('cannot ask the API server who this credential is; retrying', {
        error: e instanceof Error ? e.message : String(e),
        retryInMs: delay,
      });
      await o.clock.sleep(delay, o.signal).catch(() => undefined);
    }
  }
}
