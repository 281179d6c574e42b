/**
 * Hostile paths and query strings: every one is answered with a 4xx Status (kube-apiserver never
 * answers them with a 500), nothing is written, and the server stays ready.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectReady, send, snapshot, startHostileServer, type HostileServer } from './kit.js';

const PVS = '/api/v1/persistentvolumes';
const pv = {
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name: 'q' },
  spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/q' } },
};

interface Case {
  readonly name: string;
  readonly method: string;
  readonly path: string;
  readonly body?: unknown;
  readonly contentType?: string;
  /** An exact answer where kube's is known; otherwise any 4xx. */
  readonly status?: number;
  readonly message?: string;
}

const CASES: Case[] = [
  { name: 'bad percent-escape in a name', method: 'GET', path: `${PVS}/%zz`, status: 400 },
  {
    name: 'bad percent-escape in a namespace',
    method: 'POST',
    path: '/api/v1/namespaces/%e0%a4%a/configmaps',
    body: pv,
    status: 400,
  },
  { name: 'encoded traversal', method: 'GET', path: '/api/v1/namespaces/..%2f..%2fetc/pods' },
  { name: 'dot segments', method: 'GET', path: '/apis/../../etc/passwd' },
  { name: 'NUL in a name', method: 'GET', path: `${PVS}/a%00b`, status: 404 },
  { name: 'a 10,000-character name', method: 'GET', path: `${PVS}/${'a'.repeat(10_000)}`, status: 404 },
  { name: 'too many segments', method: 'GET', path: `${PVS}/a/status/extra/more`, status: 404 },
  { name: 'unknown group', method: 'GET', path: '/apis/evil.example.com/v1/things', status: 404 },
  { name: 'unknown subresource', method: 'PUT', path: `${PVS}/q/bogus`, body: pv, status: 404 },
  { name: 'limit not a number', method: 'GET', path: `${PVS}?limit=abc` },
  { name: 'negative limit', method: 'GET', path: `${PVS}?limit=-1` },
  { name: 'resourceVersion not a number', method: 'GET', path: `${PVS}?resourceVersion=abc` },
  { name: 'unbalanced label selector', method: 'GET', path: `${PVS}?labelSelector=((` },
  {
    name: 'unsupported field selector',
    method: 'GET',
    path: `${PVS}?fieldSelector=spec.secret%3D%3Dx`,
    status: 400,
    message: 'field label not supported: spec.secret',
  },
  { name: 'garbage continue token', method: 'GET', path: `${PVS}?limit=1&continue=garbage` },
  { name: 'watch from a negative resourceVersion', method: 'GET', path: `${PVS}?watch=true&resourceVersion=-5` },
  { name: 'unsupported fieldValidation', method: 'POST', path: `${PVS}?fieldValidation=Bogus`, body: pv, status: 400 },
  { name: 'unsupported dryRun', method: 'POST', path: `${PVS}?dryRun=Nope`, body: pv, status: 400 },
  { name: 'unsupported propagationPolicy', method: 'DELETE', path: `${PVS}/q?propagationPolicy=Sideways`, status: 400 },
  { name: 'gracePeriodSeconds not a number', method: 'DELETE', path: `${PVS}/q?gracePeriodSeconds=soon`, status: 400 },
  { name: 'a 100 KB label selector', method: 'GET', path: `${PVS}?labelSelector=${'a'.repeat(100_000)}%3D%3D` },
  { name: 'empty body on create', method: 'POST', path: PVS, body: '', status: 400 },
  { name: 'body not JSON', method: 'POST', path: PVS, body: '{"kind":', status: 400 },
  { name: 'body a JSON list', method: 'POST', path: PVS, body: '[1,2]', status: 400 },
  { name: 'body a JSON string', method: 'POST', path: PVS, body: '"pv"', status: 400 },
  { name: 'deeply nested body', method: 'POST', path: PVS, body: `${'['.repeat(100_000)}${']'.repeat(100_000)}` },
  { name: 'patch not JSON', method: 'PATCH', path: `${PVS}/q`, body: 'nope' },
  {
    name: 'a patch of an unknown type',
    method: 'PATCH',
    path: `${PVS}/q`,
    body: {},
    contentType: 'application/apply-patch+cbor',
  },
  {
    name: 'JSON patch with 10,001 operations',
    method: 'PATCH',
    path: `${PVS}/q`,
    body: Array.from({ length: 10_001 }, () => ({ op: 'test', path: '/kind', value: 'PersistentVolume' })),
    contentType: 'application/json-patch+json',
    status: 413,
    message: 'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001',
  },
];

describe('hostile paths and query strings', () => {
  let s: HostileServer;
  beforeAll(async () => {
    s = await startHostileServer();
    const r = await send(s, 'POST', PVS, pv);
    if (r.status !== 201) throw new Error(`seed: ${r.status} ${r.text}`);
  });
  afterAll(async () => {
    await s?.close();
  });

  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_, c) => {
    const before = await snapshot(s, PVS);
    const contentType = c.contentType ?? (c.method === 'PATCH' ? 'application/merge-patch+json' : undefined);
    const r = await send(s, c.method, c.path, c.body, { contentType });
    if (c.status) expect(r.status).toBe(c.status);
    else {
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
    }
    expect(r.body).toMatchObject({ kind: 'Status', status: 'Failure', code: r.status });
    if (c.message) expect(r.body.message).toBe(c.message);
    await expectReady(s);
    expect(await snapshot(s, PVS)).toEqual(before);
  });

  it('a watch with a timeoutSeconds that is not a number is still bounded (refused or ended), never left open forever', async () => {
    const r = await send(s, 'GET', `${PVS}?watch=true&timeoutSeconds=abc`);
    expect(r.status).toBe(400);
  });
});
