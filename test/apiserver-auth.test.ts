import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from '../src/api/server.js';
import { ensureServingMaterial } from '../src/api/tls.js';
import { openSqliteStore } from '../src/store/sqlite.js';
import type { Store } from '../src/store/store.js';
import { api, type Target } from './helpers/http.js';

/** Two users: the admin (system:masters) and one the admin policy gives nothing. */
describe('authorization and the self-subject reviews', () => {
  let dir: string;
  let store: Store;
  let server: ApiServer;
  let admin: Target;
  let nobody: Target;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'stowage-auth-'));
    const pki = ensureServingMaterial(dir, ['127.0.0.1']);
    store = openSqliteStore({ path: ':memory:' });
    const tokens = new Map([
      [pki.adminToken, { name: 'admin', groups: ['system:masters'] }],
      ['nobody-token', { name: 'nobody', groups: [], uid: 'u-1' }],
    ]);
    server = await startApiServer({
      store,
      address: '127.0.0.1',
      port: 0,
      tls: { certPem: pki.certPem, keyPem: pki.keyPem },
      tokens,
    });
    admin = { baseUrl: server.url, token: pki.adminToken, caPem: pki.caCertPem };
    nobody = { ...admin, token: 'nobody-token' };
  });
  afterAll(async () => {
    await server?.close();
    await store?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const review = (t: Target, path: string, kind: string, spec?: unknown) =>
    api(t, 'POST', path, { apiVersion: path.split('/').slice(2, 4).join('/'), kind, ...(spec ? { spec } : {}) });
  const SSR = '/apis/authentication.k8s.io/v1/selfsubjectreviews';
  const SSAR = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews';
  const SSRR = '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews';

  it('answers whoami with the user and system:authenticated', async () => {
    const r = await review(nobody, SSR, 'SelfSubjectReview');
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      kind: 'SelfSubjectReview',
      apiVersion: 'authentication.k8s.io/v1',
      status: { userInfo: { username: 'nobody', uid: 'u-1', groups: ['system:authenticated'] } },
    });
    expect((await review(admin, SSR, 'SelfSubjectReview')).body.status.userInfo).toEqual({
      username: 'admin',
      groups: ['system:masters', 'system:authenticated'],
    });
  });

  it('answers can-i from the authorizer that guards requests', async () => {
    const attrs = { resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'default' } };
    expect((await review(admin, SSAR, 'SelfSubjectAccessReview', attrs)).body.status).toEqual({ allowed: true });
    expect((await review(nobody, SSAR, 'SelfSubjectAccessReview', attrs)).body.status).toEqual({ allowed: false });
    const list = await api(nobody, 'GET', '/api/v1/namespaces/default/pods');
    expect(list.status).toBe(403);
    expect(list.body).toMatchObject({
      reason: 'Forbidden',
      message:
        'pods is forbidden: User "nobody" cannot list resource "pods" in API group "" in the namespace "default"',
    });
    expect((await api(admin, 'GET', '/api/v1/namespaces/default/pods')).status).toBe(200);
    expect((await api(nobody, 'GET', '/apis')).status).toBe(200);
    const metrics = await api(nobody, 'GET', '/metrics');
    expect({ status: metrics.status, message: metrics.body?.message }).toEqual({
      status: 403,
      message: 'forbidden: User "nobody" cannot get path "/metrics"',
    });
    const nonRes = { nonResourceAttributes: { verb: 'get', path: '/metrics' } };
    expect((await review(admin, SSAR, 'SelfSubjectAccessReview', nonRes)).body.status).toEqual({ allowed: true });
  });

  it('authorizes pods/log as get and pods/exec as create of the subresource', async () => {
    const log = await api(nobody, 'GET', '/api/v1/namespaces/default/pods/p/log');
    expect({ status: log.status, message: log.body?.message }).toEqual({
      status: 403,
      message:
        'pods "p" is forbidden: User "nobody" cannot get resource "pods/log" in API group "" in the namespace "default"',
    });
    const exec = await api(nobody, 'GET', '/api/v1/namespaces/default/pods/p/exec?command=true');
    expect({ status: exec.status, message: exec.body?.message }).toEqual({
      status: 403,
      message:
        'pods "p" is forbidden: User "nobody" cannot create resource "pods/exec" in API group "" in the namespace "default"',
    });
    expect((await api(admin, 'GET', '/api/v1/namespaces/default/pods/p/log')).body).toMatchObject({
      code: 404,
      message: 'pods "p" not found',
    });
    expect((await api(admin, 'POST', '/api/v1/namespaces/default/pods/p/exec?command=true')).body).toMatchObject({
      code: 400,
      message: 'Upgrade request required',
    });
  });

  it('lists the rules for a namespace', async () => {
    const r = await review(admin, SSRR, 'SelfSubjectRulesReview', { namespace: 'default' });
    expect(r.status).toBe(201);
    expect(r.body.status.incomplete).toBe(false);
    expect(r.body.status.resourceRules[0]).toEqual({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] });
    expect(r.body.status.nonResourceRules[0]).toEqual({ verbs: ['*'], nonResourceURLs: ['*'] });
    const theirs = (await review(nobody, SSRR, 'SelfSubjectRulesReview', { namespace: 'default' })).body.status;
    expect(theirs.resourceRules).toEqual([
      { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'] },
      {
        verbs: ['create'],
        apiGroups: ['authorization.k8s.io'],
        resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
      },
    ]);
    expect(theirs.nonResourceRules[0].nonResourceURLs).toContain('/apis/*');
  });

  it('stores nothing, serves only create, and validates the access review spec', async () => {
    expect((await api(admin, 'GET', SSAR)).status).toBe(405);
    const bad = await review(admin, SSAR, 'SelfSubjectAccessReview', {});
    expect(bad.status).toBe(422);
    expect(bad.body.details.causes[0]).toMatchObject({ field: 'spec.resourceAttributes' });
    const disc = await api(admin, 'GET', '/apis/authorization.k8s.io/v1');
    expect(disc.body.resources.map((r: { name: string; verbs: string[] }) => `${r.name}:${r.verbs.join(',')}`)).toEqual(
      ['selfsubjectaccessreviews:create', 'selfsubjectrulesreviews:create'],
    );
    expect((await store.list('/registry/')).items.some((kv) => kv.key.includes('selfsubject'))).toBe(false);
  });
});
