/**
 * The server's route table: each path pattern with a handler per HTTP method. A path that matches
 * no pattern is 404; a method a matched path does not serve is 405 (kube-apiserver's answers).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { UserInfo } from './authz.js';
import { badRequest, pathNotFound } from './status.js';

export interface RouteContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly url: URL;
  /** Values of the pattern's `:name` segments. */
  readonly params: Readonly<Record<string, string>>;
  /** The segments a trailing `*` matched. */
  readonly rest: readonly string[];
  /** Who asked (undefined on public routes, which are served without authentication). */
  readonly user?: UserInfo;
}

export type RouteHandler = (c: RouteContext) => void | Promise<void>;

export interface Route {
  /** `/version`, `/apis/:group`, `/api/v1/*` (`*` = one or more further segments, last only). */
  readonly path: string;
  /** Served without authentication (health checks, /version). */
  readonly public?: boolean;
  /** Handler per method (GET also answers HEAD); `'*'` serves every method (resource paths route by verb). */
  readonly methods: Readonly<Record<string, RouteHandler>>;
  /** Whether the matched path names something served; false falls through to the next route (and 404). */
  readonly exists?: (params: Readonly<Record<string, string>>, rest: readonly string[]) => boolean;
}

export interface RouteMatch {
  readonly route: Route;
  readonly params: Readonly<Record<string, string>>;
  readonly rest: readonly string[];
  /** The handler for the request's method; undefined = 405. */
  readonly handler: RouteHandler | undefined;
}

export interface Router {
  /** The first route matching the path (decoded segments), or undefined (404). */
  match(method: string, segments: readonly string[]): RouteMatch | undefined;
}

function matchPattern(
  pattern: readonly string[],
  segs: readonly string[],
): { params: Record<string, string>; rest: string[] } | undefined {
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    if (p === '*') return i < segs.length ? { params, rest: segs.slice(i) } : undefined;
    const s = segs[i];
    if (s === undefined) return undefined;
    if (p.startsWith(':')) params[p.slice(1)] = s;
    else if (p !== s) return undefined;
  }
  return segs.length === pattern.length ? { params, rest: [] } : undefined;
}

export function newRouter(routes: readonly Route[]): Router {
  const compiled = routes.map((route) => ({ route, pattern: route.path.split('/').filter(Boolean) }));
  return {
    match(method, segments) {
      for (const { route, pattern } of compiled) {
        const m = matchPattern(pattern, segments);
        if (!m || (route.exists && !route.exists(m.params, m.rest))) continue;
        const handler =
          route.methods[method] ?? (method === 'HEAD' ? route.methods.GET : undefined) ?? route.methods['*'];
        return { route, params: m.params, rest: m.rest, handler };
      }
      return undefined;
    },
  };
}

/**
 * A URL path as segments: empty ones (trailing slashes) dropped, each percent-decoded (malformed:
 * 400). A segment that decodes to contain `/`, or is `.` or `..`, names nothing served (404): an
 * escaped slash must not move a request into another namespace's keys.
 */
export function pathSegments(pathname: string): string[] {
  let segs: string[];
  try {
    segs = pathname.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    throw badRequest(`invalid URL path: ${pathname}`);
  }
  if (segs.some((s) => s.includes('/') || s === '.' || s === '..')) throw pathNotFound();
  return segs;
}
