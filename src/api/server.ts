import { chmodSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Store } from '../store/store.js';
import { newLogger } from '../util/log.js';
import { aggregatedDiscovery, apiGroupList, apiGroupObject, apiResourceList, apiVersions, versionInfo } from './discovery.js';
import { handleResource, isWatch, type ResourceRequest } from './handlers.js';
import { parseAccept, sendError, sendJson, sendRaw } from './http.js';
import { openApiV3Document, openApiV3Index } from './openapi/documents.js';
import { OPENAPI_V2_PROTOBUF_ACCEPT, OPENAPI_V2_PROTOBUF_TYPE, openApiV2 } from './openapi/v2.js';
import { ApiRegistry } from './registry.js';
import { ALL_RESOURCES } from './resources/index.js';
import { formatInvalidMessage } from './resources/common.js';
import type { ResourceDef } from './resources/types.js';
import { badRequest, HttpError, toStatus } from './status.js';
import { MetricsRegistry } from '../util/metrics.js';
import { DEFAULT_CONNECTION_LIMITS, guardUnreadBody, serverOptions, type ConnectionLimits } from './connections.js';
import { applyRequestDeadline, DEFAULT_REQUEST_LIMITS, newInFlightLimiter, type RequestLimits } from './limits.js';

const log = newLogger('apiserver');

/** Who made a request. */
export interface UserInfo {
  readonly name: string;
  readonly groups: readonly string[];
}

export interface ApiServerOptions {
  readonly store: Store;
  readonly address: string;
  /** 0 = any free port. */
  readonly port: number;
  readonly tls: { certPem: string; keyPem: string };
  /** Bearer token → user. */
  readonly tokens: ReadonlyMap<string, UserInfo>;
  readonly resources?: readonly ResourceDef[];
  readonly metrics?: MetricsRegistry;
  /** Events per resource kept for resuming watches (default 20,000). */
  readonly watchCacheHistory?: number;
  /**
   * Also serve plain HTTP on this unix socket (mode 0600) for in-process components: same
   * handler, same authentication, no TLS or TCP cost.
   */
  readonly localSocketPath?: string;
  /** In-flight limits, deadlines and connection limits; kube-apiserver's defaults when left out. */
  readonly limits?: Partial<RequestLimits & ConnectionLimits>;
}

export interface ApiServer {
  readonly registry: ApiRegistry;
  readonly url: string;
  readonly port: number;
  readonly metrics: MetricsRegistry;
  close(): Promise<void>;
}

const PUBLIC_PATHS = new Set(['/healthz', '/livez', '/readyz', '/version']);
const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

/** Starts the Kubernetes-compatible API server over HTTPS. */
export async function startApiServer(o: ApiServerOptions): Promise<ApiServer> {
  const defs = o.resources ?? ALL_RESOURCES;
  const registry = new ApiRegistry(o.store, defs, formatInvalidMessage, { watchHistory: o.watchCacheHistory });
  await registry.start();
  await ensureNamespaces(registry);
  const metrics = o.metrics ?? new MetricsRegistry();
  const requests = metrics.counter('apiserver_request_total', 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.', [
    'verb',
    'group',
    'version',
    'resource',
    'subresource',
    'code',
  ]);
  // What each resource request was about, for the metric labels (set once the URL is routed).
  const requestInfo = new WeakMap<IncomingMessage, { verb: string; group: string; version: string; resource: string; subresource: string }>();

  const limits = { ...DEFAULT_REQUEST_LIMITS, ...DEFAULT_CONNECTION_LIMITS, ...o.limits };
  const inFlight = newInFlightLimiter(limits);
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    guardUnreadBody(req, res);
    res.on('finish', () => {
      const info = requestInfo.get(req) ?? { verb: req.method ?? '', group: '', version: '', resource: '', subresource: '' };
      requests.inc({ ...info, code: String(res.statusCode) });
    });
    serve(req, res).catch((e: unknown) => {
      if (toStatus(e).code >= 500) log.warn('request failed', { method: req.method, url: req.url, error: (e as Error).message });
      sendError(res, e);
    });
  };
  // Node's requestTimeout bounds receiving a request, not the response: watches are not cut by it.
  const server: Server = createHttpsServer({ cert: o.tls.certPem, key: o.tls.keyPem, ...serverOptions(limits) }, handle);
  let local: HttpServer | undefined;

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://localhost');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    let user: UserInfo | undefined;
    if (!PUBLIC_PATHS.has(path)) {
      const auth = req.headers.authorization ?? '';
      const m = /^Bearer\s+(.+)$/i.exec(auth);
      user = m ? o.tokens.get(m[1]!.trim()) : undefined;
      if (!user) {
        sendJson(res, 401, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
        return;
      }
    }
    if (!inFlight.admit(req, res, path, url.searchParams, user)) return;
    if (!applyRequestDeadline(req, res, path, url.searchParams, limits)) return;
    if (path === '/healthz' || path === '/livez' || path === '/readyz') return sendRaw(res, 200, 'ok', { contentType: 'text/plain; charset=utf-8' });
    if (path === '/version') return sendJson(res, 200, versionInfo());
    if (path === '/metrics') return sendRaw(res, 200, metrics.render(), { contentType: 'text/plain; version=0.0.4; charset=utf-8' });
    if (path === '/openapi/v2') {
      const v2 = openApiV2(defs);
      if (req.headers['if-none-match'] === v2.etag) return sendRaw(res, 304, '', { headers: { ETag: v2.etag } });
      const proto = (req.headers.accept ?? '').includes(OPENAPI_V2_PROTOBUF_ACCEPT.split('@')[0]!);
      return sendRaw(res, 200, proto ? v2.protobuf : v2.json, { contentType: proto ? OPENAPI_V2_PROTOBUF_TYPE : 'application/json', headers: { ETag: v2.etag } });
    }
    if (path === '/openapi/v3') return sendJson(res, 200, openApiV3Index(defs));
    if (path.startsWith('/openapi/v3/')) {
      const doc = openApiV3Document(defs, path.slice('/openapi/v3/'.length));
      if (!doc) throw new HttpError(404, 'NotFound', 'the server could not find the requested resource');
      return sendJson(res, 200, doc);
    }
    const segs = pathSegments(path);
    if (segs[0] === 'api') {
      if (segs.length === 1) return discovery(req, res, true) ?? sendJson(res, 200, apiVersions());
      if (segs[1] !== 'v1') throw notFound();
      if (segs.length === 2) return sendJson(res, 200, apiResourceList(defs, '', 'v1'));
      return handleResource(tagged(req, route('', 'v1', segs.slice(2), url.searchParams)), req, res, o.store);
    }
    if (segs[0] === 'apis') {
      if (segs.length === 1) return discovery(req, res, false) ?? sendJson(res, 200, apiGroupList(defs));
      const group = segs[1]!;
      if (segs.length === 2) {
        const g = apiGroupObject(defs, group);
        if (!g) throw notFound();
        return sendJson(res, 200, g);
      }
      const version = segs[2]!;
      if (segs.length === 3) {
        const l = apiResourceList(defs, group, version);
        if (!l) throw notFound();
        return sendJson(res, 200, l);
      }
      return handleResource(tagged(req, route(group, version, segs.slice(3), url.searchParams)), req, res, o.store);
    }
    throw notFound();
  }

  /** Aggregated discovery when the client asks for it by Accept; undefined otherwise. */
  function discovery(req: IncomingMessage, res: ServerResponse, core: boolean): void | undefined {
    for (const m of parseAccept(req.headers.accept)) {
      if (m.params.g === 'apidiscovery.k8s.io' && m.params.as === 'APIGroupDiscoveryList' && (m.params.v === 'v2' || m.params.v === 'v2beta1')) {
        const ct = `application/json;g=apidiscovery.k8s.io;v=${m.params.v};as=APIGroupDiscoveryList`;
        sendJson(res, 200, aggregatedDiscovery(defs, core, m.params.v), { contentType: ct });
        return;
      }
      if (m.type === 'application/json' && !m.params.as) return undefined;
    }
    return undefined;
  }

  /** Records the request's metric labels; kube's verb is LIST or WATCH for collection reads. */
  function tagged(req: IncomingMessage, r: ResourceRequest): ResourceRequest {
    const method = req.method ?? 'GET';
    const verb = method === 'GET' ? (isWatch(r) ? 'WATCH' : r.name === undefined ? 'LIST' : 'GET') : method;
    const d = r.storage.def;
    requestInfo.set(req, { verb, group: d.group, version: d.version, resource: d.plural, subresource: r.subresource ?? '' });
    return r;
  }

  /** Parses the part of a resource URL after the group-version. */
  function route(group: string, version: string, segs: string[], query: URLSearchParams): ResourceRequest {
    let legacyWatch = false;
    if (segs[0] === 'watch') {
      legacyWatch = true;
      segs = segs.slice(1);
    }
    let namespace: string | undefined;
    if (segs[0] === 'namespaces' && segs.length >= 3) {
      const inner = registry.byGroupVersionPlural(group, version, segs[2]!);
      if (inner && inner.def.namespaced) {
        namespace = segs[1];
        segs = segs.slice(2);
      }
    }
    const storage = registry.byGroupVersionPlural(group, version, segs[0] ?? '');
    if (!storage || segs.length > 3) throw notFound();
    return { storage, namespace, name: segs[1], subresource: segs[2], query, legacyWatch };
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.address, () => {
      server.off('error', reject);
      resolve();
    });
  });
  if (o.localSocketPath) {
    const path = o.localSocketPath;
    rmSync(path, { force: true });
    local = createHttpServer(serverOptions(limits), handle);
    await new Promise<void>((resolve, reject) => {
      local!.once('error', reject);
      local!.listen(path, () => resolve());
    });
    chmodSync(path, 0o600);
  }
  const port = (server.address() as AddressInfo).port;
  const host = o.address.includes(':') ? `[${o.address}]` : o.address;
  return {
    registry,
    url: `https://${host}:${port}`,
    port,
    metrics,
    close: async () => {
      registry.stop();
      server.closeAllConnections();
      local?.closeAllConnections();
      await Promise.all([
        new Promise<void>((resolve) => server.close(() => resolve())),
        local ? new Promise<void>((resolve) => local!.close(() => resolve())) : undefined,
      ]);
    },
  };
}

/**
 * The decoded segments of a request path. A malformed escape is a 400 (Go's net/http refuses the
 * request line); a segment that decodes to contain `/` or is `.`/`..` names nothing we serve.
 */
function pathSegments(path: string): string[] {
  return path
    .split('/')
    .filter(Boolean)
    .map((seg) => {
      let s: string;
      try {
        s = decodeURIComponent(seg);
      } catch {
        const bad = /%(?![0-9a-fA-F]{2})..?/.exec(seg)?.[0] ?? seg;
        throw badRequest(`invalid URL escape ${JSON.stringify(bad)}`);
      }
      if (s.includes('/') || s === '.' || s === '..') throw notFound();
      return s;
    });
}

function notFound(): HttpError {
  return new HttpError(404, 'NotFound', 'the server could not find the requested resource');
}

async function ensureNamespaces(registry: ApiRegistry): Promise<void> {
  const ns = registry.kind('Namespace');
  for (const name of DEFAULT_NAMESPACES) {
    if (ns.get(undefined, name)) continue;
    try {
      await ns.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, undefined);
    } catch (e) {
      if (!(e instanceof HttpError && e.httpStatus === 409)) throw e;
    }
  }
}
