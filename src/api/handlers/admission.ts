import type { UserInfo } from '../authz.js';
import type { ResourceStorage, WriteOptions } from '../registry.js';
import { nodeRestriction, type AdmissionOperation } from '../nodeauthz/admission.js';
import { nodeIdentity } from '../nodeauthz/identity.js';
import { forbidden } from '../status.js';
import type { ResourceRequest } from './request.js';

/**
 * `r` as its requester writes through it: every create, update and delete of `r.storage` passes
 * the requester's admission (NodeRestriction for a node), whichever handler makes the write, so
 * no write path can forget it. Other requesters get `r` itself.
 */
export function admittedRequest(user: UserInfo | undefined, r: ResourceRequest): ResourceRequest {
  const admit = (operation: AdmissionOperation): WriteOptions['admit'] => admissionFor(user, r, operation);
  if (!admit('create')) return r;
  const base = r.storage;
  // A view of the shared storage (which keeps no per-call state) whose writes carry the admission.
  const view: ResourceStorage = Object.create(base);
  view.create = (obj, namespace, opts = {}) => base.create(obj, namespace, { ...opts, admit: admit('create') });
  view.update = (namespace, name, next, opts = {}) =>
    base.update(namespace, name, next, { ...opts, admit: admit('update') });
  view.delete = (namespace, name, opts = {}) => base.delete(namespace, name, { ...opts, admit: admit('delete') });
  return { ...r, storage: view };
}

/**
 * The requester-aware admission of a write (NodeRestriction for node users; nothing for others).
 * A refusal is kube's admission Forbidden: `<resource> "<name>" is forbidden: <why>`.
 */
export function admissionFor(
  user: UserInfo | undefined,
  r: ResourceRequest,
  operation: AdmissionOperation,
): WriteOptions['admit'] {
  if (!user || !nodeIdentity(user).isNode) return undefined;
  const d = r.storage.def;
  return (obj, old) => {
    const name = obj?.metadata.name ?? old?.metadata.name ?? r.name ?? '';
    const why = nodeRestriction({
      user,
      operation,
      group: d.group,
      resource: d.plural,
      subresource: r.subresource,
      namespace: r.namespace ?? obj?.metadata.namespace,
      name,
      obj,
      old,
    });
    if (why === undefined) return;
    const qualified = d.group ? `${d.plural}.${d.group}` : d.plural;
    throw forbidden(`${qualified} "${name}" is forbidden: ${why}`, { group: d.group, resource: d.plural, name });
  };
}
