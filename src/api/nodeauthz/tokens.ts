import { timingSafeEqual } from 'node:crypto';
import type { UserInfo } from '../authz.js';
import type { KubeObject } from '../resources/types.js';
import {
  NODE_TOKEN_NAMESPACE,
  NODE_TOKEN_SECRET_KEY,
  NODE_TOKEN_SECRET_TYPE,
  nodeTokenSecretName,
  parseNodeToken,
} from '../../kube/nodetoken.js';
import { NODES_GROUP, nodeUserName } from './identity.js';

/**
 * The node a per-node bearer token belongs to, checked against its Secret (looked up by
 * `secret(namespace, name)`, the API server's watch cache); undefined when it is not one.
 */
export function authenticateNodeToken(
  token: string,
  secret: (namespace: string, name: string) => KubeObject | undefined,
): UserInfo | undefined {
  const t = parseNodeToken(token);
  if (!t) return undefined;
  const s = secret(NODE_TOKEN_NAMESPACE, nodeTokenSecretName(t.nodeName));
  if (!s || s.type !== NODE_TOKEN_SECRET_TYPE) return undefined;
  const data = s.data as Record<string, unknown> | undefined;
  const stored =
    typeof data?.[NODE_TOKEN_SECRET_KEY] === 'string' ? Buffer.from(data[NODE_TOKEN_SECRET_KEY], 'base64') : undefined;
  const given = Buffer.from(t.secret);
  if (!stored || stored.length !== given.length || !timingSafeEqual(stored, given)) return undefined;
  return { name: nodeUserName(t.nodeName), groups: [NODES_GROUP] };
}
