/** A resource request routed to its verb's handler. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Store } from '../../store/store.js';
import { fieldSelectorExactValue, parseFieldSelector } from '../../kube/selectors.js';
import { forbiddenFor, type Authorizer, type RequestAttributes, type UserInfo } from '../authz.js';
import { negotiateResponse } from '../negotiation.js';
import { badRequest, methodNotAllowed } from '../status.js';
import { admittedRequest } from './admission.js';
import { handleApply, isApply } from './apply.js';
import { handlePodLog, type PodStreaming } from './podstream.js';
import { handleDelete, handleDeleteCollection } from './delete.js';
import { handleEviction } from './eviction.js';
import { handleGet } from './get.js';
import { handleList } from './list.js';
import { isWatch, type ResourceCall, type ResourceRequest } from './request.js';
import { handleWatch } from './watch.js';
import { handleAction, handleCreate, handlePatch, handleUpdate } from './write.js';

export { isWatch, type ResourceRequest } from './request.js';

/** Kubernetes' verbs for a request on a resource (apiserver's RequestInfo), plus POST to an action subresource. */
export type ResourceVerb =
  'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection' | 'action';

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
  const subType = r.subresource === undefined ? undefined : r.storage.subresource(r.subresource)?.type;
  if (method === 'POST' && (subType === 'action' || subType === 'eviction')) return 'action';
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
  patch: (call) => (isApply(call) ? handleApply(call) : handlePatch(call)),
  delete: handleDelete,
  deletecollection: handleDeleteCollection,
  action: (call) => {
    const sub = call.r.storage.subresource(call.r.subresource ?? '');
    if (sub?.type === 'eviction') return handleEviction(call);
    if (sub?.type !== 'action') throw methodNotAllowed();
    return handleAction(call, sub);
  },
};

export interface ResourceServing {
  readonly store: Store;
  readonly authorizer: Authorizer;
  /** How pods/log reaches the pod's node (undefined: logs answer 500). */
  readonly podStreaming?: PodStreaming;
  /** Who asked; undefined only for in-process callers without authentication. */
  readonly user?: UserInfo;
}

/** The authorizer's view of a resource request (a POST to an action subresource is a create of it). */
function requestAttributes(user: UserInfo, verb: ResourceVerb, r: ResourceRequest): RequestAttributes {
  const d = r.storage.def;
  const fieldSelector = r.query.get('fieldSelector') ?? undefined;
  let name = r.name;
  // kube's RequestInfo: a list or watch of one object by `metadata.name=` is about that name.
  if ((verb === 'list' || verb === 'watch') && name === undefined && fieldSelector)
    name = namedBySelector(fieldSelector);
  return {
    kind: 'resource',
    user,
    verb: verb === 'action' ? 'create' : verb,
    group: d.group,
    resource: d.plural,
    subresource: r.subresource,
    namespace: r.namespace,
    name,
    fieldSelector,
  };
}

function namedBySelector(raw: string): string | undefined {
  try {
    return fieldSelectorExactValue(parseFieldSelector(raw), 'metadata.name');
  } catch {
    return undefined; // malformed: answered with 400 by the list itself
  }
}

/** Serves a resource request: its verb, its authorization, then the response format (406 before any body is read). */
export async function handleResource(
  r: ResourceRequest,
  req: IncomingMessage,
  res: ServerResponse,
  o: ResourceServing,
): Promise<void> {
  const sub = r.subresource === undefined ? undefined : r.storage.subresource(r.subresource);
  if (sub?.type === 'stream') return handleStream(r, req, res, o);
  const verb = resourceVerb(req.method ?? 'GET', r);
  if (!verb || !served(verb, r)) throw methodNotAllowed();
  if (o.user) {
    const attrs = requestAttributes(o.user, verb, r);
    const d = o.authorizer.authorize(attrs);
    if (!d.allowed) throw forbiddenFor(attrs, d);
  }
  if (verb === 'create' && r.storage.def.custom?.terminating())
    throw methodNotAllowed('create not allowed while custom resource definition is terminating');
  const format = negotiateResponse(req.headers.accept, { stream: verb === 'watch', table: true });
  // A deprecated custom resource version warns on every answer (kube's deprecationWarning).
  const deprecation = r.storage.def.custom?.warnings ?? [];
  if (deprecation.length)
    res.setHeader(
      'Warning',
      deprecation.map((w) => `299 - ${JSON.stringify(w)}`),
    );
  await HANDLERS[verb]({
    r: admittedRequest(o.user, r),
    req,
    res,
    store: o.store,
    format,
    user: o.user,
    authorizer: o.authorizer,
  });
}

/** The authorizer's verb of a streaming subresource: get for logs, create for exec and attach (whatever the method, as kube ≥1.30). */
export function streamVerb(subresource: string): 'get' | 'create' {
  return subresource === 'log' ? 'get' : 'create';
}

/** Checks that `user` may use the streaming subresource of `r`. */
export function authorizeStream(r: ResourceRequest, o: Pick<ResourceServing, 'authorizer' | 'user'>): void {
  if (!o.user) return;
  const d0 = r.storage.def;
  const attrs: RequestAttributes = {
    kind: 'resource',
    user: o.user,
    verb: streamVerb(r.subresource ?? ''),
    group: d0.group,
    resource: d0.plural,
    subresource: r.subresource,
    namespace: r.namespace,
    name: r.name,
  };
  const d = o.authorizer.authorize(attrs);
  if (!d.allowed) throw forbiddenFor(attrs, d);
}

/** pods/log (GET), and pods/exec|attach without an upgrade (400, as kube-apiserver answers). */
async function handleStream(
  r: ResourceRequest,
  req: IncomingMessage,
  res: ServerResponse,
  o: ResourceServing,
): Promise<void> {
  const method = req.method ?? 'GET';
  const isLog = r.subresource === 'log';
  if (r.name === undefined || (isLog ? method !== 'GET' && method !== 'HEAD' : method !== 'GET' && method !== 'POST'))
    throw methodNotAllowed();
  authorizeStream(r, o);
  if (!isLog) throw badRequest('Upgrade request required');
  await handlePodLog(
    { r, req, res, store: o.store, format: 'json', user: o.user, authorizer: o.authorizer },
    o.podStreaming ?? { node: () => undefined },
  );
}
