import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../store/sqlite.js';
import { MetricsRegistry } from '../util/metrics.js';
import { newAdminAuthorizer } from './authz.js';
import { ApiRegistry } from './registry.js';
import { formatInvalidMessage } from './resources/common.js';
import { ALL_RESOURCES } from './resources/index.js';
import { newRouter, pathSegments } from './routes.js';
import { apiRoutes } from './routetable.js';

const store = openSqliteStore({ path: ':memory:' });
afterAll(() => store.close());
const router = newRouter(
  apiRoutes({
    registry: new ApiRegistry(store, ALL_RESOURCES, formatInvalidMessage),
    metrics: new MetricsRegistry(),
    store,
    authorizer: newAdminAuthorizer(),
    tag: (_, r) => r,
  }),
);
const match = (method: string, path: string) => router.match(method, pathSegments(path));

const NON_RESOURCE = [
  { path: '/healthz', public: true },
  { path: '/livez', public: true },
  { path: '/readyz', public: true },
  { path: '/version', public: true },
  { path: '/metrics', public: false },
  { path: '/openapi/v2', public: false },
  { path: '/openapi/v3', public: false },
  { path: '/openapi/v3/api/v1', public: false },
  { path: '/openapi/v3/apis/storage.k8s.io/v1', public: false },
  { path: '/api', public: false },
  { path: '/api/v1', public: false },
  { path: '/apis', public: false },
  { path: '/apis/storage.k8s.io', public: false },
  { path: '/apis/coordination.k8s.io/v1', public: false },
];

describe('the API route table', () => {
  it.each(NON_RESOURCE)('$path serves GET (and HEAD) only; public: $public', ({ path, public: isPublic }) => {
    expect(match('GET', path)?.handler).toBeDefined();
    expect(match('HEAD', path)?.handler).toBeDefined();
    expect(match('GET', path)?.route.public ?? false).toBe(isPublic);
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
      const m = match(method, path);
      expect({ method, matched: m !== undefined, handler: m?.handler }).toEqual({
        method,
        matched: true,
        handler: undefined,
      });
    }
  });

  it.each([
    '/api/v1/persistentvolumes',
    '/api/v1/namespaces/default/pods/p/binding',
    '/apis/storage.k8s.io/v1/storageclasses/x',
  ])('%s: every method reaches the resource handler', (path) => {
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])
      expect(match(method, path)?.handler).toBeDefined();
  });

  it.each([
    '/',
    '/nothing',
    '/api/v2',
    '/api/v2/pods',
    '/apis/nothing.example.com',
    '/apis/storage.k8s.io/v9',
    '/apis/storage.k8s.io/v9/storageclasses',
    '/openapi/v3/apis/nothing/v1',
    '/healthz/extra',
  ])('%s is not served (404)', (path) => {
    expect(match('GET', path)).toBeUndefined();
    expect(match('POST', path)).toBeUndefined();
  });
});
