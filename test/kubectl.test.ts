import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { hasKubectl } from './helpers/env.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../src/cli/testing.test-kit.js';
import { api } from './helpers/http.js';

const run = promisify(execFile);

if (!hasKubectl) console.warn('kubectl end-to-end tests skipped: kubectl is not on PATH');

/**
 * Every kubectl minor in 1.27–1.33 installed beside the one on PATH (a version dispatcher ships
 * them as kubectl.1.NN); the plain `kubectl` when there are none.
 */
const kubectls = ((): string[] => {
  if (!hasKubectl) return ['kubectl'];
  const dirs = (process.env.PATH ?? '').split(delimiter).filter((d) => existsSync(join(d, 'kubectl')));
  const found = new Set<string>();
  for (const d of dirs) {
    const real = dirname(realpathSync(join(d, 'kubectl')));
    for (const dir of new Set([d, real])) {
      for (const f of readdirSync(dir)) if (/^kubectl\.1\.(2[7-9]|3[0-3])$/.test(f)) found.add(join(dir, f));
    }
    if (found.size > 0) break;
  }
  return found.size > 0 ? [...found].sort() : ['kubectl'];
})();

describe.skipIf(!hasKubectl).each(kubectls)('%s against the API server', (bin) => {
  let s: TestApiServer;
  let dir: string;
  const kubectl = async (...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> => {
    try {
      const r = await run(bin, args, {
        env: { ...process.env, KUBECONFIG: s.kubeconfigPath, HOME: dir },
        timeout: 60_000,
      });
      return { stdout: r.stdout, stderr: r.stderr, code: 0 };
    } catch (e) {
      const err = e as { stdout?: string; stderr?: string; code?: number };
      return { stdout: err.stdout ?? '', stderr: err.stderr ?? '', code: typeof err.code === 'number' ? err.code : 1 };
    }
  };
  const file = (name: string, text: string): string => {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  };

  beforeAll(async () => {
    s = await startTestApiServer({ controllers: false });
    dir = mkdtempSync(join(tmpdir(), 'stowage-kubectl-'));
  });
  afterAll(async () => {
    await s?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const pvYaml = (size: string, extra = ''): string => `apiVersion: v1
kind: PersistentVolume
metadata:
  name: kpv
  labels:
    app: demo
spec:
  capacity:
    storage: ${size}
  accessModes: [ReadWriteOnce]
  storageClassName: manual
  hostPath:
    path: /tmp/kpv
${extra}`;

  it('apply creates, and applies a change', async () => {
    const f = file('pv.yaml', pvYaml('1Gi'));
    const a = await kubectl('apply', '-f', f);
    expect(a.stderr).toBe('');
    expect(a.stdout.trim()).toBe('persistentvolume/kpv created');
    const b = await kubectl('apply', '-f', file('pv2.yaml', pvYaml('2Gi')));
    expect(b.stdout.trim()).toBe('persistentvolume/kpv configured');
    const c = await kubectl('apply', '-f', file('pv3.yaml', pvYaml('2Gi')));
    expect(c.stdout.trim()).toBe('persistentvolume/kpv unchanged');
    const got = await kubectl('get', 'pv', 'kpv', '-o', 'jsonpath={.spec.capacity.storage}');
    expect(got.stdout).toBe('2Gi');
  });

  it('get prints the PV columns; -o yaml prints the object', async () => {
    const g = await kubectl('get', 'pv');
    const header = g.stdout.split('\n')[0]!;
    for (const col of ['NAME', 'CAPACITY', 'ACCESS MODES', 'RECLAIM POLICY', 'STATUS', 'CLAIM', 'STORAGECLASS', 'AGE'])
      expect(header).toContain(col);
    expect(g.stdout).toMatch(/kpv\s+2Gi\s+RWO\s+Retain/);
    const y = await kubectl('get', 'pv', 'kpv', '-o', 'yaml');
    expect(y.stdout).toContain('kind: PersistentVolume');
    expect(y.stdout).toContain('persistentVolumeReclaimPolicy: Retain');
    expect(y.stdout).toContain('kubernetes.io/pv-protection');
  });

  it('rejects a YAML with an unknown field, and an invalid PV with the field named', async () => {
    const unknown = await kubectl(
      'apply',
      '-f',
      file('u.yaml', pvYaml('1Gi').replace('kpv', 'kpv-u').replace('  hostPath:', '  bogusField: 1\n  hostPath:')),
    );
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('unknown field "spec.bogusField"');
    const invalid = await kubectl(
      'create',
      '-f',
      file('i.yaml', pvYaml('1Gi').replace('kpv', 'kpv-i').replace('  accessModes: [ReadWriteOnce]\n', '')),
    );
    expect(invalid.code).not.toBe(0);
    expect(invalid.stderr).toContain('spec.accessModes');
    expect(invalid.stderr).toContain('is invalid');
  });

  it('patches with all three types and the status subresource; labels', async () => {
    expect(
      (await kubectl('patch', 'pv', 'kpv', '--type=merge', '-p', '{"metadata":{"annotations":{"m":"1"}}}')).stdout,
    ).toContain('patched');
    expect(
      (
        await kubectl(
          'patch',
          'pv',
          'kpv',
          '--type=json',
          '-p',
          '[{"op":"add","path":"/metadata/annotations/j","value":"2"}]',
        )
      ).stdout,
    ).toContain('patched');
    expect((await kubectl('patch', 'pv', 'kpv', '-p', '{"metadata":{"annotations":{"s":"3"}}}')).stdout).toContain(
      'patched',
    );
    const st = await kubectl(
      'patch',
      'pv',
      'kpv',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"phase":"Available"}}',
    );
    expect(st.stderr).toBe('');
    const lab = await kubectl('label', 'pv', 'kpv', 'tier=gold');
    expect(lab.stdout.trim()).toBe('persistentvolume/kpv labeled');
    const o = JSON.parse((await kubectl('get', 'pv', 'kpv', '-o', 'json')).stdout);
    expect(o.metadata.annotations).toMatchObject({ m: '1', j: '2', s: '3' });
    expect(o.metadata.labels.tier).toBe('gold');
    expect(o.status.phase).toBe('Available');
  });

  it('wait --for=jsonpath sees a field change', async () => {
    const waiting = kubectl('wait', 'pv/kpv', '--for=jsonpath={.status.phase}=Released', '--timeout=30s');
    await api(
      s,
      'PATCH',
      '/api/v1/persistentvolumes/kpv/status',
      { status: { phase: 'Released' } },
      { contentType: 'application/merge-patch+json' },
    );
    const w = await waiting;
    expect(w.code).toBe(0);
    expect(w.stdout).toContain('condition met');
  });

  it('get -w sees an update', async () => {
    const child = spawn(bin, ['get', 'pv', 'kpv', '-w', '--no-headers'], {
      env: { ...process.env, KUBECONFIG: s.kubeconfigPath, HOME: dir },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    await expect.poll(() => out.split('\n').filter(Boolean).length, { timeout: 15_000 }).toBeGreaterThanOrEqual(1);
    await api(
      s,
      'PATCH',
      '/api/v1/persistentvolumes/kpv/status',
      { status: { phase: 'Failed' } },
      { contentType: 'application/merge-patch+json' },
    );
    await expect.poll(() => out, { timeout: 15_000 }).toMatch(/kpv.*Failed/);
    child.kill();
  });

  it('describe pvc shows its events', async () => {
    await api(s, 'POST', '/api/v1/namespaces/default/persistentvolumeclaims', {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'kclaim' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: '' },
    });
    const claim = (await api(s, 'GET', '/api/v1/namespaces/default/persistentvolumeclaims/kclaim')).body;
    await api(s, 'POST', '/api/v1/namespaces/default/events', {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'kclaim.1' },
      involvedObject: {
        kind: 'PersistentVolumeClaim',
        namespace: 'default',
        name: 'kclaim',
        uid: claim.metadata.uid,
        apiVersion: 'v1',
      },
      reason: 'FailedBinding',
      message: 'no persistent volumes available for this claim and no storage class is set',
      type: 'Warning',
      source: { component: 'persistentvolume-controller' },
      firstTimestamp: new Date().toISOString(),
      lastTimestamp: new Date().toISOString(),
      count: 1,
    });
    const d = await kubectl('describe', 'pvc', 'kclaim');
    expect(d.stdout).toMatch(/Name:\s+kclaim/);
    expect(d.stdout).toMatch(/Status:\s+Pending/);
    expect(d.stdout).toContain('FailedBinding');
    expect(d.stdout).toContain('no persistent volumes available for this claim');
  });

  it('explain shows Quantity and IntOrString fields by their type names', async () => {
    const r = await kubectl('explain', 'pvc.spec.resources');
    expect(r.stdout).toMatch(/requests\t<map\[string\]Quantity>/);
    const p = await kubectl('explain', 'pod.spec.containers.livenessProbe.httpGet.port');
    expect(p.stdout).toContain('FIELD: port <IntOrString>');
  });

  it('debug: without pods/ephemeralcontainers kubectl says ephemeral containers are disabled (it does not crash)', async () => {
    const pod = file(
      'dbg.yaml',
      'apiVersion: v1\nkind: Pod\nmetadata: {name: dbg}\nspec: {containers: [{name: c, image: busybox:1}]}\n',
    );
    expect((await kubectl('apply', '-f', pod)).code).toBe(0);
    const r = await kubectl('debug', 'dbg', '--image=busybox:1');
    expect(r.stderr).not.toContain('panic');
    expect(r.stderr).toContain('ephemeral containers are disabled for this cluster');
    expect(r.code).toBe(1);
  });

  it('auth whoami and auth can-i (one check and --list) answer from the server', async () => {
    // kubectl 1.27 asks authentication.k8s.io v1alpha1 and v1beta1 only (v1 is GA from 1.28); Stowage serves v1.
    if (!bin.endsWith('kubectl.1.27')) {
      const who = await kubectl('auth', 'whoami');
      expect(who.stderr).toBe('');
      expect(who.stdout).toMatch(/Username\s+admin/);
      expect(who.stdout).toMatch(/Groups\s+\[system:masters system:authenticated\]/);
    }
    for (const args of [
      ['create', 'pods'],
      ['list', 'persistentvolumeclaims', '-n', 'kube-system'],
      ['create', 'pods', '--subresource=eviction'],
      ['get', '/metrics'],
    ]) {
      const r = await kubectl('auth', 'can-i', ...args);
      expect({ args, out: r.stdout.trim(), code: r.code }).toEqual({ args, out: 'yes', code: 0 });
    }
    const list = await kubectl('auth', 'can-i', '--list');
    expect(list.stdout).toMatch(/^\*\.\*\s+\[\]\s+\[\]\s+\[\*\]$/m);
    expect(list.stdout).toMatch(/selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]/);
  });

  it('delete waits while a finalizer holds the object, and returns once it is removed', async () => {
    // -v=6 logs each request kubectl makes: its watch on persistentvolumes is the sign that it has
    // looked after the DELETE, found the object still there, and is waiting (a kubectl that did not
    // wait would have exited before making it).
    const child = spawn(bin, ['delete', 'pv', 'kpv', '--timeout=30s', '-v=6'], {
      env: { ...process.env, KUBECONFIG: s.kubeconfigPath, HOME: dir },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    let settled = false;
    const exited = new Promise<number | null>((r) => child.once('close', (code) => r(code))).finally(
      () => (settled = true),
    );
    const watching = (): boolean => /\/api\/v1\/persistentvolumes\?\S*watch=true/.test(stderr);
    try {
      await expect.poll(() => settled || watching(), { timeout: 15_000 }).toBe(true);
      expect(settled).toBe(false);
      expect((await api(s, 'GET', '/api/v1/persistentvolumes/kpv')).body?.metadata?.deletionTimestamp).toBeTruthy();
      await api(
        s,
        'PATCH',
        '/api/v1/persistentvolumes/kpv',
        { metadata: { finalizers: null } },
        { contentType: 'application/merge-patch+json' },
      );
      expect(await exited).toBe(0);
      expect(stdout.trim()).toBe('persistentvolume "kpv" deleted');
    } finally {
      child.kill();
    }
  });
});
