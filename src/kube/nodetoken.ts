/**
 * Per-node bearer tokens. A node's credential is `<node-name>.<secret>`; the API server checks it
 * against the Secret `node-token-<node-name>` in kube-system (type `stowage.io/node-token`, key
 * `token-secret`) and authenticates it as `system:node:<node-name>` in group `system:nodes`.
 * Deleting the Secret revokes the node at once. (Shaped like kube's bootstrap tokens,
 * `bootstrap-token-<id>` holding `<id>.<secret>`, whose users are bootstrappers, not nodes.)
 */
export const NODE_TOKEN_NAMESPACE = 'kube-system';
export const NODE_TOKEN_SECRET_TYPE = 'stowage.io/node-token';
export const NODE_TOKEN_SECRET_KEY = 'token-secret';

export function nodeTokenSecretName(nodeName: string): string {
  return `node-token-${nodeName}`;
}

/** The bearer token of node `nodeName` holding `secret`. */
export function formatNodeToken(nodeName: string, secret: string): string {
  return `${nodeName}.${secret}`;
}

/** Splits a bearer token into node name and secret (the secret has no dot; a node name may). */
export function parseNodeToken(token: string): { nodeName: string; secret: string } | undefined {
  const dot = token.lastIndexOf('.');
  if (dot <= 0 || dot === token.length - 1) return undefined;
  const secret = token.slice(dot + 1);
  if (!/^[A-Za-z0-9_-]{16,}$/.test(secret)) return undefined;
  return { nodeName: token.slice(0, dot), secret };
}
