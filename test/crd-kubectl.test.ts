/**
 * CustomResourceDefinitions through kubectl: the VolumeSnapshot CRDs (deploy/crds) and an example
 * API (test/fixtures/crds): apply, wait, get with short names and printer columns, describe,
 * explain, server-side apply, scale, status, edit, wait --for=jsonpath, delete.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../src/cli/testing.test-kit.js';
import { hasKubectl } from './helpers/env.js';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..');
/**
 * The kubectl on PATH (its dispatcher picks the server's minor) and, beside it, kubectl 1.27 — the
 * oldest, which validates from /openapi/v2 (protobuf) rather than v3. STOWAGE_CRD_KUBECTLS: a
 * comma-separated list instead.
 */
const KUBECTLS = ((): string[] => {
  if (process.env.STOWAGE_CRD_KUBECTLS) return process.env.STOWAGE_CRD_KUBECTLS.split(',');
  const onPath = (process.env.PATH ?? '').split(delimiter).find((d) => existsSync(join(d, 'kubectl')));
  if (!onPath) return ['kubectl'];
  const oldest = join(dirname(realpathSync(join(onPath, 'kubectl'))), 'kubectl.1.27');
  return existsSync(oldest) ? ['kubectl', oldest] : ['kubectl'];
})();

describe.skipIf(!hasKubectl).each(KUBECTLS)('CRDs through %s', (bin) => {
  let s: TestApiServer;
  let dir: string;
  const kubectl = async (
    args: string[],
    env: Record<string, string> = {},
  ): Promise<{ stdout: string; stderr: string; code: number }> => {
    try {
      const r = await run(bin, args, {
        env: { ...process.env, KUBECONFIG: s.kubeconfigPath, HOME: dir, ...env },
        timeout: 60_000,
      });
      return { stdout: r.stdout, stderr: r.stderr, code: 0 };
    } catch (e) {
      const err = e as { stdout?: string; stderr?: string; code?: number };
      return { stdout: err.stdout ?? '', stderr: err.stderr ?? '', code: typeof err.code === 'number' ? err.code : 1 };
    }
  };
  const ok = async (...args: string[]): Promise<string> => {
    const r = await kubectl(args);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${r.stderr}`);
    return r.stdout;
  };
  const file = (name: string, text: string): string => {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  };

  beforeAll(async () => {
    s = await startTestApiServer({ controllers: false });
    dir = mkdtempSync(join(tmpdir(), 'stowage-crd-kubectl-'));
  });
  afterAll(async () => {
    await s?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('applies the VolumeSnapshot CRDs and serves them by short name with their printer columns', async () => {
    await ok('apply', '-f', join(root, 'deploy/crds'));
    await ok(
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      'crd/volumesnapshots.snapshot.storage.k8s.io',
      'crd/volumesnapshotcontents.snapshot.storage.k8s.io',
      'crd/volumesnapshotclasses.snapshot.storage.k8s.io',
    );
    await ok(
      'apply',
      '-f',
      file(
        'snap.yaml',
        `apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshotClass
metadata: {name: csi-hostpath-snapclass}
driver: hostpath.csi.k8s.io
deletionPolicy: Delete
---
apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshot
metadata: {name: snap1, namespace: default}
spec:
  volumeSnapshotClassName: csi-hostpath-snapclass
  source: {persistentVolumeClaimName: data}
`,
      ),
    );
    const vs = await ok('get', 'vs');
    expect(vs).toMatch(
      /NAME\s+READYTOUSE\s+SOURCEPVC\s+SOURCESNAPSHOTCONTENT\s+RESTORESIZE\s+SNAPSHOTCLASS\s+SNAPSHOTCONTENT\s+CREATIONTIME\s+AGE/,
    );
    expect(vs).toMatch(/snap1\s+data\s+csi-hostpath-snapclass/);
    expect(await ok('get', 'vsclass')).toMatch(/csi-hostpath-snapclass\s+hostpath\.csi\.k8s\.io\s+Delete/);
    const vsc = await kubectl(['get', 'vsc']);
    expect(vsc.code).toBe(0);
    expect(vsc.stderr).toContain('No resources found');
    const bad = await kubectl([
      'apply',
      '-f',
      file(
        'bad.yaml',
        'apiVersion: snapshot.storage.k8s.io/v1\nkind: VolumeSnapshotClass\nmetadata: {name: bad}\ndriver: d\ndeletionPolicy: Keep\n',
      ),
    ]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('deletionPolicy: Unsupported value: "Keep": supported values: "Delete", "Retain"');
    expect(await ok('get', 'crd')).toMatch(
      /NAME\s+CREATED AT\s*\n(.*\n)*volumesnapshots\.snapshot\.storage\.k8s\.io\s+\d{4}-/,
    );
    expect(await ok('api-resources', '--api-group=snapshot.storage.k8s.io')).toMatch(
      /volumesnapshots\s+vs\s+snapshot\.storage\.k8s\.io\/v1\s+true\s+VolumeSnapshot/,
    );
    const explain = await ok('explain', 'volumesnapshot.spec.source');
    expect(explain).toContain('persistentVolumeClaimName');
    expect(explain).toContain('source specifies where a snapshot will be created from');
  });

  it('serves the example API: server-side apply, scale, status, edit, wait, describe, categories', async () => {
    await ok('apply', '--server-side', '-f', join(root, 'test/fixtures/crds/widgets.yaml'));
    await ok(
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      'crd/widgets.example.stowage.io',
      'crd/gizmos.example.stowage.io',
    );
    await ok(
      'apply',
      '--server-side',
      '-f',
      file(
        'w.yaml',
        'apiVersion: example.stowage.io/v1\nkind: Widget\nmetadata: {name: w1, namespace: default}\nspec:\n  size: S\n  ports: [{name: http, port: 80}]\n---\napiVersion: example.stowage.io/v1\nkind: Gizmo\nmetadata: {name: g1}\nspec: {color: red}\n',
      ),
    );
    expect(await ok('get', 'wd')).toMatch(/NAME\s+SIZE\s+REPLICAS\s+PHASE\s+AGE\s*\nw1\s+S\s+1\s+/);
    expect(await ok('get', 'gizmos')).toMatch(/NAME\s+AGE\s*\ng1\s+/);
    await ok('scale', 'widget/w1', '--replicas=3');
    expect(await ok('get', 'widget', 'w1', '-o', 'jsonpath={.spec.replicas} {.metadata.generation}')).toBe('3 2');
    await ok(
      'patch',
      'widget',
      'w1',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"phase":"Ready","replicas":3}}',
    );
    await ok('wait', '--for=jsonpath={.status.phase}=Ready', '--timeout=30s', 'widget/w1');
    const edited = await kubectl(['edit', 'widget', 'w1'], {
      EDITOR: 'sed -i s/size:\\ S/size:\\ M/',
      KUBE_EDITOR: 'sed -i s/size:\\ S/size:\\ M/',
    });
    expect(edited.code).toBe(0);
    expect(await ok('get', 'widget', 'w1', '-o', 'jsonpath={.spec.size}')).toBe('M');
    const describe = await ok('describe', 'widget', 'w1');
    expect(describe).toMatch(/Name:\s+w1/);
    expect(describe).toMatch(/Phase:\s+Ready/);
    expect(await ok('get', 'all')).toContain('widget.example.stowage.io/w1');
    const beta = await kubectl(['get', 'widgets.v1beta1.example.stowage.io', 'w1', '-o', 'jsonpath={.apiVersion}']);
    expect(beta.stdout).toBe('example.stowage.io/v1beta1');
    expect(beta.stderr).toContain('example.stowage.io/v1beta1 Widget is deprecated');
    expect(await ok('explain', 'widget.spec.size')).toContain('How big the widget is.');
  });

  it('deletes a CRD with its objects', async () => {
    await ok('delete', 'crd', 'widgets.example.stowage.io', '--timeout=60s');
    const gone = await kubectl(['get', 'widgets']);
    expect(gone.code).not.toBe(0);
    expect(await s.store.list('/registry/example.stowage.io/widgets/')).toMatchObject({ items: [] });
    await ok('delete', 'gizmo', 'g1');
  });
});
