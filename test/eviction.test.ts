import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../src/cli/testing.test-kit.js';
import { hasKubectl } from './helpers/env.js';
import { api } from './helpers/http.js';

const run = promisify(execFile);

/** Eviction through pods/eviction honouring PodDisruptionBudgets, and kubectl drain on it. */
describe('eviction and disruption budgets', () => {
  let s: TestApiServer;
  beforeAll(async () => {
    s = await startTestApiServer({ controllers: true, scheduler: false, attachDetach: false });
  });
  afterAll(async () => {
    await s?.close();
  });

  const ns = (n: string) => `/api/v1/namespaces/${n}`;
  async function namespace(name: string): Promise<void> {
    expect(
      (await api(s, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } })).status,
    ).toBe(201);
  }
  /** A running, ready pod on `node` labelled app=web. */
  async function readyPod(n: string, name: string, node: string): Promise<void> {
    const c = await api(s, 'POST', `${ns(n)}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels: { app: 'web' } },
      spec: { nodeName: node, containers: [{ name: 'c', image: 'busybox' }] },
    });
    expect(c.status).toBe(201);
    const st = await api(
      s,
      'PATCH',
      `${ns(n)}/pods/${name}/status`,
      { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } },
      { contentType: 'application/merge-patch+json' },
    );
    expect(st.status).toBe(200);
  }
  async function budget(n: string, spec: Record<string, unknown>): Promise<void> {
    const r = await api(s, 'POST', `/apis/policy/v1/namespaces/${n}/poddisruptionbudgets`, {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'web' },
      spec: { selector: { matchLabels: { app: 'web' } }, ...spec },
    });
    expect(r.status).toBe(201);
  }
  const status = async (n: string) =>
    (await api(s, 'GET', `/apis/policy/v1/namespaces/${n}/poddisruptionbudgets/web`)).body.status;
  const evict = (n: string, pod: string, grace?: number) =>
    api(s, 'POST', `${ns(n)}/pods/${pod}/eviction`, {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: pod },
      ...(grace === undefined ? {} : { deleteOptions: { gracePeriodSeconds: grace } }),
    });

  it('computes budget status from the matching pods, and validates budgets', async () => {
    await namespace('pdb-status');
    await readyPod('pdb-status', 'a', 'n1');
    await readyPod('pdb-status', 'b', 'n1');
    await budget('pdb-status', { minAvailable: 1 });
    await expect
      .poll(() => status('pdb-status'), { timeout: 15_000 })
      .toMatchObject({
        expectedPods: 2,
        currentHealthy: 2,
        desiredHealthy: 1,
        disruptionsAllowed: 1,
        observedGeneration: 1,
      });
    expect((await status('pdb-status')).conditions).toMatchObject([
      { type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods' },
    ]);
    const both = await api(s, 'POST', '/apis/policy/v1/namespaces/pdb-status/poddisruptionbudgets', {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'both' },
      spec: { minAvailable: 1, maxUnavailable: '150%' },
    });
    expect(both.status).toBe(422);
    expect(both.body.details.causes.map((c: { field: string }) => c.field)).toEqual(['spec', 'spec.maxUnavailable']);
    const table = await api(s, 'GET', '/apis/policy/v1/namespaces/pdb-status/poddisruptionbudgets', undefined, {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
    });
    expect(table.body.columnDefinitions.map((c: { name: string }) => c.name)).toEqual([
      'Name',
      'Min Available',
      'Max Unavailable',
      'Allowed Disruptions',
      'Age',
    ]);
    expect(table.body.rows[0].cells.slice(0, 4)).toEqual(['web', '1', 'N/A', 1]);
  });

  it('evicts while the budget allows, spending it, and refuses with 429 once it does not', async () => {
    await namespace('pdb-evict');
    await readyPod('pdb-evict', 'a', 'n1');
    await readyPod('pdb-evict', 'b', 'n1');
    await budget('pdb-evict', { maxUnavailable: 1 });
    await expect.poll(async () => (await status('pdb-evict'))?.disruptionsAllowed, { timeout: 15_000 }).toBe(1);
    const ok = await evict('pdb-evict', 'a', 0);
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ kind: 'Status', status: 'Success' });
    expect((await api(s, 'GET', `${ns('pdb-evict')}/pods/a`)).status).toBe(404);
    const after = await status('pdb-evict');
    expect(after.disruptionsAllowed).toBe(0);
    expect(Object.keys(after.disruptedPods ?? {})).toEqual(['a']);
    const refused = await evict('pdb-evict', 'b');
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({
      reason: 'TooManyRequests',
      message: "Cannot evict pod as it would violate the pod's disruption budget.",
      details: {
        causes: [
          { reason: 'DisruptionBudget', message: 'The disruption budget web needs 1 healthy pods and has 1 currently' },
        ],
      },
    });
    expect((await api(s, 'GET', `${ns('pdb-evict')}/pods/b`)).status).toBe(200);
  });

  it('evicts a pod no budget covers', async () => {
    await namespace('pdb-none');
    await readyPod('pdb-none', 'solo', 'n1');
    expect((await evict('pdb-none', 'solo', 0)).status).toBe(201);
    expect((await api(s, 'GET', `${ns('pdb-none')}/pods/solo`)).status).toBe(404);
  });

  it.skipIf(!hasKubectl)('kubectl drain evicts the budgeted pods of a node and waits for them', async () => {
    await namespace('pdb-drain');
    await api(s, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'drained' } });
    for (const p of ['d1', 'd2', 'd3']) await readyPod('pdb-drain', p, 'drained');
    await budget('pdb-drain', { minAvailable: 0 });
    await expect.poll(async () => (await status('pdb-drain'))?.disruptionsAllowed, { timeout: 15_000 }).toBe(3);
    const home = mkdtempSync(join(tmpdir(), 'stowage-drain-'));
    try {
      const r = await run(
        'kubectl',
        ['drain', 'drained', '--ignore-daemonsets', '--force', '--grace-period=0', '--timeout=60s'],
        { env: { ...process.env, KUBECONFIG: s.kubeconfigPath, HOME: home }, timeout: 90_000 },
      );
      for (const p of ['d1', 'd2', 'd3']) expect(r.stdout).toContain(`pod/${p} evicted`);
      expect(r.stdout).toContain('node/drained drained');
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
    expect((await api(s, 'GET', `${ns('pdb-drain')}/pods`)).body.items).toEqual([]);
    expect((await api(s, 'GET', '/api/v1/nodes/drained')).body.spec.unschedulable).toBe(true);
  });

  it.skipIf(!hasKubectl)(
    'kubectl drain retries an eviction the budget refuses, and finishes once the budget allows it',
    async () => {
      await namespace('pdb-wait');
      await api(s, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'held' } });
      await readyPod('pdb-wait', 'h1', 'held');
      await budget('pdb-wait', { minAvailable: 1 });
      await expect.poll(async () => (await status('pdb-wait'))?.expectedPods, { timeout: 15_000 }).toBe(1);
      const home = mkdtempSync(join(tmpdir(), 'stowage-drain-'));
      let out = '';
      const drain = run('kubectl', ['drain', 'held', '--force', '--grace-period=0', '--timeout=60s', '-v=6'], {
        env: { ...process.env, KUBECONFIG: s.kubeconfigPath, HOME: home },
        timeout: 90_000,
      });
      drain.child.stderr?.on('data', (b: Buffer) => (out += b.toString()));
      try {
        // kubectl got the budget's 429 and is retrying: the pod is still there.
        await expect.poll(() => /eviction 429/.test(out), { timeout: 30_000 }).toBe(true);
        expect((await api(s, 'GET', `${ns('pdb-wait')}/pods/h1`)).status).toBe(200);
        // Another ready pod elsewhere lets the budget spare one.
        await readyPod('pdb-wait', 'h2', 'other');
        const r = await drain;
        expect(r.stdout).toContain('pod/h1 evicted');
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
      expect((await api(s, 'GET', `${ns('pdb-wait')}/pods/h1`)).status).toBe(404);
      expect((await api(s, 'GET', `${ns('pdb-wait')}/pods/h2`)).status).toBe(200);
    },
  );
});
