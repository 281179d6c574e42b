import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiV3, type OpenApiResource } from './documents.js';

/**
 * The real check of the /openapi/v3 documents: kubectl (1.29+) only sends `fieldValidation=Strict`
 * when its openapi3 client finds `fieldValidation` on the kind's PATCH operation. A minimal
 * server answers discovery and /openapi/v3 from our documents and records what kubectl asks.
 */

const KUBECTL_DIR = '/usr/lib/google-cloud-sdk/bin';
const VERSIONS = ['1.29', '1.30', '1.33'].filter((v) => existsSync(join(KUBECTL_DIR, `kubectl.${v}`)));

const RESOURCES: readonly OpenApiResource[] = [
  { group: '', version: 'v1', kind: 'Pod', plural: 'pods', namespaced: true, hasStatus: true },
  { group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true, hasStatus: false },
  {
    group: 'storage.k8s.io',
    version: 'v1',
    kind: 'StorageClass',
    plural: 'storageclasses',
    namespaced: false,
    hasStatus: false,
  },
];
const openapi = buildOpenApiV3(RESOURCES);

function resourceList(groupVersion: string, rs: readonly OpenApiResource[]) {
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion,
    resources: rs.map((r) => ({
      name: r.plural,
      singularName: r.kind.toLowerCase(),
      namespaced: r.namespaced,
      kind: r.kind,
      verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    })),
  };
}

const requests: string[] = [];
let server: ReturnType<typeof createServer>;
let dir: string;
let kubeconfig: string;

function send(res: ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://x');
  requests.push(`${req.method} ${url.pathname}${url.search}`);
  let body = '';
  for await (const chunk of req) body += String(chunk);
  const p = url.pathname;
  if (p === '/version') return send(res, 200, { major: '1', minor: '30', gitVersion: 'v1.30.0' });
  if (p === '/api') return send(res, 200, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] });
  if (p === '/apis') {
    const gv = { groupVersion: 'storage.k8s.io/v1', version: 'v1' };
    return send(res, 200, {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: [{ name: 'storage.k8s.io', versions: [gv], preferredVersion: gv }],
    });
  }
  if (p === '/api/v1')
    return send(
      res,
      200,
      resourceList(
        'v1',
        RESOURCES.filter((r) => r.group === ''),
      ),
    );
  if (p === '/apis/storage.k8s.io/v1')
    return send(
      res,
      200,
      resourceList(
        'storage.k8s.io/v1',
        RESOURCES.filter((r) => r.group !== ''),
      ),
    );
  if (p === '/openapi/v3') return send(res, 200, openapi.index());
  if (p.startsWith('/openapi/v3/')) {
    const e = openapi.entry(p.slice('/openapi/v3/'.length));
    return e ? send(res, 200, e.document) : send(res, 404, {});
  }
  if (req.method === 'POST') {
    const obj = JSON.parse(body) as { metadata: Record<string, unknown> };
    obj.metadata.uid = 'u';
    obj.metadata.resourceVersion = '1';
    return send(res, 201, obj);
  }
  return send(res, 404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 });
}

beforeAll(async () => {
  server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  dir = mkdtempSync(join(tmpdir(), 'stowage-kubectl-'));
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server: `http://127.0.0.1:${port}` } }],
      users: [{ name: 'u', user: {} }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u', namespace: 'default' } }],
      'current-context': 'x',
    }),
  );
  writeFileSync(
    join(dir, 'pod.yaml'),
    'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: busybox}]}\n',
  );
  writeFileSync(
    join(dir, 'sc.yaml'),
    'apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: fast}\nprovisioner: x\n',
  );
});

afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

function kubectl(version: string, args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      join(KUBECTL_DIR, `kubectl.${version}`),
      [`--kubeconfig=${kubeconfig}`, `--cache-dir=${join(dir, `cache-${version}`)}`, ...args],
      { timeout: 20_000 },
      (err, stdout, stderr) => resolve({ code: err ? 1 : 0, out: `${stdout}${stderr}` }),
    );
  });
}

describe.skipIf(VERSIONS.length === 0)(
  'kubectl reads our /openapi/v3 (skipped: no kubectl.1.29+ binaries here)',
  () => {
    it.each(
      VERSIONS.flatMap((v) => [
        [v, 'pod.yaml', '/api/v1/namespaces/default/pods'],
        [v, 'sc.yaml', '/apis/storage.k8s.io/v1/storageclasses'],
      ]),
    )('kubectl %s create -f %s sends fieldValidation=Strict', async (version, file, path) => {
      requests.length = 0;
      const r = await kubectl(version, ['create', '-f', join(dir, file)]);
      expect(r.out).toMatch(/created/);
      expect(r.code).toBe(0);
      const post = requests.find((q) => q.startsWith(`POST ${path}`));
      expect(post, requests.join('\n')).toMatch(/[?&]fieldValidation=Strict/);
    });

    it.each(VERSIONS)('kubectl %s explain reads the schemas', async (version) => {
      const r = await kubectl(version, ['explain', 'pods.spec.containers.volumeMounts']);
      expect(r.code, r.out).toBe(0);
      expect(r.out).toMatch(/mountPath\s+<string> -required-/);
      const sc = await kubectl(version, ['explain', 'storageclasses.provisioner']);
      expect(sc.out).toMatch(/FIELD: provisioner <string>/);
    });
  },
);
