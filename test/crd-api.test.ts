/** CustomResourceDefinitions over HTTP: lifecycle, serving, schema rules, subresources, deletion, restart. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer, type TestApiServerOptions } from '../src/cli/testing.test-kit.js';
import { openEtcdStore } from '../src/store/etcd.js';
import { etcdMissing, startEtcd, type EtcdProcess } from '../src/store/etcd/etcd-process.test-kit.js';
import { api, watchUntil } from './helpers/http.js';

/** Each store the server runs on: SQLite (a temp dir per server) or one etcd shared by the servers of a test. */
const STORES = [
  { name: 'sqlite', skip: false },
  { name: 'etcd', skip: etcdMissing !== undefined },
] as const;

let etcd: EtcdProcess | undefined;
async function serverOptions(store: string): Promise<TestApiServerOptions> {
  if (store !== 'etcd') return { controllers: false };
  etcd ??= await startEtcd();
  const endpoint = etcd.endpoint;
  return { controllers: false, openStore: () => openEtcdStore({ endpoints: [endpoint], watchRetryMs: 100 }) };
}
afterAll(async () => {
  await etcd?.stop();
});

const GROUP = 'stable.example.com';
const crd = (over: Record<string, unknown> = {}) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `widgets.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', shortNames: ['wd'], categories: ['all'] },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: {
          status: {},
          scale: {
            specReplicasPath: '.spec.replicas',
            statusReplicasPath: '.status.replicas',
            labelSelectorPath: '.status.selector',
          },
        },
        additionalPrinterColumns: [
          { name: 'Size', type: 'string', jsonPath: '.spec.size' },
          { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
        ],
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['size'],
                properties: {
                  size: { type: 'string', enum: ['S', 'M', 'L'] },
                  replicas: { type: 'integer', minimum: 0, maximum: 10, default: 1 },
                  name: { type: 'string', pattern: '^[a-z]+$', maxLength: 8 },
                  port: { 'x-kubernetes-int-or-string': true },
                  tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
                  extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                },
              },
              status: {
                type: 'object',
                properties: { replicas: { type: 'integer' }, selector: { type: 'string' }, phase: { type: 'string' } },
              },
            },
          },
        },
      },
      {
        name: 'v1beta1',
        served: true,
        storage: false,
        deprecated: true,
        deprecationWarning: 'stable.example.com/v1beta1 Widget is deprecated; use v1',
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
  ...over,
});

describe.each(STORES)('CustomResourceDefinitions on $name', ({ name: storeName, skip }) => {
  let s: TestApiServer;
  const base = `/apis/${GROUP}/v1/namespaces/default/widgets`;

  const waitEstablished = async (name: string): Promise<void> => {
    for (let i = 0; i < 400; i++) {
      const r = await api(s, 'GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
      const est = r.body?.status?.conditions?.find((c: { type: string }) => c.type === 'Established');
      const disc = await api(s, 'GET', `/apis/${r.body?.spec?.group}/${r.body?.spec?.versions?.[0]?.name}`);
      if (est?.status === 'True' && disc.status === 200) return;
      await new Promise((res) => setTimeout(res, 25));
    }
    throw new Error(`${name} never established`);
  };

  beforeAll(async () => {
    if (skip) return;
    s = await startTestApiServer(await serverOptions(storeName));
  }, 60_000);
  afterAll(async () => {
    await s?.close();
  });

  it.skipIf(skip)('refuses an invalid CRD with kube messages', async () => {
    const bad = crd();
    (bad.spec as any).versions[0].storage = false;
    (bad.spec as any).group = 'nodot';
    (bad.metadata as any).name = 'x.nodot';
    const r = await api(s, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', bad);
    expect(r.status).toBe(422);
    expect(r.body.message).toContain('spec.group: Invalid value: "nodot": should be a domain with at least one dot');
    expect(r.body.message).toContain('must have exactly one version marked as storage version');
    expect(r.body.message).toContain(
      'metadata.name: Invalid value: "x.nodot": must be spec.names.plural+"."+spec.group',
    );
    const web = crd({});
    (web.spec as any).conversion = { strategy: 'Webhook' };
    const w = await api(s, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', web);
    expect(w.status).toBe(422);
    expect(w.body.message).toContain('Webhook conversion is not supported');
    const cel = crd();
    (cel.spec as any).versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'] = [
      { rule: 'true' },
    ];
    const c = await api(s, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', cel);
    expect(c.status).toBe(422);
    expect(c.body.message).toContain('x-kubernetes-validations');
  });

  it.skipIf(skip)('creates a CRD, establishes it and serves its objects', async () => {
    const r = await api(s, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd());
    expect(r.status).toBe(201);
    expect(r.body.status.storedVersions).toEqual(['v1']);
    await waitEstablished(`widgets.${GROUP}`);
    const got = await api(s, 'GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${GROUP}`);
    expect(got.body.status.acceptedNames.kind).toBe('Widget');
    const names = got.body.status.conditions.find((c: any) => c.type === 'NamesAccepted');
    expect(names).toMatchObject({ status: 'True', reason: 'NoConflicts' });

    const created = await api(s, 'POST', base, {
      apiVersion: `${GROUP}/v1`,
      kind: 'Widget',
      metadata: { name: 'w1' },
      spec: { size: 'S', bogus: 1, extra: { anything: { goes: true } } },
      status: { phase: 'ignored' },
    });
    expect(created.status).toBe(201);
    expect(created.body.spec).toEqual({ size: 'S', replicas: 1, extra: { anything: { goes: true } } });
    expect(created.body.status).toBeUndefined();
    expect(created.body.metadata.generation).toBe(1);
    expect(String(created.headers.warning)).toContain('unknown field \\"spec.bogus\\"');

    const strict = await api(s, 'POST', `${base}?fieldValidation=Strict`, {
      apiVersion: `${GROUP}/v1`,
      kind: 'Widget',
      metadata: { name: 'w2' },
      spec: { size: 'S', bogus: 1 },
    });
    expect(strict.status).toBe(400);
    expect(strict.body.message).toBe(
      'Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.bogus"',
    );
  });

  it.skipIf(skip)('validates against the schema with kube paths and messages', async () => {
    const r = await api(s, 'POST', base, {
      apiVersion: `${GROUP}/v1`,
      kind: 'Widget',
      metadata: { name: 'bad' },
      spec: { size: 'XL', replicas: 'two', name: 'ABCDEFGHIJ', port: true, tags: ['a', 'a'] },
    });
    expect(r.status).toBe(422);
    const m = r.body.message as string;
    expect(m).toContain('spec.size: Unsupported value: "XL": supported values: "S", "M", "L"');
    expect(m).toContain(
      'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
    );
    expect(m).toContain('spec.name: Invalid value: "ABCDEFGHIJ": spec.name in body should match \'^[a-z]+$\'');
    expect(m).toContain('spec.name: Too long: may not be longer than 8');
    expect(m).toContain(
      'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"',
    );
    expect(m).toContain('spec.tags[1]: Duplicate value: "a"');
    const missing = await api(s, 'POST', base, {
      apiVersion: `${GROUP}/v1`,
      kind: 'Widget',
      metadata: { name: 'bad2' },
      spec: { replicas: 11 },
    });
    expect(missing.body.message).toContain('spec.size: Required value');
    expect(missing.body.message).toContain(
      'spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10',
    );
  });

  it.skipIf(skip)('serves status and scale subresources with kube generation rules', async () => {
    const cur = await api(s, 'GET', `${base}/w1`);
    const st = await api(s, 'PUT', `${base}/w1/status`, {
      ...cur.body,
      spec: { size: 'L' },
      status: { replicas: 3, selector: 'app=w' },
    });
    expect(st.status).toBe(200);
    expect(st.body.spec.size).toBe('S');
    expect(st.body.status.replicas).toBe(3);
    expect(st.body.metadata.generation).toBe(1);
    const sc = await api(s, 'GET', `${base}/w1/scale`);
    expect(sc.body).toMatchObject({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      spec: { replicas: 1 },
      status: { replicas: 3, selector: 'app=w' },
    });
    const up = await api(
      s,
      'PATCH',
      `${base}/w1/scale`,
      { spec: { replicas: 4 } },
      { contentType: 'application/merge-patch+json' },
    );
    expect(up.status).toBe(200);
    const after = await api(s, 'GET', `${base}/w1`);
    expect(after.body.spec.replicas).toBe(4);
    expect(after.body.metadata.generation).toBe(2);
    const smp = await api(
      s,
      'PATCH',
      `${base}/w1`,
      { spec: { size: 'M' } },
      { contentType: 'application/strategic-merge-patch+json' },
    );
    expect(smp.status).toBe(415);
    const mp = await api(
      s,
      'PATCH',
      `${base}/w1`,
      { spec: { size: 'M' } },
      { contentType: 'application/merge-patch+json' },
    );
    expect(mp.body.spec.size).toBe('M');
    const jp = await api(s, 'PATCH', `${base}/w1`, [{ op: 'replace', path: '/spec/size', value: 'L' }], {
      contentType: 'application/json-patch+json',
    });
    expect(jp.body.spec.size).toBe('L');
  });

  it.skipIf(skip)('serves a second version with apiVersion rewritten and a deprecation warning', async () => {
    const r = await api(s, 'GET', `/apis/${GROUP}/v1beta1/namespaces/default/widgets/w1`);
    expect(r.status).toBe(200);
    expect(r.body.apiVersion).toBe(`${GROUP}/v1beta1`);
    expect(String(r.headers.warning)).toContain('v1beta1 Widget is deprecated; use v1');
    const list = await api(s, 'GET', `/apis/${GROUP}/v1/widgets`);
    expect(list.body.kind).toBe('WidgetList');
    expect(list.body.items.map((i: any) => i.apiVersion)).toEqual([`${GROUP}/v1`]);
  });

  it.skipIf(skip)('lists in discovery and answers Tables from printer columns', async () => {
    const d = await api(s, 'GET', `/apis/${GROUP}/v1`);
    const w = d.body.resources.find((x: any) => x.name === 'widgets');
    expect(w).toMatchObject({ kind: 'Widget', namespaced: true, shortNames: ['wd'], categories: ['all'] });
    expect(d.body.resources.map((x: any) => x.name)).toEqual(
      expect.arrayContaining(['widgets/status', 'widgets/scale']),
    );
    const g = await api(s, 'GET', `/apis/${GROUP}`);
    expect(g.body.preferredVersion.version).toBe('v1');
    const t = await api(s, 'GET', base, undefined, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
    expect(t.body.columnDefinitions.map((c: any) => c.name)).toEqual(['Name', 'Size', 'Replicas']);
    expect(t.body.rows[0].cells).toEqual(['w1', 'L', 4]);
    const v3 = await api(s, 'GET', `/openapi/v3/apis/${GROUP}/v1`);
    expect(v3.status).toBe(200);
    expect(Object.keys(v3.body.components.schemas)).toContain('com.example.stable.v1.Widget');
  });

  it.skipIf(skip)('refuses a CRD whose names conflict (NamesAccepted=False)', async () => {
    const other = crd({ metadata: { name: `gadgets.${GROUP}` } });
    (other.spec as any).names = { plural: 'gadgets', singular: 'gadget', kind: 'Widget' };
    expect((await api(s, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', other)).status).toBe(201);
    let cond: any;
    for (let i = 0; i < 400 && cond?.status !== 'False'; i++) {
      const r = await api(s, 'GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.${GROUP}`);
      cond = r.body.status?.conditions?.find((c: any) => c.type === 'NamesAccepted');
      if (cond?.status !== 'False') await new Promise((res) => setTimeout(res, 25));
    }
    expect(cond).toMatchObject({ status: 'False', reason: 'KindConflict', message: '"Widget" is already in use' });
    await api(s, 'DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.${GROUP}`);
  });

  it.skipIf(skip)('protects k8s.io groups and the names of built-in kinds', async () => {
    const mk = (annotations?: Record<string, string>) => ({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'storageclasses.storage.k8s.io', ...(annotations ? { annotations } : {}) },
      spec: {
        group: 'storage.k8s.io',
        scope: 'Cluster',
        names: { plural: 'storageclasses', singular: 'fakeclass', kind: 'FakeClass' },
        versions: [{ name: 'v9', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
      },
    });
    const refused = await api(s, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', mk());
    expect(refused.status).toBe(422);
    expect(refused.body.message).toContain(
      'metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io"',
    );
    const approved = mk({ 'api-approved.kubernetes.io': 'unapproved, test' });
    expect((await api(s, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', approved)).status).toBe(
      201,
    );
    let cond: any;
    for (let i = 0; i < 400 && cond?.status !== 'False'; i++) {
      const r = await api(
        s,
        'GET',
        '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/storageclasses.storage.k8s.io',
      );
      cond = r.body.status?.conditions?.find((c: any) => c.type === 'NamesAccepted');
      if (cond?.status !== 'False') await new Promise((res) => setTimeout(res, 25));
    }
    expect(cond).toMatchObject({ status: 'False', reason: 'PluralConflict' });
    expect((await api(s, 'GET', '/apis/storage.k8s.io/v9/storageclasses')).status).toBe(404);
    expect((await api(s, 'GET', '/apis/storage.k8s.io/v1/storageclasses')).status).toBe(200);
    await api(s, 'DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/storageclasses.storage.k8s.io');
  });

  it.skipIf(skip)('watches and pages custom resources like built-in kinds', async () => {
    const list = await api(s, 'GET', `${base}?limit=1`);
    const rv = list.body.metadata.resourceVersion;
    const seen = watchUntil(
      s,
      `${base}?watch=true&allowWatchBookmarks=true&resourceVersion=${rv}`,
      (evs) => evs.some((e) => e.type === 'ADDED' && e.object.metadata.name === 'w3'),
      { timeoutMs: 20_000 },
    );
    await api(s, 'POST', base, {
      apiVersion: `${GROUP}/v1`,
      kind: 'Widget',
      metadata: { name: 'w3', labels: { tier: 'x' } },
      spec: { size: 'M' },
    });
    const evs = await seen;
    expect(evs.find((e) => e.type === 'ADDED').object.apiVersion).toBe(`${GROUP}/v1`);
    const page1 = await api(s, 'GET', `${base}?limit=1`);
    expect(page1.body.items).toHaveLength(1);
    expect(page1.body.metadata.continue).toBeTruthy();
    const page2 = await api(s, 'GET', `${base}?limit=1&continue=${page1.body.metadata.continue}`);
    expect(page2.body.items[0].metadata.name).not.toBe(page1.body.items[0].metadata.name);
    const sel = await api(s, 'GET', `${base}?labelSelector=tier%3Dx`);
    expect(sel.body.items.map((i: any) => i.metadata.name)).toEqual(['w3']);
    const byName = await api(s, 'GET', `/apis/${GROUP}/v1/widgets?fieldSelector=metadata.name%3Dw1`);
    expect(byName.body.items.map((i: any) => i.metadata.name)).toEqual(['w1']);
  });

  it.skipIf(skip)('deleting the CRD deletes its objects first, then stops serving', async () => {
    await api(s, 'POST', base, {
      apiVersion: `${GROUP}/v1`,
      kind: 'Widget',
      metadata: { name: 'held', finalizers: ['example.com/hold'] },
      spec: { size: 'S' },
    });
    const del = await api(s, 'DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${GROUP}`);
    expect(del.status).toBe(200);
    expect(del.body.metadata.finalizers).toContain('customresourcecleanup.apiextensions.k8s.io');
    for (let i = 0; i < 400; i++) {
      const h = await api(s, 'GET', `${base}/held`);
      if (h.body?.metadata?.deletionTimestamp) break;
      await new Promise((res) => setTimeout(res, 25));
    }
    const refused = await api(s, 'POST', base, {
      apiVersion: `${GROUP}/v1`,
      kind: 'Widget',
      metadata: { name: 'late' },
      spec: { size: 'S' },
    });
    expect(refused.status).toBe(405);
    expect(refused.body.message).toBe('create not allowed while custom resource definition is terminating');
    const crdNow = await api(s, 'GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${GROUP}`);
    expect(crdNow.body.status.conditions.find((c: any) => c.type === 'Terminating')).toMatchObject({ status: 'True' });
    await api(
      s,
      'PATCH',
      `${base}/held`,
      { metadata: { finalizers: null } },
      { contentType: 'application/merge-patch+json' },
    );
    for (let i = 0; i < 400; i++) {
      const r = await api(s, 'GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${GROUP}`);
      if (r.status === 404) break;
      await new Promise((res) => setTimeout(res, 25));
    }
    expect((await api(s, 'GET', base)).status).toBe(404);
    expect(await s.store.list(`/registry/${GROUP}/widgets/`)).toMatchObject({ items: [] });
  });
});

describe.each(STORES)('a restarted server on $name', ({ name: storeName, skip }) => {
  it.skipIf(skip)(
    'serves every established CRD as soon as it answers',
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'stowage-crd-restart-'));
      try {
        const opts = { ...(await serverOptions(storeName)), dataDir, keepData: true };
        const first = await startTestApiServer(opts);
        const name = `restarts.${GROUP}`;
        const def = crd({ metadata: { name } });
        (def.spec as any).names = { plural: 'restarts', kind: 'Restart' };
        (def.spec as any).versions = [(def.spec as any).versions[0]];
        try {
          expect(
            (await api(first, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', def)).status,
          ).toBe(201);
          let created = 0;
          for (let i = 0; i < 400 && created !== 201; i++) {
            created = (
              await api(first, 'POST', `/apis/${GROUP}/v1/namespaces/default/restarts`, {
                apiVersion: `${GROUP}/v1`,
                kind: 'Restart',
                metadata: { name: 'r1' },
                spec: { size: 'M' },
              })
            ).status;
            if (created !== 201) await new Promise((res) => setTimeout(res, 25));
          }
          expect(created).toBe(201);
        } finally {
          await first.close();
        }
        const second = await startTestApiServer(opts);
        try {
          const got = await api(second, 'GET', `/apis/${GROUP}/v1/namespaces/default/restarts/r1`);
          expect(got.status).toBe(200);
          expect(got.body.spec).toEqual({ size: 'M', replicas: 1 });
          await api(second, 'DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
        } finally {
          await second.close();
        }
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
    60_000,
  );
});
