/** The explain.stowage.io/v1alpha1 group: explanations served from the watch caches, authorized as reads of the object. */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from '../src/api/server.js';
import { ensureServingMaterial, kubeconfigYaml } from '../src/api/tls.js';
import { openSqliteStore } from '../src/store/sqlite.js';
import type { Store } from '../src/store/store.js';
import { BIN, built } from './helpers/env.js';
import { api, watchUntil, type Target } from './helpers/http.js';
import { processCsiTrace, type CsiCallInput } from '../src/csi/tracehub.js';

const X = '/apis/explain.stowage.io/v1alpha1';

describe('explain API', () => {
  let dir: string;
  let store: Store;
  let server: ApiServer;
  let admin: Target;
  let nobody: Target;
  let kubeconfig: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'stowage-explain-'));
    const pki = ensureServingMaterial(dir, ['127.0.0.1']);
    store = openSqliteStore({ path: ':memory:' });
    const tokens = new Map([
      [pki.adminToken, { name: 'admin', groups: ['system:masters'] }],
      ['nobody-token', { name: 'nobody', groups: [] }],
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
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      kubeconfigYaml({ server: server.url, caCertPem: pki.caCertPem, token: pki.adminToken, user: 'admin' }),
    );
    const pv = (name: string, cls: string) => ({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name },
      spec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteOnce'],
        storageClassName: cls,
        hostPath: { path: `/tmp/${name}` },
      },
    });
    for (const v of [pv('gold-1', 'gold'), pv('plain-1', '')]) {
      expect((await api(admin, 'POST', '/api/v1/persistentvolumes', v)).status).toBe(201);
      // No PV controller runs here: mark them Available as it would.
      const st = await api(
        admin,
        'PATCH',
        `/api/v1/persistentvolumes/${v.metadata.name}/status`,
        { status: { phase: 'Available' } },
        {
          contentType: 'application/merge-patch+json',
        },
      );
      expect(st.status).toBe(200);
    }
    const claim = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data', namespace: 'default' },
      spec: { accessModes: ['ReadWriteOnce'], storageClassName: '', resources: { requests: { storage: '5Gi' } } },
    };
    expect((await api(admin, 'POST', '/api/v1/namespaces/default/persistentvolumeclaims', claim)).status).toBe(201);
  });
  afterAll(async () => {
    await server?.close();
    await store?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('explains a Pending claim: each candidate volume and why it was refused', async () => {
    const r = await api(admin, 'GET', `${X}/namespaces/default/persistentvolumeclaims/data`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      apiVersion: 'explain.stowage.io/v1alpha1',
      kind: 'Explanation',
      target: { kind: 'PersistentVolumeClaim', namespace: 'default', name: 'data' },
      ready: false,
      summary: 'no persistent volumes available for this claim and no storage class is set',
    });
    expect(r.body.findings).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ code: 'storageClass', object: { kind: 'PersistentVolume', name: 'gold-1' } }),
        expect.objectContaining({
          code: 'tooSmall',
          message: 'volume plain-1: capacity 1Gi is smaller than the 5Gi requested',
        }),
      ]),
    );
  });

  it('explains a cluster-scoped volume', async () => {
    const r = await api(admin, 'GET', `${X}/persistentvolumes/plain-1`);
    expect(r.status).toBe(200);
    expect(r.body.findings).toContainEqual(expect.objectContaining({ code: 'tooSmall' }));
  });

  it('authorizes as a read of the object; 404 for what is missing or not explainable; 405 for writes', async () => {
    const denied = await api(nobody, 'GET', `${X}/namespaces/default/persistentvolumeclaims/data`);
    expect(denied.status).toBe(403);
    expect(denied.body.message).toContain(
      'cannot get resource "persistentvolumeclaims" in API group "" in the namespace "default"',
    );
    expect((await api(admin, 'GET', `${X}/namespaces/default/persistentvolumeclaims/nope`)).status).toBe(404);
    expect((await api(admin, 'GET', `${X}/namespaces/default/secrets/x`)).status).toBe(404);
    expect((await api(admin, 'GET', `${X}/persistentvolumeclaims/data`)).status).toBe(404);
    expect((await api(admin, 'DELETE', `${X}/persistentvolumes/plain-1`)).status).toBe(405);
    expect((await api(admin, 'GET', `${X}/persistentvolumes/plain-1`, undefined, { token: null })).status).toBe(401);
  });

  it.skipIf(!built)('stowage why prints sentences', async () => {
    const { stdout } = await promisify(execFile)(
      BIN,
      ['why', 'pvc/data', '-n', 'default', '--kubeconfig', kubeconfig],
      { timeout: 60_000 },
    );
    expect(stdout).toContain(
      'pvc/data in namespace default is Pending: no persistent volumes available for this claim and no storage class is set.',
    );
    expect(stdout).toContain('  - volume gold-1: class "gold" differs from the claim\'s no class');
    const bad = await promisify(execFile)(BIN, ['why', 'secret/x', '--kubeconfig', kubeconfig]).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(bad).toMatchObject({ code: 1, stderr: expect.stringContaining('expected pvc/NAME') });
  });

  describe('csicalls', () => {
    const C = `${X}/csicalls`;
    const rec = (o: Partial<CsiCallInput> & { method: string }) =>
      processCsiTrace.record({
        startMs: Date.now(),
        durationMs: 3,
        code: 'OK',
        driver: 'd.csi',
        caller: 'kubelet',
        request: {},
        ...o,
      });
    let claimUid = '';
    beforeAll(async () => {
      const pv = {
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: 'csi-1' },
        spec: {
          capacity: { storage: '1Gi' },
          accessModes: ['ReadWriteOnce'],
          csi: { driver: 'd.csi', volumeHandle: 'h-1' },
        },
      };
      expect((await api(admin, 'POST', '/api/v1/persistentvolumes', pv)).status).toBe(201);
      claimUid = (await api(admin, 'GET', '/api/v1/namespaces/default/persistentvolumeclaims/data')).body.metadata.uid;
      rec({
        method: '/csi.v1.Controller/CreateVolume',
        caller: 'csi-provisioner',
        request: { name: `pvc-${claimUid}`, secrets: { key: '***stripped***' } },
        volumeId: 'h-new',
        response: { volume: { volumeId: 'h-new' } },
      });
      rec({ method: '/csi.v1.Node/NodeStageVolume', volumeId: 'h-1', code: 'INTERNAL', error: 'mkfs failed' });
      rec({ method: '/csi.v1.Node/NodePublishVolume', volumeId: 'h-1' });
      rec({ method: '/csi.v1.Identity/Probe', driver: 'other.csi' });
    });
    const methods = async (q: string): Promise<string[]> => {
      const r = await api(admin, 'GET', `${C}${q}`);
      expect(r.status).toBe(200);
      return r.body.items.map((i: { method: string }) => i.method.split('/')[2]);
    };

    it.each([
      { q: '?pv=csi-1', want: ['NodeStageVolume', 'NodePublishVolume'] },
      { q: '?volume=h-1&failed=true', want: ['NodeStageVolume'] },
      { q: '?claim=data&namespace=default', want: ['CreateVolume'] },
      { q: '?driver=other.csi', want: ['Probe'] },
      { q: `?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`, want: [] },
    ])('lists by $q', async ({ q, want }) => {
      expect(await methods(q)).toEqual(want);
    });

    it('answers CSICall items with the request as recorded, and refuses bad queries and users', async () => {
      const r = await api(admin, 'GET', `${C}?claim=data&namespace=default`);
      expect(r.body).toMatchObject({ kind: 'CSICallList', apiVersion: 'explain.stowage.io/v1alpha1' });
      expect(r.body.items[0]).toMatchObject({
        kind: 'CSICall',
        caller: 'csi-provisioner',
        driver: 'd.csi',
        code: 'OK',
        volumeId: 'h-new',
        request: { name: `pvc-${claimUid}`, secrets: { key: '***stripped***' } },
        response: { volume: { volumeId: 'h-new' } },
      });
      expect((await api(admin, 'GET', `${C}?claim=data`)).status).toBe(400);
      expect((await api(admin, 'GET', `${C}?since=yesterday`)).status).toBe(400);
      const denied = await api(nobody, 'GET', C);
      expect(denied.status).toBe(403);
      expect(denied.body.message).toContain('cannot list resource "csicalls" in API group "explain.stowage.io"');
    });

    it('streams calls live as watch events, the kept ones first', async () => {
      let recorded = false;
      const events = await watchUntil(
        admin,
        `${C}?watch=true&volume=h-1&failed=true`,
        (evs) => {
          if (evs.length === 1 && !recorded) {
            recorded = true;
            rec({ method: '/csi.v1.Node/NodePublishVolume', volumeId: 'h-1' }); // not failed: filtered out
            rec({ method: '/csi.v1.Node/NodeUnstageVolume', volumeId: 'h-1', code: 'DEADLINE_EXCEEDED' });
          }
          return evs.length >= 2;
        },
        { timeoutMs: 30_000 },
      );
      expect(events.map((e: { type: string; object: { method: string } }) => [e.type, e.object.method])).toEqual([
        ['ADDED', '/csi.v1.Node/NodeStageVolume'],
        ['ADDED', '/csi.v1.Node/NodeUnstageVolume'],
      ]);
    });
  });
});
