import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../src/cli/testing.test-kit.js';
import { hasKubectl } from './helpers/env.js';
import { api } from './helpers/http.js';

const run = promisify(execFile);
/** The 1.27 binary beside the kubectl dispatcher (`kubectl.<minor>`), when the machine has one. */
const KUBECTL_127 = ((): string => {
  try {
    return join(dirname(realpathSync(execFileSync('which', ['kubectl'], { encoding: 'utf8' }).trim())), 'kubectl.1.27');
  } catch {
    return '';
  }
})();

/** Server-side apply and managedFields through the API and real kubectl; eviction dry runs. */
describe('server-side apply', () => {
  let s: TestApiServer;
  let home: string;
  beforeAll(async () => {
    s = await startTestApiServer({ controllers: false });
    home = mkdtempSync(join(tmpdir(), 'stowage-ssa-'));
  });
  afterAll(async () => {
    await s?.close();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  /** Runs kubectl with a manifest on stdin-free file; resolves with stdout, stderr and the exit code. */
  async function kubectl(
    args: readonly string[],
    manifest?: string,
  ): Promise<{ out: string; err: string; code: number }> {
    const file = join(home, 'manifest.yaml');
    if (manifest !== undefined) writeFileSync(file, manifest);
    try {
      const r = await run('kubectl', manifest === undefined ? [...args] : [...args, '-f', file], {
        env: { ...process.env, KUBECONFIG: s.kubeconfigPath, HOME: home },
        timeout: 60_000,
      });
      return { out: r.stdout, err: r.stderr, code: 0 };
    } catch (e) {
      const x = e as { stdout?: string; stderr?: string; code?: number };
      return { out: x.stdout ?? '', err: x.stderr ?? '', code: x.code ?? -1 };
    }
  }
  const configMap = (name: string, data: Record<string, string>): string =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: default\ndata:\n${Object.entries(data)
      .map(([k, v]) => `  ${k}: "${v}"`)
      .join('\n')}\n`;
  const get = async (path: string) => (await api(s, 'GET', path)).body;
  const managers = (o: { metadata: { managedFields?: Array<{ manager: string; operation: string }> } }) =>
    (o.metadata.managedFields ?? []).map((e) => `${e.manager}/${e.operation}`);

  it('creates on apply, needs a field manager, and keeps managedFields out of Table rows', async () => {
    const path = '/api/v1/namespaces/default/configmaps/api';
    const body = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: api\ndata:\n  a: "1"\n';
    const missing = await api(s, 'PATCH', path, body, { contentType: 'application/apply-patch+yaml' });
    expect(missing.status).toBe(422);
    expect(missing.body.message).toBe(
      'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
    );
    const long = await api(s, 'PATCH', `${path}?fieldManager=${'m'.repeat(129)}`, body, {
      contentType: 'application/apply-patch+yaml',
    });
    expect(long.status).toBe(422);
    expect(long.body.message).toBe(
      'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes',
    );
    const created = await api(s, 'PATCH', `${path}?fieldManager=tool`, body, {
      contentType: 'application/apply-patch+yaml',
    });
    expect(created.status).toBe(201);
    expect(created.body.metadata.managedFields).toMatchObject([
      {
        manager: 'tool',
        operation: 'Apply',
        apiVersion: 'v1',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { 'f:a': {} } },
      },
    ]);
    const wrong = await api(s, 'PATCH', `${path}?fieldManager=tool`, body.replace('v1', 'v2'), {
      contentType: 'application/apply-patch+yaml',
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toBe(
      'Incorrect version specified in apply patch. Specified patch version: v2, expected: v1',
    );
    // A configuration the schema cannot type: kube's 500 from structured-merge-diff, whatever fieldValidation says.
    const untyped = await api(
      s,
      'PATCH',
      '/api/v1/namespaces/default/pods/x?fieldManager=tool&fieldValidation=Ignore',
      'apiVersion: v1\nkind: Pod\nmetadata: {name: x, namespace: default}\nspec: {containers: [{name: c, image: i, bogus: 1}]}\n',
      { contentType: 'application/apply-patch+yaml' },
    );
    expect(untyped.status).toBe(500);
    expect(untyped.body.message).toBe(
      'failed to create typed patch object (default/x; /v1, Kind=Pod): .spec.containers[name="c"].bogus: field not declared in schema',
    );
    // An ordinary write is an Update by the User-Agent's product name.
    const upd = await api(
      s,
      'PATCH',
      path,
      { data: { b: '2' } },
      { contentType: 'application/merge-patch+json', headers: { 'User-Agent': 'my-controller/v1.2 (linux)' } },
    );
    expect(managers(upd.body)).toEqual(['tool/Apply', 'my-controller/Update']);
    const table = await api(s, 'GET', '/api/v1/namespaces/default/configmaps', undefined, {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
    });
    const row = table.body.rows.find(
      (r: { object: { metadata: { name: string } } }) => r.object.metadata.name === 'api',
    );
    expect(row.object.metadata.managedFields).toBeUndefined();
  });

  it.skipIf(!hasKubectl)('kubectl apply --server-side: two managers, a conflict, --force-conflicts, diff', async () => {
    expect((await kubectl(['apply', '--server-side'], configMap('shared', { a: '1', b: '2' }))).code).toBe(0);
    expect(
      (await kubectl(['apply', '--server-side', '--field-manager=other'], configMap('shared', { c: '3' }))).code,
    ).toBe(0);
    let cm = await get('/api/v1/namespaces/default/configmaps/shared');
    expect(cm.data).toEqual({ a: '1', b: '2', c: '3' });
    expect(managers(cm)).toEqual(['kubectl/Apply', 'other/Apply']);

    const refused = await kubectl(
      ['apply', '--server-side', '--field-manager=other'],
      configMap('shared', { a: '9', c: '3' }),
    );
    expect(refused.code).not.toBe(0);
    expect(refused.err).toContain('Apply failed with 1 conflict: conflict with "kubectl": .data.a');

    const diff = await kubectl(['diff', '--server-side'], configMap('shared', { a: '1', b: '5' }));
    expect(diff.code).toBe(1); // differences found
    expect(diff.out).toMatch(/-\s+b: "2"\n\+\s+b: "5"/);
    expect((await get('/api/v1/namespaces/default/configmaps/shared')).data.b).toBe('2');

    expect(
      (
        await kubectl(
          ['apply', '--server-side', '--field-manager=other', '--force-conflicts'],
          configMap('shared', { a: '9', c: '3' }),
        )
      ).code,
    ).toBe(0);
    // kubectl stops applying `a` (now other's) and `b` (its alone): b goes, a stays.
    expect((await kubectl(['apply', '--server-side'], configMap('shared', {}))).code).toBe(0);
    cm = await get('/api/v1/namespaces/default/configmaps/shared');
    expect(cm.data).toEqual({ a: '9', c: '3' });
    expect(managers(cm)).toEqual(['other/Apply']);
  });

  it.skipIf(!hasKubectl)(
    'fields set by admission (pvc-protection, the default class) are no manager’s; a later applier takes them without conflict',
    async () => {
      const cls =
        'apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: ssa-default\n  annotations:\n    storageclass.kubernetes.io/is-default-class: "true"\nprovisioner: example.com/none\n';
      expect((await kubectl(['create'], cls)).code).toBe(0);
      const claim = (extra: string): string =>
        `apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: adm\n  namespace: default\nspec:\n  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: 1Gi\n${extra}`;
      expect((await kubectl(['create'], claim(''))).code).toBe(0);
      type Entry = {
        manager: string;
        operation: string;
        fieldsV1: { 'f:metadata'?: Record<string, unknown>; 'f:spec'?: Record<string, unknown> };
      };
      const show = async () => {
        const r = await kubectl(['get', 'pvc', 'adm', '-n', 'default', '-o', 'json', '--show-managed-fields']);
        expect(r.code).toBe(0);
        return JSON.parse(r.out) as {
          metadata: { finalizers?: string[]; managedFields: Entry[] };
          spec: { storageClassName?: string };
        };
      };
      let pvc = await show();
      expect(pvc.metadata.finalizers).toEqual(['kubernetes.io/pvc-protection']);
      expect(pvc.spec.storageClassName).toBe('ssa-default');
      expect(pvc.metadata.managedFields.map((e) => `${e.manager}/${e.operation}`)).toEqual(['kubectl-create/Update']);
      const created = pvc.metadata.managedFields[0]!.fieldsV1;
      expect(created['f:metadata']?.['f:finalizers']).toBeUndefined();
      expect(created['f:spec']).toMatchObject({ 'f:accessModes': {}, 'f:volumeMode': {} });
      expect(created['f:spec']?.['f:storageClassName']).toBeUndefined();

      // A GitOps tool declaring the class it got becomes its owner, with no conflict and no --force-conflicts.
      const applied = await kubectl(
        ['apply', '--server-side', '--field-manager=gitops'],
        claim('  storageClassName: ssa-default\n'),
      );
      expect(applied.err).toBe('');
      expect(applied.code).toBe(0);
      pvc = await show();
      const byManager = Object.fromEntries(
        pvc.metadata.managedFields.map((e) => [`${e.manager}/${e.operation}`, e.fieldsV1]),
      );
      expect(Object.keys(byManager).sort()).toEqual(['gitops/Apply', 'kubectl-create/Update']);
      expect(byManager['gitops/Apply']?.['f:spec']).toHaveProperty('f:storageClassName');
      expect(byManager['kubectl-create/Update']?.['f:spec']).not.toHaveProperty('f:storageClassName');
      expect(pvc.metadata.finalizers).toEqual(['kubernetes.io/pvc-protection']);
      expect(pvc.metadata.managedFields.some((e) => e.fieldsV1['f:metadata']?.['f:finalizers'] !== undefined)).toBe(
        false,
      );
      expect((await kubectl(['delete', 'storageclass', 'ssa-default'])).code).toBe(0);
    },
  );

  it.skipIf(!hasKubectl)(
    'switching from client-side to server-side apply prunes a field removed from the manifest',
    async () => {
      expect((await kubectl(['apply'], configMap('upgraded', { keep: '1', drop: '2' }))).code).toBe(0);
      expect(managers(await get('/api/v1/namespaces/default/configmaps/upgraded'))).toEqual([
        'kubectl-client-side-apply/Update',
      ]);
      const r = await kubectl(['apply', '--server-side'], configMap('upgraded', { keep: '1' }));
      expect(r.code).toBe(0);
      const cm = await get('/api/v1/namespaces/default/configmaps/upgraded');
      expect(cm.data).toEqual({ keep: '1' });
      expect(managers(cm)).not.toContain('kubectl-client-side-apply/Update');
      expect(JSON.parse(cm.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']).data).toEqual({
        keep: '1',
      });
    },
  );

  it('a write of <kind>/scale records its manager with subresource scale and takes spec.replicas from the applier', async () => {
    const deploy =
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: scaled\n  namespace: default\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {app: scaled}\n  template:\n    metadata:\n      labels: {app: scaled}\n    spec:\n      containers: [{name: c, image: busybox}]\n';
    const path = '/apis/apps/v1/namespaces/default/deployments/scaled';
    expect(
      (await api(s, 'PATCH', `${path}?fieldManager=tool`, deploy, { contentType: 'application/apply-patch+yaml' }))
        .status,
    ).toBe(201);
    const put = await api(s, 'PUT', `${path}/scale?fieldManager=scaler`, {
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata: { name: 'scaled', namespace: 'default' },
      spec: { replicas: 3 },
    });
    expect(put.status).toBe(200);
    const patched = await api(
      s,
      'PATCH',
      `${path}/scale?fieldManager=patcher`,
      { spec: { replicas: 4 } },
      { contentType: 'application/merge-patch+json' },
    );
    expect(patched.status).toBe(200);
    const d = await get(path);
    const entries = d.metadata.managedFields as Array<{
      manager: string;
      operation: string;
      apiVersion: string;
      subresource?: string;
      fieldsV1: { 'f:spec'?: Record<string, unknown> };
    }>;
    expect(entries.find((e) => e.manager === 'patcher')).toMatchObject({
      operation: 'Update',
      apiVersion: 'apps/v1',
      subresource: 'scale',
      fieldsV1: { 'f:spec': { 'f:replicas': {} } },
    });
    // The PUT's manager lost replicas to the PATCH, so it owns nothing and is gone.
    expect(entries.find((e) => e.manager === 'scaler')).toBeUndefined();
    const applier = entries.find((e) => e.manager === 'tool')!;
    expect(applier.operation).toBe('Apply');
    expect(applier.fieldsV1['f:spec']).not.toHaveProperty('f:replicas');
  });

  it('answers SelfSubjectReview at v1beta1 too (kubectl 1.27 asks no other version)', async () => {
    const r = await api(s, 'POST', '/apis/authentication.k8s.io/v1beta1/selfsubjectreviews', {
      apiVersion: 'authentication.k8s.io/v1beta1',
      kind: 'SelfSubjectReview',
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      apiVersion: 'authentication.k8s.io/v1beta1',
      kind: 'SelfSubjectReview',
      status: { userInfo: { username: 'admin' } },
    });
    if (!KUBECTL_127 || !existsSync(KUBECTL_127)) return; // the dispatcher's 1.27 binary is optional
    const who = await run(KUBECTL_127, ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'], {
      env: { ...process.env, KUBECONFIG: s.kubeconfigPath, HOME: home },
    });
    expect(who.stdout).toBe('admin');
  });

  it('an eviction with dryRun neither spends the budget nor deletes the pod', async () => {
    await api(s, 'POST', '/api/v1/namespaces/default/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'kept', labels: { app: 'dry' } },
      spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }] },
    });
    const st = await api(
      s,
      'PATCH',
      '/api/v1/namespaces/default/pods/kept/status',
      { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } },
      { contentType: 'application/merge-patch+json' },
    );
    expect(st.status).toBe(200);
    const pdb = await api(s, 'POST', '/apis/policy/v1/namespaces/default/poddisruptionbudgets', {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'dry' },
      spec: { selector: { matchLabels: { app: 'dry' } }, maxUnavailable: 1 },
    });
    expect(pdb.status).toBe(201);
    // No disruption controller runs here: the budget's status is set by hand.
    const budgetStatus = {
      observedGeneration: 1,
      disruptionsAllowed: 1,
      currentHealthy: 1,
      desiredHealthy: 0,
      expectedPods: 1,
    };
    expect(
      (
        await api(s, 'PUT', '/apis/policy/v1/namespaces/default/poddisruptionbudgets/dry/status', {
          ...pdb.body,
          status: budgetStatus,
        })
      ).status,
    ).toBe(200);
    for (const [query, opts] of [
      ['?dryRun=All', {}],
      ['', { dryRun: ['All'] }],
    ] as const) {
      const r = await api(s, 'POST', `/api/v1/namespaces/default/pods/kept/eviction${query}`, {
        apiVersion: 'policy/v1',
        kind: 'Eviction',
        metadata: { name: 'kept' },
        deleteOptions: opts,
      });
      expect(r.status).toBe(201);
    }
    expect((await api(s, 'GET', '/api/v1/namespaces/default/pods/kept')).status).toBe(200);
    expect((await get('/apis/policy/v1/namespaces/default/poddisruptionbudgets/dry')).status.disruptionsAllowed).toBe(
      1,
    );
  });
});
