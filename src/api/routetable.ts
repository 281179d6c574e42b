/** The API server's paths: health, version, metrics, OpenAPI, discovery and the resources. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Store } from '../store/store.js';
import type { MetricsRegistry } from '../util/metrics.js';
import {
  aggregatedDiscovery,
  apiGroupList,
  apiGroupObject,
  apiResourceList,
  apiVersions,
  versionInfo,
} from './discovery.js';
import { serveHealth, serveHealthCheck, type HealthCheck, type HealthEndpoint } from './health.js';
import { handleResource, type ResourceRequest } from './handlers/index.js';
import type { PodStreaming } from './handlers/podstream.js';
import { parseResourcePath } from './handlers/request.js';
import { sendAs, sendJson, sendRaw } from './http.js';
import { negotiateResponse, parseAccept } from './negotiation.js';
import { openApiV3Document, openApiV3Index } from './openapi/documents.js';
import { OPENAPI_V2_PROTOBUF_ACCEPT, OPENAPI_V2_PROTOBUF_TYPE, openApiV2 } from './openapi/v2.js';
import type { Authorizer } from './authz.js';
import { explainRoutes } from './explainroutes.js';
import { dashboardRoutes } from './dashboard.js';
import type { ApiRegistry } from './registry.js';
import type { ResourceDef } from './resources/types.js';
import type { Route, RouteContext, RouteHandler } from './routes.js';
import { pathNotFound } from './status.js';

export interface RouteTableOptions {
  readonly registry: ApiRegistry;
  readonly metrics: MetricsRegistry;
  readonly store: Store;
  readonly authorizer: Authorizer;
  /** How pods/log reaches nodes. */
  readonly podStreaming?: PodStreaming;
  /** Called with each parsed resource request (the server records its metric labels). */
  readonly tag: (req: IncomingMessage, r: ResourceRequest) => ResourceRequest;
}

/**
 * Every path the server serves. Resource paths take every method and route by verb themselves;
 * the others answer a method they do not serve with 405.
 */
export function apiRoutes({ registry, metrics, store, authorizer, tag, podStreaming }: RouteTableOptions): Route[] {
  const checks = healthChecks(registry, store);
  // Read per request: CustomResourceDefinitions add and remove kinds while the server runs.
  const defs = (): readonly ResourceDef[] => registry.defs();
  const health = (endpoint: HealthEndpoint): Route[] => [
    {
      path: `/${endpoint}`,
      public: true,
      methods: { GET: ({ res, url }) => serveHealth(res, endpoint, checks[endpoint], url.searchParams) },
    },
    {
      path: `/${endpoint}/:check`,
      public: true,
      exists: (p) => checks[endpoint].some((c) => c.name === p.check),
      methods: {
        GET: ({ res, params }) =>
          serveHealthCheck(
            res,
            checks[endpoint].find((c) => c.name === params.check)!,
          ),
      },
    },
  ];
  const resource = (c: RouteContext, group: string, version: string): Promise<void> =>
    handleResource(tag(c.req, parseResourcePath(registry, group, version, c.rest, c.url.searchParams)), c.req, c.res, {
      store,
      authorizer,
      user: c.user,
      podStreaming,
    });
  const legacyDiscovery =
    (doc: (params: Readonly<Record<string, string>>) => object | undefined): RouteHandler =>
    ({ req, res, params }) =>
      sendLegacyDiscovery(req, res, doc(params));
  const aggregated =
    (core: boolean, legacy: () => object): RouteHandler =>
    ({ req, res }) => {
      const v = aggregatedDiscoveryVersion(req);
      if (v)
        sendJson(res, 200, aggregatedDiscovery(defs(), core, v), {
          contentType: `application/json;g=apidiscovery.k8s.io;v=${v};as=APIGroupDiscoveryList`,
        });
      else sendLegacyDiscovery(req, res, legacy());
    };
  const servedGroupVersion = (p: Readonly<Record<string, string>>): boolean =>
    apiResourceList(defs(), p.group!, p.version!) !== undefined;
  return [
    ...health('healthz'),
    ...health('livez'),
    ...health('readyz'),
    { path: '/version', public: true, methods: { GET: ({ res }) => sendJson(res, 200, versionInfo()) } },
    {
      path: '/metrics',
      methods: {
        GET: ({ res }) =>
          sendRaw(res, 200, metrics.render(), { contentType: 'text/plain; version=0.0.4; charset=utf-8' }),
      },
    },
    {
      path: '/openapi/v2',
      methods: {
        GET: ({ req, res }) => {
          const v2 = openApiV2(defs());
          if (req.headers['if-none-match'] === v2.etag) return sendRaw(res, 304, '', { headers: { ETag: v2.etag } });
          const proto = (req.headers.accept ?? '').includes(OPENAPI_V2_PROTOBUF_ACCEPT.split('@')[0]!);
          sendRaw(res, 200, proto ? v2.protobuf : v2.json, {
            contentType: proto ? OPENAPI_V2_PROTOBUF_TYPE : 'application/json',
            headers: { ETag: v2.etag },
          });
        },
      },
    },
    { path: '/openapi/v3', methods: { GET: ({ res }) => sendJson(res, 200, openApiV3Index(defs())) } },
    {
      path: '/openapi/v3/*',
      exists: (_, rest) => openApiV3Document(defs(), rest.join('/')) !== undefined,
      methods: { GET: ({ res, rest }) => sendJson(res, 200, openApiV3Document(defs(), rest.join('/'))) },
    },
    { path: '/api', methods: { GET: aggregated(true, apiVersions) } },
    { path: '/api/v1', methods: { GET: legacyDiscovery(() => apiResourceList(defs(), '', 'v1')) } },
    { path: '/api/v1/*', methods: { '*': (c) => resource(c, '', 'v1') } },
    { path: '/apis', methods: { GET: aggregated(false, () => apiGroupList(defs())) } },
    ...explainRoutes(registry, authorizer),
    ...dashboardRoutes(),
    {
      path: '/apis/:group',
      exists: (p) => apiGroupObject(defs(), p.group!) !== undefined,
      methods: { GET: legacyDiscovery((p) => apiGroupObject(defs(), p.group!)) },
    },
    {
      path: '/apis/:group/:version',
      exists: servedGroupVersion,
      methods: { GET: legacyDiscovery((p) => apiResourceList(defs(), p.group!, p.version!)) },
    },
    {
      path: '/apis/:group/:version/*',
      exists: servedGroupVersion,
      methods: { '*': (c) => resource(c, c.params.group!, c.params.version!) },
    },
  ];
}

/** kube-apiserver's checks per health endpoint (names as it reports them). */
function healthChecks(registry: ApiRegistry, store: Store): Record<HealthEndpoint, HealthCheck[]> {
  const check = (name: string, f: () => Promise<void> | void): HealthCheck => ({ name, check: async () => f() });
  const ping = check('ping', () => undefined);
  const log = check('log', () => undefined);
  // kube-apiserver's etcd checks: the store answers (for etcd, a quorum read within a deadline).
  const storeAnswers = async (): Promise<void> => {
    const why = store.unavailable ? await store.unavailable() : void (await store.get('/registry/health'));
    if (why) throw new Error(why);
  };
  const etcd = check('etcd', storeAnswers);
  const etcdReadiness = check('etcd-readiness', storeAnswers);
  const informerSync = check('informer-sync', () => {
    const why = registry.lifecycle() === 'new' ? 'watch caches not yet synced' : registry.notReady();
    if (why) throw new Error(why);
  });
  const shutdown = check('shutdown', () => {
    if (registry.lifecycle() === 'stopped') throw new Error('process is shutting down');
  });
  return {
    healthz: [ping, log, etcd],
    livez: [ping, log, etcd],
    readyz: [ping, log, etcd, etcdReadiness, informerSync, shutdown],
  };
}

/** The aggregated discovery version an Accept header asks for before any plain JSON, if any. */
function aggregatedDiscoveryVersion(req: IncomingMessage): 'v2' | 'v2beta1' | undefined {
  for (const m of parseAccept(req.headers.accept)) {
    if (
      m.params.g === 'apidiscovery.k8s.io' &&
      m.params.as === 'APIGroupDiscoveryList' &&
      (m.params.v === 'v2' || m.params.v === 'v2beta1')
    )
      return m.params.v;
    if (m.type === 'application/json' && !m.params.as) return undefined;
  }
  return undefined;
}

/** A legacy discovery document as JSON or YAML (406 for anything else). */
function sendLegacyDiscovery(req: IncomingMessage, res: ServerResponse, doc: object | undefined): void {
  const format = negotiateResponse(req.headers.accept);
  if (!doc) throw pathNotFound();
  sendAs(res, format, 200, JSON.stringify(doc));
}
