/**
 * imagePullSecrets → CRI AuthConfig, as the kubelet's credential keyring matches them: each
 * `kubernetes.io/dockerconfigjson` (or legacy `dockercfg`) secret's registry keys are compared
 * with the image's registry host and path; every match is a credential to try, most specific first.
 */
import type * as T from './proto/types.js';

/** A docker config `auths` entry. */
interface DockerAuthEntry {
  readonly username?: string;
  readonly password?: string;
  readonly auth?: string;
  readonly identitytoken?: string;
  readonly registrytoken?: string;
}

/** The registry host and repository path of an image reference (`docker.io/library/x` for bare names). */
export function imageLocation(image: string): { host: string; path: string } {
  const noDigest = image.split('@')[0]!;
  const slash = noDigest.indexOf('/');
  const first = slash >= 0 ? noDigest.slice(0, slash) : '';
  const hasHost = slash >= 0 && (first.includes('.') || first.includes(':') || first === 'localhost');
  const rest = hasHost ? noDigest.slice(slash + 1) : noDigest;
  const repo = rest.replace(/:[^/]*$/, '');
  const host = hasHost ? first : 'docker.io';
  return { host, path: host === 'docker.io' && !repo.includes('/') ? `library/${repo}` : repo };
}

/** A registry key as written in a docker config (`https://host/v1/`, `host:port`, `*.example.com/path`), parsed. */
function keyLocation(key: string): { host: string; path: string } {
  let k = key.replace(/^[a-z]+:\/\//, '');
  if (k === 'index.docker.io/v1/' || k === 'index.docker.io' || k === 'registry-1.docker.io') k = 'docker.io';
  const slash = k.indexOf('/');
  const host = slash >= 0 ? k.slice(0, slash) : k;
  const path = (slash >= 0 ? k.slice(slash + 1) : '').replace(/\/$/, '').replace(/^v[12]\/?$/, '');
  return { host, path };
}

/** Host glob as the keyring's: `*` matches within one dot-separated part; a port must agree. */
function hostMatches(pattern: string, host: string): boolean {
  const [ph, pp] = pattern.split(':');
  const [hh, hp] = host.split(':');
  if ((pp ?? '') !== (hp ?? '')) return false;
  const pParts = ph!.split('.');
  const hParts = hh!.split('.');
  if (pParts.length !== hParts.length) return false;
  return pParts.every((p, i) =>
    new RegExp(`^${p.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^.]*')}$`).test(hParts[i]!),
  );
}

function parseEntries(type: string, data: Readonly<Record<string, string>>): Array<[string, DockerAuthEntry]> {
  const raw =
    type === 'kubernetes.io/dockerconfigjson'
      ? data['.dockerconfigjson']
      : type === 'kubernetes.io/dockercfg'
        ? data['.dockercfg']
        : undefined;
  if (raw === undefined) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return [];
  }
  if (typeof parsed !== 'object' || parsed === null) return [];
  const auths = type === 'kubernetes.io/dockerconfigjson' ? (parsed as { auths?: unknown }).auths : parsed;
  if (typeof auths !== 'object' || auths === null) return [];
  return Object.entries(auths as Record<string, unknown>).flatMap(([k, v]) =>
    typeof v === 'object' && v !== null ? [[k, v as DockerAuthEntry] as [string, DockerAuthEntry]] : [],
  );
}

/** A pull secret: its type and decoded data. */
export interface PullSecret {
  readonly type: string;
  readonly data: Readonly<Record<string, string>>;
}

/** The credentials to try for `image`, most specific registry key first; empty = pull anonymously. */
export function pullAuths(image: string, secrets: readonly PullSecret[]): T.AuthConfig[] {
  const loc = imageLocation(image);
  const matches: Array<{ specificity: number; auth: T.AuthConfig }> = [];
  for (const s of secrets) {
    for (const [key, e] of parseEntries(s.type, s.data)) {
      const k = keyLocation(key);
      if (!hostMatches(k.host, loc.host)) continue;
      if (k.path !== '' && loc.path !== k.path && !loc.path.startsWith(`${k.path}/`)) continue;
      let username = e.username ?? '';
      let password = e.password ?? '';
      if ((username === '' || password === '') && e.auth) {
        const decoded = Buffer.from(e.auth, 'base64').toString('utf8');
        const colon = decoded.indexOf(':');
        if (colon >= 0) [username, password] = [decoded.slice(0, colon), decoded.slice(colon + 1)];
      }
      matches.push({
        specificity: k.path.length * 1000 + k.host.length,
        // No serverAddress: containerd would parse it as a URL and drop credentials on a mismatch;
        // the match is made here, by the keyring's rules.
        auth: {
          username,
          password,
          auth: e.auth ?? '',
          serverAddress: '',
          identityToken: e.identitytoken ?? '',
          registryToken: e.registrytoken ?? '',
        },
      });
    }
  }
  return matches.sort((a, b) => b.specificity - a.specificity).map((m) => m.auth);
}
