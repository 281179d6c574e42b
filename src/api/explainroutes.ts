/**
 * The read-only group `explain.stowage.io/v1alpha1` (src/explain): an Explanation of a claim, pod,
 * volume or attachment, computed from the watch caches. Reading one is authorized as reading the
 * object it explains (`get` on that resource, namespace and name).
 */
import {
  EXPLAIN_GROUP,
  EXPLAIN_VERSION,
  EXPLAINABLE,
  explainObject,
  isExplainable,
  newExplainSource,
} from '../explain/index.js';
import type { ObjectReader } from '../explain/index.js';
import { forbiddenFor, type Authorizer, type RequestAttributes } from './authz.js';
import { sendJson } from './http.js';
import { watchTimeoutMs } from './limits.js';
import { keyPrefix, type ApiRegistry } from './registry.js';
import type { Route, RouteContext } from './routes.js';
import { ApiUnauthorizedError, badRequest, methodNotAllowed, notFound, pathNotFound } from './status.js';
import { matchesCall, processCsiTrace, type CsiCall, type CsiTraceHub } from '../csi/tracehub.js';
import { csiCallItem, parseTraceQuery, resolveTraceQuery, TraceQueryError } from '../explain/trace.js';
import type { ExplainSource } from '../explain/index.js';

export const EXPLAIN_PREFIX = `/apis/${EXPLAIN_GROUP}/${EXPLAIN_VERSION}`;

/** Reads straight from the registry's watch caches (no copies: explanations never write). */
export function registryReader(registry: ApiRegistry): ObjectReader {
  const storage = (group: string, plural: string) =>
    registry.all().find((s) => s.def.group === group && s.def.plural === plural);
  return {
    get: (group, plural, ns, name) => storage(group, plural)?.get(ns, name)?.obj,
    list: (group, plural, ns) => {
      const s = storage(group, plural);
      return s ? s.cache.list(keyPrefix(s.def, ns)).map((c) => c.obj) : [];
    },
  };
}

/** Authorizes a resource read for the request's user, or throws the Status kube-apiserver would. */
export function authorizeRead(
  authorizer: Authorizer,
  c: RouteContext,
  a: Omit<Extract<RequestAttributes, { kind: 'resource' }>, 'kind' | 'user'>,
): void {
  if (!c.user) throw new ApiUnauthorizedError('Unauthorized');
  const attrs: RequestAttributes = { kind: 'resource', user: c.user, ...a };
  const d = authorizer.authorize(attrs);
  if (!d.allowed) throw forbiddenFor(attrs, d);
}

export function explainRoutes(
  registry: ApiRegistry,
  authorizer: Authorizer,
  hub: CsiTraceHub = processCsiTrace,
): Route[] {
  const source = newExplainSource(registryReader(registry), (volumeId) =>
    hub.query({ volumeIds: new Set([volumeId]) }),
  );
  const serve = (c: RouteContext, namespace: string | undefined): void => {
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') throw methodNotAllowed();
    const plural = c.params.plural ?? '';
    const name = c.params.name ?? '';
    if (!isExplainable(plural)) throw pathNotFound();
    const def = EXPLAINABLE[plural];
    if (def.namespaced !== (namespace !== undefined)) throw pathNotFound();
    authorizeRead(authorizer, c, { verb: 'get', group: def.group, resource: plural, namespace, name });
    const e = explainObject(plural, namespace, name, source);
    if (!e) throw notFound({ group: def.group, resource: plural, name });
    sendJson(c.res, 200, e);
  };
  // '*' methods: the server leaves authorization to the handler, which authorizes as a resource read.
  return [
    { path: `${EXPLAIN_PREFIX}/csicalls`, methods: { '*': (c) => serveCsiCalls(c, authorizer, source, hub) } },
    {
      path: `${EXPLAIN_PREFIX}/namespaces/:namespace/:plural/:name`,
      methods: { '*': (c) => serve(c, c.params.namespace) },
    },
    { path: `${EXPLAIN_PREFIX}/:plural/:name`, methods: { '*': (c) => serve(c, undefined) } },
  ];
}

/**
 * `csicalls`: the CSI calls this process recorded (every component of `stowage up`), filtered by
 * the query; `watch=true` streams them as watch events, the kept ones first (after
 * `resourceVersion`, a call id, when given). Authorized as list/watch of csicalls.explain.stowage.io.
 */
function serveCsiCalls(c: RouteContext, authorizer: Authorizer, source: ExplainSource, hub: CsiTraceHub): void {
  if (c.req.method !== 'GET' && c.req.method !== 'HEAD') throw methodNotAllowed();
  const watch = c.url.searchParams.get('watch') === 'true' || c.url.searchParams.get('watch') === '1';
  authorizeRead(authorizer, c, { verb: watch ? 'watch' : 'list', group: EXPLAIN_GROUP, resource: 'csicalls' });
  let query;
  try {
    query = parseTraceQuery(c.url.searchParams);
  } catch (e) {
    if (e instanceof TraceQueryError) throw badRequest(e.message);
    throw e;
  }
  if (!watch) {
    const items = hub.query(resolveTraceQuery(query, source)).map(csiCallItem);
    sendJson(c.res, 200, {
      apiVersion: `${EXPLAIN_GROUP}/${EXPLAIN_VERSION}`,
      kind: 'CSICallList',
      metadata: { resourceVersion: String(hub.lastId()) },
      items,
    });
    return;
  }
  const res = c.res;
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache' });
  res.flushHeaders();
  const send = (call: CsiCall): void => {
    res.write(`${JSON.stringify({ type: 'ADDED', object: csiCallItem(call) })}\n`);
  };
  let last = query.afterId ?? 0;
  for (const call of hub.query(resolveTraceQuery(query, source))) {
    send(call);
    last = call.id;
  }
  // A claim's or pod's volume may appear later (CreateVolume answers): resolve again per call.
  const unsubscribe = hub.subscribe((call) => {
    if (call.id <= last || !matchesCall(call, resolveTraceQuery(query, source))) return;
    last = call.id;
    send(call);
  });
  const limitMs = watchTimeoutMs(c.url.searchParams);
  const timer = limitMs === undefined ? undefined : setTimeout(() => res.end(), limitMs);
  const stop = (): void => {
    unsubscribe();
    if (timer) clearTimeout(timer);
  };
  c.req.on('close', stop);
  res.on('close', stop);
}
