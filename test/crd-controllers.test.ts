/** Controllers follow custom resources: the garbage collector deletes owned CRs, namespace deletion removes them. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../src/cli/testing.test-kit.js';
import { api } from './helpers/http.js';

const GROUP = 'ctl.example.com';
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

async function until<T>(what: string, f: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

describe('controllers and custom resources', () => {
  let s: TestApiServer;
  beforeAll(async () => {
    s = await startTestApiServer({ scheduler: false, attachDetach: false });
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `things.${GROUP}` },
      spec: {
        group: GROUP,
        scope: 'Namespaced',
        names: { plural: 'things', kind: 'Thing' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    };
    expect((await api(s, 'POST', CRDS, crd)).status).toBe(201);
    await until('things served', async () =>
      (await api(s, 'GET', `/apis/${GROUP}/v1`)).status === 200 ? true : undefined,
    );
  }, 60_000);
  afterAll(async () => {
    await s?.close();
  });

  const thing = (name: string, owner?: { kind: string; apiVersion: string; name: string; uid: string }) => ({
    apiVersion: `${GROUP}/v1`,
    kind: 'Thing',
    metadata: { name, ...(owner ? { ownerReferences: [owner] } : {}) },
    spec: { n: 1 },
  });

  it('the garbage collector deletes a custom resource whose owner is gone, and one owned by a custom resource', async () => {
    const cm = await api(s, 'POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'owner' } });
    const parent = await api(
      s,
      'POST',
      `/apis/${GROUP}/v1/namespaces/default/things`,
      thing('parent', { kind: 'ConfigMap', apiVersion: 'v1', name: 'owner', uid: cm.body.metadata.uid }),
    );
    expect(parent.status).toBe(201);
    const child = await api(
      s,
      'POST',
      `/apis/${GROUP}/v1/namespaces/default/things`,
      thing('child', { kind: 'Thing', apiVersion: `${GROUP}/v1`, name: 'parent', uid: parent.body.metadata.uid }),
    );
    expect(child.status).toBe(201);
    await api(s, 'DELETE', '/api/v1/namespaces/default/configmaps/owner');
    await until('the owned things gone', async () => {
      const p = await api(s, 'GET', `/apis/${GROUP}/v1/namespaces/default/things/parent`);
      const c = await api(s, 'GET', `/apis/${GROUP}/v1/namespaces/default/things/child`);
      return p.status === 404 && c.status === 404 ? true : undefined;
    });
  }, 90_000);

  it('the garbage collector follows a CRD installed while it runs (rediscovery)', async () => {
    const later = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `laters.${GROUP}` },
      spec: {
        group: GROUP,
        scope: 'Namespaced',
        names: { plural: 'laters', kind: 'Later' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    };
    expect((await api(s, 'POST', CRDS, later)).status).toBe(201);
    const path = `/apis/${GROUP}/v1/namespaces/default/laters`;
    await until('laters served', async () => ((await api(s, 'GET', path)).status === 200 ? true : undefined));
    const cm = await api(s, 'POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'owner2' } });
    const owned = await api(s, 'POST', path, {
      apiVersion: `${GROUP}/v1`,
      kind: 'Later',
      metadata: {
        name: 'l1',
        ownerReferences: [{ kind: 'ConfigMap', apiVersion: 'v1', name: 'owner2', uid: cm.body.metadata.uid }],
      },
    });
    expect(owned.status).toBe(201);
    await api(s, 'DELETE', '/api/v1/namespaces/default/configmaps/owner2');
    await until('the owned Later gone', async () =>
      (await api(s, 'GET', `${path}/l1`)).status === 404 ? true : undefined,
    );
  }, 90_000);

  it('deleting a namespace deletes its custom resources', async () => {
    await api(s, 'POST', '/api/v1/namespaces', { metadata: { name: 'crns' } });
    expect((await api(s, 'POST', `/apis/${GROUP}/v1/namespaces/crns/things`, thing('t1'))).status).toBe(201);
    await api(s, 'DELETE', '/api/v1/namespaces/crns');
    await until('the namespace gone', async () =>
      (await api(s, 'GET', '/api/v1/namespaces/crns')).status === 404 ? true : undefined,
    );
    expect(await s.store.list(`/registry/${GROUP}/things/crns/`)).toMatchObject({ items: [] });
  }, 90_000);
});
