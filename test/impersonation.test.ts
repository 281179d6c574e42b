import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from '../src/api/server.js';
import { ensureServingMaterial, kubeconfigYaml } from '../src/api/tls.js';
import { openSqliteStore } from '../src/store/sqlite.js';
import type { Store } from '../src/store/store.js';
import { api, type Target } from './helpers/http.js';
import { kubectlIn } from './helpers/kubectl.js';

/** kubectl --as / --as-group / --as-uid against the server: the impersonate verb checked, then the impersonated user authorized. */
describe('impersonation headers', () => {
  let dir: string;
  let store: Store;
  let server: ApiServer;
  let admin: Target;
  const k = kubectlIn(() => dir);
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'stowage-impersonate-'));
    const pki = ensureServingMaterial(join(dir, 'pki'), ['127.0.0.1']);
    store = openSqliteStore({ path: ':memory:' });
    server = await startApiServer({
      store,
      address: '127.0.0.1',
      port: 0,
      tls: { certPem: pki.certPem, keyPem: pki.keyPem },
      tokens: new Map([
        [pki.adminToken, { name: 'admin', groups: ['system:masters'] }],
        ['nobody-token', { name: 'nobody', groups: [] }],
      ]),
    });
    admin = { baseUrl: server.url, token: pki.adminToken, caPem: pki.caCertPem };
    writeFileSync(
      join(dir, 'kubeconfig'),
      kubeconfigYaml({ server: server.url, caCertPem: pki.caCertPem, token: pki.adminToken }),
    );
  });
  afterAll(async () => {
    await server?.close();
    await store?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('kubectl auth whoami --as answers as the impersonated user', async () => {
    expect((await k.json('auth', 'whoami', '--as=bob')).status.userInfo).toEqual({
      username: 'bob',
      groups: ['system:authenticated'],
    });
    const sa = await k.json('auth', 'whoami', '--as=system:serviceaccount:ns1:sa1', '--as-uid=u-1');
    expect(sa.status.userInfo).toEqual({
      username: 'system:serviceaccount:ns1:sa1',
      uid: 'u-1',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:ns1', 'system:authenticated'],
    });
    const grouped = await k.json('auth', 'whoami', '--as=bob', '--as-group=devs', '--as-group=ops');
    expect(grouped.status.userInfo.groups).toEqual(['devs', 'ops', 'system:authenticated']);
  });

  it('authorizes the request as the impersonated user', async () => {
    await expect(k.kubectl('get', 'secrets', '--as=bob')).rejects.toThrow(
      /secrets is forbidden: User "bob" cannot list resource "secrets" in API group "" in the namespace "default"/,
    );
    await expect(k.kubectl('get', 'secrets', '--as=bob', '--as-group=system:masters')).resolves.toBeDefined();
  });

  it('refuses a requester without the impersonate verb, and groups without a user', async () => {
    const r = await api({ ...admin, token: 'nobody-token' }, 'GET', '/api/v1/namespaces', undefined, {
      headers: { 'Impersonate-User': 'admin' },
    });
    expect({ status: r.status, message: r.body?.message }).toEqual({
      status: 403,
      message:
        'users "admin" is forbidden: User "nobody" cannot impersonate resource "users" in API group "" at the cluster scope',
    });
    const g = await api(admin, 'GET', '/api/v1/namespaces', undefined, {
      headers: { 'Impersonate-Group': 'devs' },
    });
    expect(g.status).toBe(500);
    expect(g.body?.message).toMatch(/without impersonating a user/);
  });
});
