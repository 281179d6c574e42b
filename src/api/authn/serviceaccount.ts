/** Service-account user names and groups (k8s.io/apiserver/pkg/authentication/serviceaccount). */

const SA_PREFIX = 'system:serviceaccount:';
export const SERVICE_ACCOUNTS_GROUP = 'system:serviceaccounts';

/** `system:serviceaccount:<ns>:<name>` → its namespace and name; undefined for any other user name. */
export function splitServiceAccountUsername(
  user: string,
): { readonly namespace: string; readonly name: string } | undefined {
  if (!user.startsWith(SA_PREFIX)) return undefined;
  const parts = user.slice(SA_PREFIX.length).split(':');
  if (parts.length !== 2 || !parts[0] || !parts[1]) return undefined;
  return { namespace: parts[0], name: parts[1] };
}

export function serviceAccountUsername(namespace: string, name: string): string {
  return `${SA_PREFIX}${namespace}:${name}`;
}

/** The groups every service account of a namespace is in. */
export function serviceAccountGroups(namespace: string): string[] {
  return [SERVICE_ACCOUNTS_GROUP, `${SERVICE_ACCOUNTS_GROUP}:${namespace}`];
}
