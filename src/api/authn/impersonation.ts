/**
 * kube-apiserver's impersonation filter: `Impersonate-User`, `Impersonate-Group` (repeated),
 * `Impersonate-Uid` and `Impersonate-Extra-<key>` replace the requester by another identity, each
 * part checked first with the `impersonate` verb; the request then runs as the impersonated user.
 */
import { AUTHENTICATED_GROUP, forbiddenFor, type Authorizer, type RequestAttributes, type UserInfo } from '../authz.js';
import { ApiUnknownReasonError } from '../status.js';
import { serviceAccountGroups, splitServiceAccountUsername } from './serviceaccount.js';

export const ANONYMOUS_USER = 'system:anonymous';
export const UNAUTHENTICATED_GROUP = 'system:unauthenticated';

const EXTRA_PREFIX = 'impersonate-extra-';

/** One thing asked to be impersonated, as the attributes the `impersonate` check is made on. */
type Requested =
  | { readonly kind: 'user'; readonly name: string }
  | { readonly kind: 'serviceaccount'; readonly namespace: string; readonly name: string }
  | { readonly kind: 'group'; readonly name: string }
  | { readonly kind: 'uid'; readonly uid: string }
  | { readonly kind: 'extra'; readonly key: string; readonly value: string };

/** Every value of a header (node joins repeated headers into one string; headersDistinct keeps them apart). */
function values(h: Readonly<Record<string, readonly string[] | undefined>>, name: string): readonly string[] {
  return (h[name] ?? []).filter((v) => v !== '');
}

/** Extra keys travel percent-encoded in header names (kube lower-cases, then unescapes). */
function extraKey(headerName: string): string {
  const raw = headerName.slice(EXTRA_PREFIX.length).toLowerCase();
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/**
 * The impersonation a request's headers ask for, in kube's order (user, groups, extras, uid); empty
 * when none. Groups, extras or a uid without a user are refused, as kube-apiserver does.
 */
export function impersonationRequests(
  headers: Readonly<Record<string, readonly string[] | undefined>>,
): readonly Requested[] {
  const out: Requested[] = [];
  const user = values(headers, 'impersonate-user')[0];
  if (user !== undefined) {
    const sa = splitServiceAccountUsername(user);
    out.push(sa ? { kind: 'serviceaccount', ...sa } : { kind: 'user', name: user });
  }
  for (const g of values(headers, 'impersonate-group')) out.push({ kind: 'group', name: g });
  for (const name of Object.keys(headers).sort()) {
    if (!name.toLowerCase().startsWith(EXTRA_PREFIX)) continue;
    for (const v of values(headers, name)) out.push({ kind: 'extra', key: extraKey(name), value: v });
  }
  const uid = values(headers, 'impersonate-uid')[0];
  if (uid !== undefined) out.push({ kind: 'uid', uid });
  if (out.length > 0 && user === undefined) {
    const what = out.map((r) => r.kind).join(', ');
    throw new ApiUnknownReasonError(`requested [${what}] without impersonating a user`);
  }
  return out;
}

/** The `impersonate` check for one requested part (kube's actingAsAttributes). */
function actingAs(requester: UserInfo, r: Requested): RequestAttributes {
  const base = { kind: 'resource', user: requester, verb: 'impersonate' } as const;
  switch (r.kind) {
    case 'user':
      return { ...base, group: '', resource: 'users', name: r.name };
    case 'serviceaccount':
      return { ...base, group: '', resource: 'serviceaccounts', namespace: r.namespace, name: r.name };
    case 'group':
      return { ...base, group: '', resource: 'groups', name: r.name };
    case 'uid':
      return { ...base, group: 'authentication.k8s.io', resource: 'uids', name: r.uid };
    case 'extra':
      return { ...base, group: 'authentication.k8s.io', resource: 'userextras', subresource: r.key, name: r.value };
  }
}

/**
 * The user a request runs as: `requester` when no impersonation is asked, otherwise the
 * impersonated user once every part passed the `impersonate` check (403 naming the first that did
 * not). A service account without explicit groups gets its fixed groups; a non-anonymous user gets
 * system:authenticated unless a group already says (un)authenticated; anonymous gets system:unauthenticated.
 */
export function impersonate(
  headers: Readonly<Record<string, readonly string[] | undefined>>,
  requester: UserInfo,
  authorizer: Authorizer,
): UserInfo {
  const asked = impersonationRequests(headers);
  if (asked.length === 0) return requester;
  const groupsSpecified = asked.some((r) => r.kind === 'group');
  let name = '';
  let uid: string | undefined;
  let groups: string[] = [];
  const extra: Record<string, string[]> = {};
  for (const r of asked) {
    const attrs = actingAs(requester, r);
    const d = authorizer.authorize(attrs);
    if (!d.allowed) throw forbiddenFor(attrs, d);
    switch (r.kind) {
      case 'user':
        name = r.name;
        break;
      case 'serviceaccount':
        name = `system:serviceaccount:${r.namespace}:${r.name}`;
        if (!groupsSpecified) groups = serviceAccountGroups(r.namespace);
        break;
      case 'group':
        groups.push(r.name);
        break;
      case 'uid':
        uid = r.uid;
        break;
      case 'extra':
        (extra[r.key] ??= []).push(r.value);
        break;
    }
  }
  if (name !== ANONYMOUS_USER) {
    if (!groups.includes(AUTHENTICATED_GROUP) && !groups.includes(UNAUTHENTICATED_GROUP))
      groups.push(AUTHENTICATED_GROUP);
  } else if (!groups.includes(UNAUTHENTICATED_GROUP)) groups.push(UNAUTHENTICATED_GROUP);
  return {
    name,
    groups,
    ...(uid !== undefined ? { uid } : {}),
    ...(Object.keys(extra).length > 0 ? { extra } : {}),
  };
}
