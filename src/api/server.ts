import { chmodSync, rmSync } from 'node:fs';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Store } from '../store/store.js';
import { newLogger } from '../util/log.js';
import { newNodeAuthorizer } from './nodeauthz/authorizer.js';
import { registryGraphSource } from './nodeauthz/source.js';
import { authenticateNodeToken } from './nodeauthz/tokens.js';
import { clientCertificateUser } from './x509.js';
import { impersonate } from './authn/impersonation.js';
import {
  AUTHENTICATED_GROUP,
  forbiddenFor,
  newAdminAuthorizer,
  newUnionAuthorizer,
  type Authorizer,
  type UserInfo,
} from './authz.js';
import { isWatch, type ResourceRequest } from './handlers/index.js';
import { sendError, sendJson } from './http.js';
import { apiRoutes } from './routetable.js';
import { ApiRegistry } from './registry.js';
import { newCrdRegistrar } from './apiextensions/registrar.js';
import { ALL_RESOURCES } from './resources/index.js';
import { newServiceResource } from './resources/service.js';
import { formatInvalidMessage } from './resources/common.js';
import type { ResourceDef } from './resources/types.js';
import { ApiUnauthorizedError, badRequest, methodNotAllowed, pathNotFound, toStatus } from './status.js';
import type { Duplex } from 'node:stream';
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import { authorizeStream } from './handlers/index.js';
import {
  isSpdyUpgrade,
  nodeStreamPath,
  podContainer,
  refuseUpgrade,
  relayPodStream,
  type PodStreaming,
} from './handlers/podstream.js';
import { relaySpdyPodStream } from './handlers/spdyexec.js';
import { InternalError } from '../util/errors.js';
import { parseResourcePath } from './handlers/request.js';
import type { NodeClientCert } from './nodeconn.js';
import { newRouter, pathSegments } from './routes.js';
import { MetricsRegistry } from '../util/metrics.js';
import { DEFAULT_CONNECTION_LIMITS, guardUnreadBody, serverOptions, type ConnectionLimits } from './connections.js';
import { applyRequestDeadline, DEFAULT_REQUEST_LIMITS, newInFlightLimiter, type RequestLimits } from './limits.js';

const log = newLogger('apiserver');

export type { UserInfo } from './authz.js';

export interface ApiServerOptions {
  readonly store: Store;
  readonly address: string;
  /** 0 = any free port. */
  readonly port: number;
  readonly tls: { certPem: string; keyPem: string };
  /** Bearer token → user. */
  readonly tokens: ReadonlyMap<string, UserInfo>;
  /**
   * kube-apiserver's --client-ca-file: client certificates this CA signed (for client auth)
   * authenticate as their subject's CN, in the groups of its O values.
   */
  readonly clientCaPem?: string;
  /**
   * Decides every authenticated request after the Node authorizer, which always runs first as with
   * kube-apiserver's `--authorization-mode=Node,RBAC` (default: system:masters may do everything).
   */
  readonly authorizer?: Authorizer;
  readonly resources?: readonly ResourceDef[];
  /** kube-apiserver's --service-cluster-ip-range: where Services' ClusterIPs come from (default 10.96.0.0/12). */
  readonly serviceClusterIpRange?: string;
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
  /** The client certificate presented to node endpoints for logs and exec (kube's --kubelet-client-certificate). */
  readonly kubeletClient?: NodeClientCert;
}

export interface ApiServer {
  readonly registry: ApiRegistry;
  readonly url: string;
  readonly port: number;
  readonly metrics: MetricsRegistry;
  close(): Promise<void>;
}

/** apiserver's verb for a non-resource request: the method, lower-cased (HEAD is a get). */
function nonResourceVerb(method: string): string {
  return method === 'HEAD' ? 'get' : method.toLowerCase();
}

/** What the exec/attach upgrade path needs of the server. */
interface UpgradeDeps {
  readonly registry: ApiRegistry;
  readonly authorizer: Authorizer;
  readonly podStreaming: PodStreaming;
  readonly authenticate: (req: IncomingMessage) => UserInfo | undefined;
}

/** Listens on `port` at `address`, rejecting on the first error (a port in use). */
function listen(server: Server, port: number, address: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, address, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** exec and attach: authenticated, authorized (create), checked, then relayed to the pod's node. */
function serveUpgrade(d: UpgradeDeps, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  const url = new URL(req.url ?? '/', 'https://localhost');
  const requester = d.authenticate(req);
  if (!requester) throw new ApiUnauthorizedError('Unauthorized');
  const user = impersonate(req.headersDistinct, requester, d.authorizer);
  const segs = pathSegments(url.pathname);
  if (segs[0] !== 'api' || segs[1] !== 'v1') throw pathNotFound();
  const r = parseResourcePath(d.registry, '', 'v1', segs.slice(2), url.searchParams);
  const sub = r.subresource;
  if (r.storage.def.kind !== 'Pod' || r.name === undefined || (sub !== 'exec' && sub !== 'attach'))
    throw badRequest('upgrade is served only on pods/exec and pods/attach');
  authorizeStream(r, { authorizer: d.authorizer, user });
  const pod = r.storage.mustGet(r.namespace, r.name).obj as Pod;
  const container = podContainer(pod, url.searchParams.get('container') || undefined, 'exec');
  if (isSpdyUpgrade(req)) {
    if (!d.podStreaming.cert) throw new InternalError('this API server has no client certificate for node endpoints');
    return relaySpdyPodStream({
      req,
      socket,
      head,
      pod,
      path: nodeStreamPath(sub, pod, container, url.searchParams),
      query: url.searchParams,
      s: d.podStreaming,
    });
  }
  relayPodStream({ req, socket, head, pod, container, subresource: sub, query: url.searchParams, s: d.podStreaming });
}

/** The client certificate's or bearer token's (a static token or a node's) user, in system:authenticated as every authenticated user is. */
function authenticate(
  o: Pick<ApiServerOptions, 'clientCaPem' | 'tokens'>,
  secrets: ReturnType<ApiRegistry['byGroupVersionPlural']>,
  req: IncomingMessage,
): UserInfo | undefined {
  const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
  const token = m?.[1]!.trim();
  // kube-apiserver asks the x509 authenticator before the token ones.
  const u =
    (o.clientCaPem ? clientCertificateUser(req.socket) : undefined) ??
    (token === undefined
      ? undefined
      : (o.tokens.get(token) ?? authenticateNodeToken(token, (ns, name) => secrets?.get(ns, name)?.obj)));
  if (!u || u.groups.includes(AUTHENTICATED_GROUP)) return u;
  return { ...u, groups: [...u.groups, AUTHENTICATED_GROUP] };
}

/** Starts the Kubernetes-compatible API server over HTTPS. */
export async function startApiServer(o: ApiServerOptions): Promise<ApiServer> {
  const range = o.serviceClusterIpRange;
  const defs =
    range === undefined
      ? (o.resources ?? ALL_RESOURCES)
      : (o.resources ?? ALL_RESOURCES).map((d) =>
          d.kind === 'Service' && d.group === '' ? newServiceResource({ serviceCidr: range }) : d,
        );
  const registry = new ApiRegistry(o.store, defs, formatInvalidMessage, { watchHistory: o.watchCacheHistory });
  await registry.start();
  await registry.ensureInitialObjects();
  const crdRegistrar = newCrdRegistrar(registry);
  await crdRegistrar.start();
  const metrics = o.metrics ?? new MetricsRegistry();
  const requests = metrics.counter(
    'apiserver_request_total',
    'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
    ['verb', 'group', 'version', 'resource', 'subresource', 'code'],
  );
  // What each resource request was about, for the metric labels (set once the URL is routed).
  const requestInfo = new WeakMap<
    IncomingMessage,
    { verb: string; group: string; version: string; resource: string; subresource: string }
  >();
  const authorizer = newUnionAuthorizer([
    newNodeAuthorizer(registryGraphSource(registry)),
    o.authorizer ?? newAdminAuthorizer(),
  ]);
  const podStreaming: PodStreaming = {
    node: (name) => registry.byGroupVersionPlural('', 'v1', 'nodes')?.get(undefined, name)?.obj as Node | undefined,
    cert: o.kubeletClient,
  };
  const router = newRouter(
    apiRoutes({ registry, metrics, store: o.store, authorizer, podStreaming, tag: (req, r) => tagged(req, r) }),
  );

  const secrets = registry.byGroupVersionPlural('', 'v1', 'secrets');
  const authn = (req: IncomingMessage): UserInfo | undefined => authenticate(o, secrets, req);
  const upgradeDeps: UpgradeDeps = { registry, authorizer, podStreaming, authenticate: authn };
  const limits = { ...DEFAULT_REQUEST_LIMITS, ...DEFAULT_CONNECTION_LIMITS, ...o.limits };
  const inFlight = newInFlightLimiter(limits);
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    guardUnreadBody(req, res);
    res.on('finish', () => {
      const info = requestInfo.get(req) ?? {
        verb: req.method ?? '',
        group: '',
        version: '',
        resource: '',
        subresource: '',
      };
      requests.inc({ ...info, code: String(res.statusCode) });
    });
    serve(req, res).catch((e: unknown) => {
      if (toStatus(e).code >= 500)
        log.warn('request failed', { method: req.method, url: req.url, error: (e as Error).message });
      sendError(res, e);
    });
  };
  // Node's requestTimeout bounds receiving a request, not the response: watches are not cut by it.
  // A client certificate is asked for but not required: bearer tokens authenticate the rest.
  const clientCerts = o.clientCaPem ? { requestCert: true, rejectUnauthorized: false, ca: o.clientCaPem } : {};
  const server: Server = createHttpsServer(
    { cert: o.tls.certPem, key: o.tls.keyPem, ...clientCerts, ...serverOptions(limits) },
    handle,
  );
  let local: HttpServer | undefined;
  const upgraded = new Set<Duplex>();
  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    upgraded.add(socket);
    socket.on('close', () => upgraded.delete(socket));
    socket.on('error', () => socket.destroy());
    try {
      serveUpgrade(upgradeDeps, req, socket, head);
    } catch (e) {
      refuseUpgrade(socket, e);
    }
  };
  server.on('upgrade', onUpgrade);

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://localhost');
    const match = router.match(req.method ?? 'GET', pathSegments(url.pathname));
    const requester = match?.route.public ? undefined : authn(req);
    if (!match?.route.public && !requester) {
      sendJson(res, 401, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'Unauthorized',
        reason: 'Unauthorized',
        code: 401,
      });
      return;
    }
    const user = requester && impersonate(req.headersDistinct, requester, authorizer);
    const path = url.pathname.replace(/\/+$/, '') || '/';
    if (!inFlight.admit(req, res, path, url.searchParams, user)) return;
    if (!applyRequestDeadline(req, res, path, url.searchParams, limits)) return;
    // Resource paths are authorized by the resource handler, which knows the verb and resource.
    if (user && !(match && '*' in match.route.methods)) {
      const attrs = {
        kind: 'nonResource',
        user,
        verb: nonResourceVerb(req.method ?? 'GET'),
        path: url.pathname,
      } as const;
      const d = authorizer.authorize(attrs);
      if (!d.allowed) throw forbiddenFor(attrs, d);
    }
    if (!match) throw pathNotFound();
    if (!match.handler) throw methodNotAllowed();
    await match.handler({ req, res, url, params: match.params, rest: match.rest, user });
  }

  /** Records the request's metric labels; kube's verb is LIST or WATCH for collection reads. */
  function tagged(req: IncomingMessage, r: ResourceRequest): ResourceRequest {
    const method = req.method ?? 'GET';
    const verb = method === 'GET' ? (isWatch(r) ? 'WATCH' : r.name === undefined ? 'LIST' : 'GET') : method;
    const d = r.storage.def;
    requestInfo.set(req, {
      verb,
      group: d.group,
      version: d.version,
      resource: d.plural,
      subresource: r.subresource ?? '',
    });
    return r;
  }

  await listen(server, o.port, o.address);
  if (o.localSocketPath) {
    const path = o.localSocketPath;
    rmSync(path, { force: true });
    local = createHttpServer(serverOptions(limits), handle);
    local.on('upgrade', onUpgrade);
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
      await crdRegistrar.stop();
      registry.stop();
      server.closeAllConnections();
      local?.closeAllConnections();
      for (const s of upgraded) s.destroy();
      await Promise.all([
        new Promise<void>((resolve) => server.close(() => resolve())),
        local ? new Promise<void>((resolve) => local!.close(() => resolve())) : undefined,
      ]);
    },
  };
}
