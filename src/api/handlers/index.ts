/** A resource request routed to its verb's handler. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Store } from '../../store/store.js';
import { negotiateResponse } from '../negotiation.js';
import { methodNotAllowed } from '../status.js';
import { handleDelete, handleDeleteCollection } from './delete.js';
import { handleGet } from './get.js';
import { handleList } from './list.js';
import { isWatch, type ResourceCall, type ResourceRequest } from './request.js';
import { handleWatch } from './watch.js';
import { handleAction, handleCreate, handlePatch, handleUpdate } from './write.js';

export { isWatch, type ResourceRequest } from './request.js';

/** Kubernetes' verbs for a request on a resource (apiserver's RequestInfo), plus POST to an action subresource. */
export type ResourceVerb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection' | 'action';

/** The verb of a request, or undefined when the method is not served on that path (405). */
export function resourceVerb(method: string, r: ResourceRequest): ResourceVerb | undefined {
  if (r.name === undefined) {
    if (method === 'GET') return isWatch(r) ? 'watch' : 'list';
    if (method === 'POST') return 'create';
    if (method === 'DELETE') return 'deletecollection';
    return undefined;
  }
  if (method === 'GET') return isWatch(r) ? 'watch' : 'get';
  if (method === 'PUT') return 'update';
  if (method === 'PATCH') return 'patch';
  if (method === 'DELETE') return 'delete';
  if (method === 'POST' && r.subresource !== undefined && r.storage.subresource(r.subresource)?.type === 'action') return 'action';
  return undefined;
}

/** A verb on the resource itself is served only when the kind declares it (namespaces have no deletecollection). */
function served(verb: ResourceVerb, r: ResourceRequest): boolean {
  if (r.subresource !== undefined || verb === 'action') return true;
  return r.storage.def.verbs.includes(verb);
}

/** A watch on a single object is a watch of the collection restricted to that name. */
function watchOne(call: ResourceCall): Promise<void> {
  const { r } = call;
  const q = new URLSearchParams(r.query);
  const fs = q.get('fieldSelector');
  q.set('fieldSelector', fs ? `${fs},metadata.name=${r.name}` : `metadata.name=${r.name}`);
  return handleWatch({ ...call, r: { ...r, name: undefined, query: q } });
}

const HANDLERS: Readonly<Record<ResourceVerb, (call: ResourceCall) => void | Promise<void>>> = {
  get: handleGet,
  list: handleList,
  watch: (call) => (call.r.name === undefined ? handleWatch(call) : watchOne(call)),
  create: handleCreate,
  update: handleUpdate,
  patch: handlePatch,
  delete: handleDelete,
  deletecollection: handleDeleteCollection,
  action: (call) => {
    const sub = call.r.storage.subresource(call.r.subresource ?? '');
    if (sub?.type !== 'action') throw methodNotAllowed();
    return handleAction(call, sub);
  },
};

/** Serves a resource request: its verb, then the response format (406 before any body is read). */
export async function handleResource(r: ResourceRequest, req: IncomingMessage, res: ServerResponse, store: Store): Promise<void> {
  const verb = resourceVerb(req.method ?? 'GET', r);
  if (!verb || !served(verb, r)) throw methodNotAllowed();
  const format = negotiateResponse(req.headers.accept, { stream: verb === 'watch', table: true });
  await HANDLERS[verb]({ r, req, res, store, format });
}
