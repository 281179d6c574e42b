import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../src/cli/testing.test-kit.js';
import { api, watchUntil } from './helpers/http.js';

const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

function pv(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, labels: { tier: 'gold' } },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      hostPath: { path: `/tmp/${name}` },
      ...extra,
    },
  };
}

function pvc(name: string, size = '1Gi'): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } }, storageClassName: '' },
  };
}

describe('API server', () => {
  let s: TestApiServer;
  beforeAll(async () => {
    s = await startTestApiServer({ controllers: false });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('answers /version and health without a token, and 401 for resources without one', async () => {
    const v = await api(s, 'GET', '/version', undefined, { token: null });
    expect(v.status).toBe(200);
    expect(v.body.gitVersion).toMatch(/^v1\.(2[7-9]|3[0-3])\./);
    expect((await api(s, 'GET', '/healthz', undefined, { token: null })).text).toBe('ok');
    const r = await api(s, 'GET', '/api/v1/persistentvolumes', undefined, { token: null });
    expect(r.status).toBe(401);
    expect(r.body.reason).toBe('Unauthorized');
    expect((await api(s, 'GET', '/api/v1/persistentvolumes', undefined, { token: 'wrong' })).status).toBe(401);
  });

  it('lists each health check with ?verbose, serves one check by name, and honours ?exclude', async () => {
    const ready = await api(s, 'GET', '/readyz?verbose', undefined, { token: null });
    expect(ready.status).toBe(200);
    expect(ready.text).toBe(
      [
        '[+]ping ok',
        '[+]log ok',
        '[+]etcd ok',
        '[+]etcd-readiness ok',
        '[+]informer-sync ok',
        '[+]shutdown ok',
        'readyz check passed',
        '',
      ].join('\n'),
    );
    const live = await api(s, 'GET', '/livez?verbose&exclude=log', undefined, { token: null });
    expect(live.text).toBe(['[+]ping ok', '[+]log excluded: ok', '[+]etcd ok', 'livez check passed', ''].join('\n'));
    expect((await api(s, 'GET', '/readyz', undefined, { token: null })).text).toBe('ok');
    for (const path of ['/readyz/ping', '/readyz/informer-sync', '/livez/etcd', '/healthz/log']) {
      const one = await api(s, 'GET', path, undefined, { token: null });
      expect({ path, status: one.status, text: one.text }).toEqual({ path, status: 200, text: 'ok' });
    }
    expect((await api(s, 'GET', '/readyz/nothing')).status).toBe(404);
    expect((await api(s, 'GET', '/livez/shutdown')).status).toBe(404);
  });

  it('serves aggregated discovery v2 and v2beta1 and the legacy documents', async () => {
    for (const v of ['v2', 'v2beta1']) {
      const accept = `application/json;g=apidiscovery.k8s.io;v=${v};as=APIGroupDiscoveryList,application/json`;
      const core = await api(s, 'GET', '/api', undefined, { accept });
      expect(core.headers['content-type']).toBe(
        `application/json;g=apidiscovery.k8s.io;v=${v};as=APIGroupDiscoveryList`,
      );
      expect(core.body.kind).toBe('APIGroupDiscoveryList');
      const coreRes = core.body.items[0].versions[0].resources.map((r: { resource: string }) => r.resource);
      expect(coreRes).toEqual(
        expect.arrayContaining([
          'persistentvolumes',
          'persistentvolumeclaims',
          'pods',
          'namespaces',
          'events',
          'nodes',
          'secrets',
          'configmaps',
        ]),
      );
      const groups = await api(s, 'GET', '/apis', undefined, { accept });
      expect(groups.body.items.map((g: { metadata: { name: string } }) => g.metadata.name)).toEqual(
        expect.arrayContaining(['storage.k8s.io', 'coordination.k8s.io']),
      );
    }
    const legacy = await api(s, 'GET', '/apis/storage.k8s.io/v1');
    expect(legacy.body.resources.map((r: { name: string }) => r.name)).toEqual(
      expect.arrayContaining([
        'storageclasses',
        'csidrivers',
        'csinodes',
        'volumeattachments',
        'volumeattachments/status',
        'csistoragecapacities',
      ]),
    );
    expect((await api(s, 'GET', '/api')).body.versions).toEqual(['v1']);
    expect((await api(s, 'GET', '/apis/nothing.example.com/v1')).status).toBe(404);
  });

  it('creates a PV with Kubernetes defaults, the protection finalizer and phase Pending', async () => {
    const r = await api(s, 'POST', '/api/v1/persistentvolumes', pv('pv-defaults'));
    expect(r.status).toBe(201);
    expect(r.body.spec.persistentVolumeReclaimPolicy).toBe('Retain');
    expect(r.body.spec.volumeMode).toBe('Filesystem');
    expect(r.body.metadata.finalizers).toEqual(['kubernetes.io/pv-protection']);
    expect(r.body.status.phase).toBe('Pending');
    expect(r.body.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number(r.body.metadata.resourceVersion)).toBeGreaterThan(0);
    const again = await api(s, 'POST', '/api/v1/persistentvolumes', pv('pv-defaults'));
    expect(again.status).toBe(409);
    expect(again.body.reason).toBe('AlreadyExists');
    expect(again.body.message).toBe('persistentvolumes "pv-defaults" already exists');
  });

  it('rejects an invalid PV with 422 naming the field, and writes nothing', async () => {
    const bad = pv('pv-bad');
    delete (bad.spec as Record<string, unknown>).capacity;
    (bad.spec as Record<string, unknown>).accessModes = ['ReadWriteSometimes'];
    const r = await api(s, 'POST', '/api/v1/persistentvolumes', bad);
    expect(r.status).toBe(422);
    expect(r.body.reason).toBe('Invalid');
    const fields = r.body.details.causes.map((c: { field: string }) => c.field);
    expect(fields).toContain('spec.capacity');
    expect(fields.some((f: string) => f.startsWith('spec.accessModes'))).toBe(true);
    expect(r.body.message).toMatch(/^PersistentVolume "pv-bad" is invalid: /);
    expect((await api(s, 'GET', '/api/v1/persistentvolumes/pv-bad')).status).toBe(404);
  });

  it('rejects unknown fields with fieldValidation=Strict, warns and drops them otherwise', async () => {
    const body = pv('pv-unknown', { bogus: true });
    const strict = await api(s, 'POST', '/api/v1/persistentvolumes?fieldValidation=Strict', body);
    expect(strict.status).toBe(400);
    expect(strict.body.message).toContain('unknown field "spec.bogus"');
    const warn = await api(s, 'POST', '/api/v1/persistentvolumes', body);
    expect(warn.status).toBe(201);
    expect(String(warn.headers.warning)).toContain('unknown field \\"spec.bogus\\"');
    expect(warn.body.spec.bogus).toBeUndefined();
  });

  it('updates with optimistic concurrency: a stale resourceVersion is a 409 Conflict', async () => {
    const c = (await api(s, 'POST', '/api/v1/persistentvolumes', pv('pv-cas'))).body;
    const up1 = { ...c, metadata: { ...c.metadata, labels: { a: '1' } } };
    const r1 = await api(s, 'PUT', '/api/v1/persistentvolumes/pv-cas', up1);
    expect(r1.status).toBe(200);
    expect(r1.body.metadata.resourceVersion).not.toBe(c.metadata.resourceVersion);
    const r2 = await api(s, 'PUT', '/api/v1/persistentvolumes/pv-cas', {
      ...c,
      metadata: { ...c.metadata, labels: { a: '2' } },
    });
    expect(r2.status).toBe(409);
    expect(r2.body.reason).toBe('Conflict');
    expect(r2.body.message).toContain('the object has been modified');
    // A no-op update does not bump the resourceVersion.
    const r3 = await api(s, 'PUT', '/api/v1/persistentvolumes/pv-cas', r1.body);
    expect(r3.body.metadata.resourceVersion).toBe(r1.body.metadata.resourceVersion);
  });

  it('ignores status on the main resource and spec on /status', async () => {
    const c = (await api(s, 'POST', '/api/v1/persistentvolumes', pv('pv-status'))).body;
    const main = await api(
      s,
      'PATCH',
      '/api/v1/persistentvolumes/pv-status',
      { status: { phase: 'Bound' }, metadata: { labels: { x: 'y' } } },
      { contentType: 'application/merge-patch+json' },
    );
    expect(main.status).toBe(200);
    expect(main.body.status.phase).toBe('Pending');
    expect(main.body.metadata.labels.x).toBe('y');
    const st = await api(
      s,
      'PATCH',
      '/api/v1/persistentvolumes/pv-status/status',
      { status: { phase: 'Available' }, spec: { persistentVolumeReclaimPolicy: 'Delete' } },
      { contentType: 'application/merge-patch+json' },
    );
    expect(st.status).toBe(200);
    expect(st.body.status.phase).toBe('Available');
    expect(st.body.spec.persistentVolumeReclaimPolicy).toBe(c.spec.persistentVolumeReclaimPolicy);
  });

  it('applies json, merge and strategic merge patches', async () => {
    await api(s, 'POST', '/api/v1/namespaces/default/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm1' },
      data: { a: '1' },
    });
    const j = await api(
      s,
      'PATCH',
      '/api/v1/namespaces/default/configmaps/cm1',
      [{ op: 'add', path: '/data/b', value: '2' }],
      { contentType: 'application/json-patch+json' },
    );
    expect(j.body.data).toEqual({ a: '1', b: '2' });
    const m = await api(
      s,
      'PATCH',
      '/api/v1/namespaces/default/configmaps/cm1',
      { data: { a: null } },
      { contentType: 'application/merge-patch+json' },
    );
    expect(m.body.data).toEqual({ b: '2' });
    const sm = await api(
      s,
      'PATCH',
      '/api/v1/namespaces/default/configmaps/cm1',
      { metadata: { finalizers: ['x.io/one'] } },
      { contentType: 'application/strategic-merge-patch+json' },
    );
    expect(sm.body.metadata.finalizers).toEqual(['x.io/one']);
    const sm2 = await api(
      s,
      'PATCH',
      '/api/v1/namespaces/default/configmaps/cm1',
      { metadata: { finalizers: ['x.io/two'] } },
      { contentType: 'application/strategic-merge-patch+json' },
    );
    expect([...sm2.body.metadata.finalizers].sort()).toEqual(['x.io/one', 'x.io/two']);
    const bad = await api(
      s,
      'PATCH',
      '/api/v1/namespaces/default/configmaps/cm1',
      { data: {} },
      { contentType: 'text/plain' },
    );
    expect(bad.status).toBe(415);
    const missing = await api(
      s,
      'PATCH',
      '/api/v1/namespaces/default/configmaps/nope',
      { data: {} },
      { contentType: 'application/merge-patch+json' },
    );
    expect(missing.status).toBe(404);
    await api(
      s,
      'PATCH',
      '/api/v1/namespaces/default/configmaps/cm1',
      { metadata: { finalizers: null } },
      { contentType: 'application/merge-patch+json' },
    );
  });

  it('deletes through finalizers: deletionTimestamp first, gone when the last finalizer goes', async () => {
    await api(s, 'POST', '/api/v1/persistentvolumes', pv('pv-del'));
    const d = await api(s, 'DELETE', '/api/v1/persistentvolumes/pv-del', { propagationPolicy: 'Background' });
    expect(d.status).toBe(200);
    expect(d.body.metadata.deletionTimestamp).toBeTruthy();
    expect((await api(s, 'GET', '/api/v1/persistentvolumes/pv-del')).status).toBe(200);
    const p = await api(
      s,
      'PATCH',
      '/api/v1/persistentvolumes/pv-del',
      { metadata: { finalizers: null } },
      { contentType: 'application/merge-patch+json' },
    );
    expect(p.status).toBe(200);
    expect((await api(s, 'GET', '/api/v1/persistentvolumes/pv-del')).status).toBe(404);
    expect((await api(s, 'DELETE', '/api/v1/persistentvolumes/pv-del')).status).toBe(404);
  });

  it('counts requests by verb, resource and code on /metrics', async () => {
    await api(s, 'GET', '/api/v1/persistentvolumes');
    await api(s, 'GET', '/api/v1/persistentvolumes/nope');
    const m = (await api(s, 'GET', '/metrics')).text;
    expect(m).toMatch(
      /apiserver_request_total\{verb="LIST",group="",version="v1",resource="persistentvolumes",subresource="",code="200"\} [1-9]/,
    );
    expect(m).toMatch(
      /apiserver_request_total\{verb="GET",group="",version="v1",resource="persistentvolumes",subresource="",code="404"\} [1-9]/,
    );
  });

  it('deletes a pod on a node gracefully: due at now + grace, shortened by a later delete, gone at grace 0', async () => {
    await api(s, 'POST', '/api/v1/namespaces/default/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'graceful' },
      spec: { nodeName: 'n1', terminationGracePeriodSeconds: 60, containers: [{ name: 'c', image: 'busybox' }] },
    });
    const before = Date.now();
    const d1 = await api(s, 'DELETE', '/api/v1/namespaces/default/pods/graceful');
    expect(d1.body.metadata.deletionGracePeriodSeconds).toBe(60);
    const due = Date.parse(d1.body.metadata.deletionTimestamp);
    expect(due).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 59_000);
    // A longer grace period does not postpone it; a shorter one brings it forward.
    const d2 = await api(s, 'DELETE', '/api/v1/namespaces/default/pods/graceful?gracePeriodSeconds=120');
    expect(d2.body.metadata.deletionGracePeriodSeconds).toBe(60);
    const d3 = await api(s, 'DELETE', '/api/v1/namespaces/default/pods/graceful?gracePeriodSeconds=5');
    expect(d3.body.metadata.deletionGracePeriodSeconds).toBe(5);
    expect(Date.parse(d3.body.metadata.deletionTimestamp)).toBeLessThan(due);
    expect((await api(s, 'GET', '/api/v1/namespaces/default/pods/graceful')).status).toBe(200);
    await api(s, 'DELETE', '/api/v1/namespaces/default/pods/graceful?gracePeriodSeconds=0');
    expect((await api(s, 'GET', '/api/v1/namespaces/default/pods/graceful')).status).toBe(404);
  });

  it('serves Tables with the kind columns, and -o json style lists', async () => {
    const t = await api(s, 'GET', '/api/v1/persistentvolumes', undefined, { accept: TABLE });
    expect(t.body.kind).toBe('Table');
    const names = t.body.columnDefinitions.map((c: { name: string }) => c.name);
    expect(names.slice(0, 7)).toEqual([
      'Name',
      'Capacity',
      'Access Modes',
      'Reclaim Policy',
      'Status',
      'Claim',
      'StorageClass',
    ]);
    expect(t.body.rows.length).toBeGreaterThan(0);
    expect(t.body.rows[0].object.kind).toBe('PartialObjectMetadata');
    const l = await api(s, 'GET', '/api/v1/persistentvolumes');
    expect(l.body.kind).toBe('PersistentVolumeList');
    expect(l.body.apiVersion).toBe('v1');
    expect(l.body.items.every((i: { metadata: { resourceVersion: string } }) => i.metadata.resourceVersion)).toBe(true);
  });

  it('pages lists with limit and continue at a consistent revision', async () => {
    for (let i = 0; i < 7; i++)
      await api(s, 'POST', '/api/v1/namespaces/default/configmaps', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `page-${i}`, labels: { page: 'yes' } },
      });
    const seen: string[] = [];
    let cont = '';
    let first = true;
    let pages = 0;
    do {
      const r = await api(
        s,
        'GET',
        `/api/v1/namespaces/default/configmaps?labelSelector=page%3Dyes&limit=3${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`,
      );
      expect(r.status).toBe(200);
      seen.push(...r.body.items.map((i: { metadata: { name: string } }) => i.metadata.name));
      cont = r.body.metadata.continue ?? '';
      pages++;
      if (first) {
        // A write between pages must not show up in the later pages of this list.
        await api(s, 'POST', '/api/v1/namespaces/default/configmaps', {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'page-9', labels: { page: 'yes' } },
        });
        first = false;
      }
    } while (cont);
    expect(pages).toBe(3);
    expect(seen).toEqual(['page-0', 'page-1', 'page-2', 'page-3', 'page-4', 'page-5', 'page-6']);
    const bad = await api(s, 'GET', '/api/v1/namespaces/default/configmaps?continue=garbage');
    expect(bad.status).toBe(400);
  });

  it('filters by label and field selectors; unsupported fields are a 400', async () => {
    const r = await api(s, 'GET', '/api/v1/persistentvolumes?labelSelector=tier%20in%20(gold,silver)');
    expect(r.body.items.length).toBeGreaterThan(0);
    expect(
      r.body.items.every((i: { metadata: { labels: Record<string, string> } }) => i.metadata.labels.tier === 'gold'),
    ).toBe(true);
    const byName = await api(s, 'GET', '/api/v1/persistentvolumes?fieldSelector=metadata.name%3Dpv-cas');
    expect(byName.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(['pv-cas']);
    const bad = await api(s, 'GET', '/api/v1/persistentvolumes?fieldSelector=spec.nope%3Dx');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('field label not supported: spec.nope');
    const badLabel = await api(s, 'GET', '/api/v1/persistentvolumes?labelSelector=a%20in%20(');
    expect(badLabel.status).toBe(400);
  });

  it('watches: resumes from a resourceVersion and filters by selector', async () => {
    const created = (await api(s, 'POST', '/api/v1/namespaces/default/persistentvolumeclaims', pvc('w1'))).body;
    const rv = created.metadata.resourceVersion;
    const done = watchUntil(
      s,
      `/api/v1/namespaces/default/persistentvolumeclaims?watch=true&resourceVersion=${rv}&fieldSelector=metadata.name%3Dw1`,
      (evs) => evs.some((e) => e.type === 'DELETED'),
    );
    await api(
      s,
      'PATCH',
      '/api/v1/namespaces/default/persistentvolumeclaims/w1',
      { metadata: { labels: { x: '1' } } },
      { contentType: 'application/merge-patch+json' },
    );
    await api(s, 'POST', '/api/v1/namespaces/default/persistentvolumeclaims', pvc('w2'));
    await api(
      s,
      'PATCH',
      '/api/v1/namespaces/default/persistentvolumeclaims/w1',
      { metadata: { finalizers: null } },
      { contentType: 'application/merge-patch+json' },
    );
    await api(s, 'DELETE', '/api/v1/namespaces/default/persistentvolumeclaims/w1');
    const evs = await done;
    expect(evs.map((e) => e.type)).toEqual(['MODIFIED', 'MODIFIED', 'DELETED']);
    expect(evs.every((e) => e.object.metadata.name === 'w1')).toBe(true);
    // From "0": the current state first, as ADDED.
    const initial = await watchUntil(
      s,
      '/api/v1/namespaces/default/persistentvolumeclaims?watch=true&resourceVersion=0',
      (e) => e.length >= 1,
    );
    expect(initial[0].type).toBe('ADDED');
    expect(initial[0].object.metadata.name).toBe('w2');
  });

  it('sends a 410 Expired ERROR event for a watch older than the retained history', async () => {
    const small = await startTestApiServer({ watchCacheHistory: 2, controllers: false });
    try {
      const first = (await api(small, 'POST', '/api/v1/persistentvolumes', pv('old'))).body;
      for (const v of ['a', 'b', 'c'])
        await api(
          small,
          'PATCH',
          '/api/v1/persistentvolumes/old',
          { metadata: { labels: { v } } },
          { contentType: 'application/merge-patch+json' },
        );
      const evs = await watchUntil(
        small,
        `/api/v1/persistentvolumes?watch=true&resourceVersion=${first.metadata.resourceVersion}`,
        (e) => e.length >= 1,
      );
      expect(evs[0].type).toBe('ERROR');
      expect(evs[0].object.code).toBe(410);
      expect(evs[0].object.reason).toBe('Expired');
      // Within the retained history a watch resumes with the events after its revision.
      const cur = (await api(small, 'GET', '/api/v1/persistentvolumes/old')).body;
      const recent = await watchUntil(
        small,
        `/api/v1/persistentvolumes?watch=true&resourceVersion=${Number(cur.metadata.resourceVersion) - 1}`,
        (e) => e.length >= 1,
      );
      expect(recent[0].type).toBe('MODIFIED');
      expect(recent[0].object.metadata.labels.v).toBe('c');
    } finally {
      await small.close();
    }
  });

  it('refuses objects in missing namespaces, and generates names', async () => {
    const r = await api(s, 'POST', '/api/v1/namespaces/missing/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'x' },
    });
    expect(r.status).toBe(404);
    expect(r.body.message).toBe('namespaces "missing" not found');
    const g = await api(s, 'POST', '/api/v1/namespaces/default/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { generateName: 'gen-' },
    });
    expect(g.status).toBe(201);
    expect(g.body.metadata.name).toMatch(/^gen-[a-z0-9]{5}$/);
  });

  it('does not persist dryRun=All writes', async () => {
    const r = await api(s, 'POST', '/api/v1/persistentvolumes?dryRun=All', pv('pv-dry'));
    expect(r.status).toBe(201);
    expect(r.body.spec.persistentVolumeReclaimPolicy).toBe('Retain');
    expect((await api(s, 'GET', '/api/v1/persistentvolumes/pv-dry')).status).toBe(404);
  });

  it('deleting a namespace removes its objects, then the namespace', async () => {
    await api(s, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } });
    await api(s, 'POST', '/api/v1/namespaces/doomed/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c' },
    });
    await api(s, 'POST', '/api/v1/namespaces/doomed/persistentvolumeclaims', pvc('c'));
    const d = await api(s, 'DELETE', '/api/v1/namespaces/doomed');
    expect(d.status).toBe(200);
    expect(d.body.status.phase).toBe('Terminating');
    const refused = await api(s, 'POST', '/api/v1/namespaces/doomed/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'late' },
    });
    expect(refused.status).toBe(403);
    // The PVC keeps the namespace until its protection finalizer goes.
    await expect.poll(async () => (await api(s, 'GET', '/api/v1/namespaces/doomed/configmaps/c')).status).toBe(404);
    await api(
      s,
      'PATCH',
      '/api/v1/namespaces/doomed/persistentvolumeclaims/c',
      { metadata: { finalizers: null } },
      { contentType: 'application/merge-patch+json' },
    );
    await expect
      .poll(async () => (await api(s, 'GET', '/api/v1/namespaces/doomed')).status, { timeout: 10_000 })
      .toBe(404);
  });
});

describe('API server restart', () => {
  it('keeps every object across a restart on the same data dir', async () => {
    const first = await startTestApiServer({ keepData: true, controllers: false });
    const dataDir = first.dataDir;
    try {
      await api(first, 'POST', '/api/v1/persistentvolumes', pv('survivor'));
      const before = (await api(first, 'GET', '/api/v1/persistentvolumes/survivor')).body;
      await first.close();
      const second = await startTestApiServer({ dataDir, controllers: false });
      try {
        const after = await api(second, 'GET', '/api/v1/persistentvolumes/survivor');
        expect(after.status).toBe(200);
        expect(after.body.metadata.uid).toBe(before.metadata.uid);
        expect(after.body.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
        expect(second.token).toBe(first.token);
      } finally {
        await second.close();
      }
    } finally {
      const { rmSync } = await import('node:fs');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('/openapi/v2', () => {
  let s: TestApiServer;
  beforeAll(async () => {
    s = await startTestApiServer({ controllers: false });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('answers kubectl with protobuf, others with JSON, and a matching If-None-Match with 304', async () => {
    const pb = await api(s, 'GET', '/openapi/v2', undefined, {
      accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf',
    });
    expect(pb.status).toBe(200);
    expect(pb.headers['content-type']).toBe('application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    // Document.swagger (field 1) = "2.0" comes first.
    expect(pb.text.startsWith('\n\u00032.0')).toBe(true);
    const json = await api(s, 'GET', '/openapi/v2');
    expect(json.headers['content-type']).toBe('application/json');
    expect(json.body.swagger).toBe('2.0');
    expect(
      json.body.definitions['io.k8s.api.core.v1.PersistentVolumeClaim']['x-kubernetes-group-version-kind'],
    ).toEqual([{ group: '', kind: 'PersistentVolumeClaim', version: 'v1' }]);
    expect(json.headers.etag).toBe(pb.headers.etag);
    const again = (
      await api(s, 'GET', '/openapi/v2', undefined, { headers: { 'If-None-Match': String(json.headers.etag) } })
    ).status;
    expect(again).toBe(304);
    expect((await api(s, 'GET', '/openapi/v2', undefined, { token: null })).status).toBe(401);
  });
});

describe('paths and media types', () => {
  let s: TestApiServer;
  beforeAll(async () => {
    s = await startTestApiServer({ controllers: false });
  });
  afterAll(async () => {
    await s?.close();
  });

  const NON_RESOURCE_PATHS = [
    '/version',
    '/healthz',
    '/livez',
    '/readyz',
    '/metrics',
    '/openapi/v2',
    '/openapi/v3',
    '/openapi/v3/api/v1',
    '/openapi/v3/apis/storage.k8s.io/v1',
    '/api',
    '/api/v1',
    '/apis',
    '/apis/storage.k8s.io',
    '/apis/storage.k8s.io/v1',
  ];

  it.each(NON_RESOURCE_PATHS)('%s: GET 200, other methods 405 with a Status', async (path) => {
    expect((await api(s, 'GET', path)).status).toBe(200);
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const r = await api(s, method, path, method === 'DELETE' ? undefined : {});
      expect({ method, status: r.status }).toEqual({ method, status: 405 });
      expect(r.body).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'the server does not allow this method on the requested resource',
        reason: 'MethodNotAllowed',
        code: 405,
      });
    }
  });

  it.each([
    '/nothing',
    '/api/v2',
    '/apis/nothing.example.com',
    '/apis/storage.k8s.io/v9',
    '/openapi/v3/apis/nothing/v1',
    '/version/x',
    '/api/v1/nothings',
  ])('%s: 404 with a Status, whatever the method', async (path) => {
    for (const method of ['GET', 'POST']) {
      const r = await api(s, method, path, method === 'POST' ? {} : undefined);
      expect({ method, status: r.status }).toEqual({ method, status: 404 });
      expect(r.body).toMatchObject({
        kind: 'Status',
        status: 'Failure',
        reason: 'NotFound',
        code: 404,
        message: 'the server could not find the requested resource',
        details: {},
      });
    }
  });

  it('answers a verb the kind does not declare with 405', async () => {
    const r = await api(s, 'DELETE', '/api/v1/namespaces');
    expect(r.status).toBe(405);
    expect(r.body).toMatchObject({ reason: 'MethodNotAllowed', code: 405 });
    expect((await api(s, 'GET', '/api/v1/namespaces/default')).status).toBe(200);
  });

  it('refuses a body in an unknown format with 415 and writes nothing', async () => {
    const r = await api(s, 'POST', '/api/v1/persistentvolumes', pv('media-text'), { contentType: 'text/plain' });
    expect(r.status).toBe(415);
    expect(r.body).toMatchObject({
      reason: 'UnsupportedMediaType',
      code: 415,
      message:
        'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf',
    });
    expect((await api(s, 'GET', '/api/v1/persistentvolumes/media-text')).status).toBe(404);
  });

  it('reads YAML bodies and answers YAML when asked', async () => {
    const yaml =
      'apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: media-yaml\nspec:\n  capacity: {storage: 1Gi}\n  accessModes: [ReadWriteOnce]\n  hostPath: {path: /tmp/media-yaml}\n';
    const created = await api(s, 'POST', '/api/v1/persistentvolumes', yaml, { contentType: 'application/yaml' });
    expect(created.status).toBe(201);
    expect(created.body.metadata.name).toBe('media-yaml');
    const got = await api(s, 'GET', '/api/v1/persistentvolumes/media-yaml', undefined, { accept: 'application/yaml' });
    expect(got.status).toBe(200);
    expect(got.headers['content-type']).toBe('application/yaml');
    expect(got.text).toContain('name: media-yaml\n');
  });

  it('answers an Accept it cannot produce with 406; protobuf alongside JSON gets JSON', async () => {
    const html = await api(s, 'GET', '/api/v1/persistentvolumes', undefined, { accept: 'text/html' });
    expect(html.status).toBe(406);
    expect(html.body).toMatchObject({
      reason: 'NotAcceptable',
      code: 406,
      message:
        '406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf',
    });
    const both = await api(s, 'GET', '/api/v1/persistentvolumes', undefined, {
      accept: 'application/vnd.kubernetes.protobuf, application/json',
    });
    expect(both.status).toBe(200);
    expect(both.headers['content-type']).toBe('application/json');
    expect(both.body.kind).toBe('PersistentVolumeList');
    const onlyProto = await api(s, 'GET', '/api/v1/persistentvolumes', undefined, {
      accept: 'application/vnd.kubernetes.protobuf',
    });
    expect(onlyProto.status).toBe(406);
    expect(onlyProto.body.message).toContain('application/json');
    // 406 comes before the body is looked at: nothing is written.
    const write = await api(s, 'POST', '/api/v1/persistentvolumes', pv('media-406'), { accept: 'text/html' });
    expect(write.status).toBe(406);
    expect((await api(s, 'GET', '/api/v1/persistentvolumes/media-406')).status).toBe(404);
    expect((await api(s, 'GET', '/apis', undefined, { accept: 'text/html' })).status).toBe(406);
  });
});
