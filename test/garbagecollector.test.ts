/**
 * The garbage collector through the API server with the in-process controllers: background,
 * foreground (blockOwnerDeletion) and orphan deletion driven by `kubectl delete --cascade=`, a
 * cluster-scoped owner of a namespaced dependent, and owner uid checks.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import type { OwnerReference } from 'kubernetes-types/meta/v1.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../src/cli/testing.test-kit.js';
import { NotFoundError } from '../src/util/errors.js';
import { hasKubectl } from './helpers/env.js';
import { api } from './helpers/http.js';

const run = promisify(execFile);
const NS = 'default';
const WAIT = { timeout: 20_000, interval: 50 };

describe('garbage collector', () => {
  let s: TestApiServer;
  let home: string;
  const cms = () => s.plane.client.resource('ConfigMap');

  beforeAll(async () => {
    s = await startTestApiServer({ scheduler: false, attachDetach: false });
    home = mkdtempSync(join(tmpdir(), 'stowage-gc-'));
  });
  afterAll(async () => {
    await s?.close();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  const kubectl = async (...args: string[]): Promise<string> =>
    (await run('kubectl', args, { env: { ...process.env, KUBECONFIG: s.kubeconfigPath, HOME: home }, timeout: 60_000 }))
      .stdout;

  const refTo = (cm: ConfigMap, extra: Partial<OwnerReference> = {}): OwnerReference => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    name: cm.metadata!.name!,
    uid: cm.metadata!.uid!,
    ...extra,
  });
  const configMap = (name: string, ownerReferences?: OwnerReference[], finalizers?: string[]): Promise<ConfigMap> =>
    cms().create({ metadata: { name, namespace: NS, ownerReferences, finalizers } }, { namespace: NS });
  const gone = async (name: string): Promise<boolean> => {
    try {
      await cms().get(name, { namespace: NS });
      return false;
    } catch (e) {
      if (e instanceof NotFoundError) return true;
      throw e;
    }
  };
  const waitGone = (name: string): Promise<void> => vi.waitFor(async () => expect(await gone(name)).toBe(true), WAIT);

  it.skipIf(!hasKubectl)('kubectl delete --cascade=background deletes the dependents after the owner', async () => {
    const owner = await configMap('bg-owner');
    await configMap('bg-dep1', [refTo(owner)]);
    await configMap('bg-dep2', [refTo(owner, { controller: true })]);
    await kubectl('delete', 'configmap', 'bg-owner', '-n', NS, '--cascade=background');
    expect(await gone('bg-owner')).toBe(true);
    await waitGone('bg-dep1');
    await waitGone('bg-dep2');
  });

  it.skipIf(!hasKubectl)(
    'kubectl delete --cascade=foreground keeps the owner until its blocking dependents are gone',
    async () => {
      const owner = await configMap('fg-owner');
      // The held dependent stays (its own finalizer) after the collector deletes it: the owner must wait.
      await configMap('fg-held', [refTo(owner, { blockOwnerDeletion: true })], ['test.stowage.io/hold']);
      await configMap('fg-loose', [refTo(owner)]);
      await kubectl('delete', 'configmap', 'fg-owner', '-n', NS, '--cascade=foreground', '--wait=false');
      const deleting = await cms().get('fg-owner', { namespace: NS });
      expect(deleting.metadata?.deletionTimestamp).toBeDefined();
      expect(deleting.metadata?.finalizers).toContain('foregroundDeletion');
      await waitGone('fg-loose');
      await vi.waitFor(
        async () => expect((await cms().get('fg-held', { namespace: NS })).metadata?.deletionTimestamp).toBeDefined(),
        WAIT,
      );
      // Still blocked: the owner is there with its finalizer while the held dependent exists.
      expect((await cms().get('fg-owner', { namespace: NS })).metadata?.finalizers).toContain('foregroundDeletion');
      await cms().patch('fg-held', 'merge', { metadata: { finalizers: null } }, { namespace: NS });
      await waitGone('fg-held');
      await waitGone('fg-owner');
    },
  );

  it.skipIf(!hasKubectl)(
    'kubectl delete --cascade=orphan removes the owner and keeps the dependents without the reference',
    async () => {
      const owner = await configMap('or-owner');
      const other = await configMap('or-other');
      await configMap('or-dep', [refTo(owner), refTo(other)]);
      await kubectl('delete', 'configmap', 'or-owner', '-n', NS, '--cascade=orphan');
      await waitGone('or-owner');
      const dep = await cms().get('or-dep', { namespace: NS });
      expect(dep.metadata?.ownerReferences?.map((r) => r.name)).toEqual(['or-other']);
    },
  );

  it('deletes a namespaced dependent of a cluster-scoped owner once the owner is gone', async () => {
    const classes = s.plane.client.resource('StorageClass');
    const sc = await classes.create({ metadata: { name: 'gc-owner-class' }, provisioner: 'example.com/none' });
    const ref: OwnerReference = {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      name: 'gc-owner-class',
      uid: sc.metadata!.uid!,
    };
    await configMap('cs-dep', [ref]);
    // Resolved as cluster-scoped, the owner exists: a dangling second reference is dropped, the object kept.
    await configMap('cs-dep-kept', [
      ref,
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'cs-never', uid: 'f2d9c4f8-0000-4000-8000-000000000000' },
    ]);
    await vi.waitFor(
      async () =>
        expect(
          (await cms().get('cs-dep-kept', { namespace: NS })).metadata?.ownerReferences?.map((r) => r.kind),
        ).toEqual(['StorageClass']),
      WAIT,
    );
    expect(await gone('cs-dep')).toBe(false);
    await classes.delete('gc-owner-class');
    await waitGone('cs-dep');
    await waitGone('cs-dep-kept');
  });

  it('reports OwnerRefInvalidNamespace for an owner in another namespace and deletes the dependent', async () => {
    const nsApi = s.plane.client.resource('Namespace');
    await nsApi.create({ metadata: { name: 'gc-other' } });
    const elsewhere = await cms().create(
      { metadata: { name: 'xns-owner', namespace: 'gc-other' } },
      { namespace: 'gc-other' },
    );
    await configMap('xns-dep', [refTo(elsewhere)]);
    await waitGone('xns-dep');
    const events = s.plane.client.resource('Event');
    await vi.waitFor(async () => {
      const list = await events.list({ namespace: NS, fieldSelector: 'involvedObject.name=xns-dep' });
      expect(list.items.map((e) => `${e.type} ${e.reason}: ${e.message}`)).toContain(
        `Warning OwnerRefInvalidNamespace: ownerRef [v1/ConfigMap, namespace: default, name: xns-owner, uid: ${elsewhere.metadata!.uid}] does not exist in namespace "default"`,
      );
    }, WAIT);
    expect((await cms().get('xns-owner', { namespace: 'gc-other' })).metadata?.uid).toBe(elsewhere.metadata!.uid);
  });

  it('never deletes a cluster-scoped object naming a namespaced owner', async () => {
    const owner = await configMap('cluster-dep-owner');
    const classes = s.plane.client.resource('StorageClass');
    await classes.create({
      metadata: {
        name: 'gc-invalid-dep',
        ownerReferences: [refTo(owner, { uid: '7c1a0d6e-2222-4222-8222-222222222222' })],
      },
      provisioner: 'example.com/none',
    });
    const events = s.plane.client.resource('Event');
    await vi.waitFor(async () => {
      const list = await events.list({ namespace: NS, fieldSelector: 'involvedObject.name=gc-invalid-dep' });
      expect(list.items.map((e) => e.reason)).toContain('OwnerRefInvalidNamespace');
    }, WAIT);
    expect((await classes.get('gc-invalid-dep')).metadata?.deletionTimestamp).toBeUndefined();
    await classes.delete('gc-invalid-dep');
  });

  it('DeleteOptions: the deprecated orphanDependents sets the orphan finalizer; it cannot be combined with propagationPolicy', async () => {
    const target = { baseUrl: s.baseUrl, token: s.token, caPem: s.caPem };
    const owner = await configMap('od-owner');
    await configMap('od-dep', [refTo(owner)]);
    const both = await api(target, 'DELETE', `/api/v1/namespaces/${NS}/configmaps/od-owner`, {
      orphanDependents: true,
      propagationPolicy: 'Orphan',
    });
    expect(both.status).toBe(400);
    const dryRun = await api(target, 'DELETE', `/api/v1/namespaces/${NS}/configmaps/od-owner?dryRun=All`, {
      orphanDependents: true,
    });
    expect(dryRun.status).toBe(200);
    expect(dryRun.body.metadata.finalizers).toEqual(['orphan']);
    expect(await gone('od-owner')).toBe(false);
    await api(target, 'DELETE', `/api/v1/namespaces/${NS}/configmaps/od-owner`, { orphanDependents: true });
    await waitGone('od-owner');
    expect((await cms().get('od-dep', { namespace: NS })).metadata?.ownerReferences).toBeUndefined();
  });

  it('deletecollection applies the propagationPolicy to every object it deletes', async () => {
    const target = { baseUrl: s.baseUrl, token: s.token, caPem: s.caPem };
    const a = await cms().create(
      { metadata: { name: 'coll-a', namespace: NS, labels: { gc: 'coll' } } },
      { namespace: NS },
    );
    const b = await cms().create(
      { metadata: { name: 'coll-b', namespace: NS, labels: { gc: 'coll' } } },
      { namespace: NS },
    );
    await configMap('coll-dep', [refTo(a), refTo(b)]);
    const r = await api(
      target,
      'DELETE',
      `/api/v1/namespaces/${NS}/configmaps?labelSelector=gc%3Dcoll&propagationPolicy=Orphan`,
    );
    expect(r.status).toBe(200);
    await waitGone('coll-a');
    await waitGone('coll-b');
    await vi.waitFor(
      async () => expect((await cms().get('coll-dep', { namespace: NS })).metadata?.ownerReferences).toBeUndefined(),
      WAIT,
    );
  });

  it('treats an owner whose uid differs from the reference as absent', async () => {
    const live = await configMap('uid-owner');
    await configMap('uid-dep', [refTo(live, { uid: '0b5e3b9c-1111-4111-8111-111111111111' })]);
    await waitGone('uid-dep');
    expect(await gone('uid-owner')).toBe(false);
  });
});
