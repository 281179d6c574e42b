import type { UserInfo } from '../authz.js';
import { NODE_USER_PREFIX, NODES_GROUP } from '../../kube/names.js';

export { NODE_USER_PREFIX, NODES_GROUP };

/** The node user name of node `nodeName`: `system:node:<name>`. */
export function nodeUserName(nodeName: string): string {
  return NODE_USER_PREFIX + nodeName;
}

/**
 * kube's default NodeIdentifier: a user in group system:nodes whose name starts with
 * `system:node:` is a node; its name is the rest (empty when the name lacks the prefix).
 */
export function nodeIdentity(
  u: UserInfo,
): { readonly isNode: false } | { readonly isNode: true; readonly nodeName: string } {
  if (!u.groups.includes(NODES_GROUP) || !u.name.startsWith(NODE_USER_PREFIX)) return { isNode: false };
  return { isNode: true, nodeName: u.name.slice(NODE_USER_PREFIX.length) };
}
