import type { UserInfo } from '../authz.js';
import type { WriteOptions } from '../registry.js';
import { nodeRestriction, type AdmissionOperation } from '../nodeauthz/admission.js';
import { nodeIdentity } from '../nodeauthz/identity.js';
import { forbidden } from '../status.js';
import type { ResourceRequest } from './request.js';

/**
 * The requester-aware admission of a write (NodeRestriction for node users; nothing for others).
 * A refusal is kube's admission Forbidden: `<resource> "<name>" is forbidden: <why>`.
 */
export function admissionFor(user: UserInfo | undefined, r: ResourceRequest, operation: AdmissionOperation): WriteOptions['admit'] {
  if (!user || !nodeIdentity(user).isNode) return undefined;
  const d = r.storage.def;
  return (obj, old) => {
    const name = obj?.metadata.name ?? old?.metadata.name ?? r.name ?? '';
    const why = nodeRestriction({ user, operation, group: d.group, resource: d.plural, subresource: r.subresource, namespace: r.namespace ?? obj?.metadata.namespace, name, obj, old });
    if (why === undefined) return;
    const qualified = d.group ? `${d.plural}.${d.group}` : d.plural;
    throw forbidden(`${qualified} "${name}" is forbidden: ${why}`, { group: d.group, resource: d.plural, name });
  };
}
