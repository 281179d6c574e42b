import { describe, expect, it } from 'vitest';
import { newRouter, pathSegments, type Route, type RouteHandler } from './routes.js';
import { ApiBadRequestError } from './status.js';

const h = (name: string): RouteHandler & { id: string } => Object.assign(() => undefined, { id: name });
const version = h('version');
const group = h('group');
const resources = h('resources');
const openapi = h('openapi');

const routes: Route[] = [
  { path: '/version', public: true, methods: { GET: version } },
  { path: '/openapi/v3/*', exists: (_, rest) => rest.join('/') === 'api/v1', methods: { GET: openapi } },
  { path: '/apis/:group', exists: (p) => p.group === 'storage.k8s.io', methods: { GET: group } },
  { path: '/apis/:group/:version/*', methods: { '*': resources } },
];
const router = newRouter(routes);

describe('router', () => {
  it.each([
    { name: 'exact path', method: 'GET', path: '/version', want: 'version', params: {}, rest: [] },
    { name: 'HEAD is served by GET', method: 'HEAD', path: '/version', want: 'version', params: {}, rest: [] },
    { name: 'trailing slash', method: 'GET', path: '/version/', want: 'version', params: {}, rest: [] },
    {
      name: 'named segment',
      method: 'GET',
      path: '/apis/storage.k8s.io',
      want: 'group',
      params: { group: 'storage.k8s.io' },
      rest: [],
    },
    {
      name: 'wildcard takes the rest',
      method: 'GET',
      path: '/openapi/v3/api/v1',
      want: 'openapi',
      params: {},
      rest: ['api', 'v1'],
    },
    {
      name: 'any method on a * route',
      method: 'PATCH',
      path: '/apis/g/v1/namespaces/a%3Ab/pods',
      want: 'resources',
      params: { group: 'g', version: 'v1' },
      rest: ['namespaces', 'a:b', 'pods'],
    },
  ])('$name', ({ method, path, want, params, rest }) => {
    const m = router.match(method, pathSegments(path));
    expect((m?.handler as { id?: string } | undefined)?.id).toBe(want);
    expect(m?.params).toEqual(params);
    expect(m?.rest).toEqual(rest);
  });

  it.each([
    { name: 'a method the path does not serve', method: 'POST', path: '/version' },
    { name: 'DELETE on a named segment', method: 'DELETE', path: '/apis/storage.k8s.io' },
  ])('matches without a handler (405): $name', ({ method, path }) => {
    const m = router.match(method, pathSegments(path));
    expect(m).toBeDefined();
    expect(m?.handler).toBeUndefined();
  });

  it.each([
    { name: 'unknown path', path: '/nothing' },
    { name: 'a wildcard needs one more segment', path: '/openapi/v3' },
    { name: 'exists() says no', path: '/apis/unknown.example.com' },
    { name: 'exists() says no under a wildcard', path: '/openapi/v3/apis/x/v1' },
    { name: 'longer than an exact pattern', path: '/version/extra' },
  ])('does not match (404): $name', ({ path }) => {
    expect(router.match('GET', pathSegments(path))).toBeUndefined();
  });

  it('refuses a malformed percent-encoding with 400', () => {
    expect(() => pathSegments('/api/v1/%zz')).toThrow(ApiBadRequestError);
  });

  it.each(['/api/v1/namespaces/a%2Fb/pods', '/api/v1/namespaces/..%2F..%2Fetc/pods', '/api/v1/namespaces/%2E%2E/pods'])(
    'a segment that decodes to a slash or a dot segment names nothing (404): %s',
    (path) => {
      expect(() => pathSegments(path)).toThrow(expect.objectContaining({ code: 'NotFound' }));
    },
  );
});
