import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ExpiredError, NotFoundError } from '../util/errors.js';
import { RestClient } from './rest.js';

interface Seen {
  method: string;
  url: string;
  contentType?: string;
  auth?: string;
  body: unknown;
}

let server: Server;
let client: RestClient;
let seen: Seen[] = [];
let respond: (req: IncomingMessage, res: ServerResponse, body: unknown) => void;

const json = (res: ServerResponse, code: number, body: unknown): void => {
  res.writeHead(code, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
};

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString();
      const body: unknown = text ? JSON.parse(text) : undefined;
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        contentType: req.headers['content-type'],
        auth: req.headers.authorization,
        body,
      });
      respond(req, res, body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  client = new RestClient({ server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: 'tok' });
});
afterAll(async () => {
  client.close();
  await new Promise<void>((r) => server.close(() => r()));
});
beforeEach(() => {
  seen = [];
  respond = (_req, res, body) => json(res, 200, body ?? { kind: 'Thing', metadata: { name: 'x' }, items: [] });
});

describe('RestClient request shapes', () => {
  it.each([
    {
      name: 'get cluster-scoped',
      run: () => client.resource('PersistentVolume').get('pv1'),
      want: { method: 'GET', url: '/api/v1/persistentvolumes/pv1' },
    },
    {
      name: 'get namespaced',
      run: () => client.resource('PersistentVolumeClaim').get('c1', { namespace: 'ns' }),
      want: { method: 'GET', url: '/api/v1/namespaces/ns/persistentvolumeclaims/c1' },
    },
    {
      name: 'list all namespaces with selectors and paging',
      run: () =>
        client.resource('Pod').list({
          fieldSelector: 'spec.nodeName=n1',
          labelSelector: 'a=b',
          limit: 500,
          continue: 'tok',
          resourceVersion: '0',
          resourceVersionMatch: 'NotOlderThan',
        }),
      want: {
        method: 'GET',
        url: '/api/v1/pods?labelSelector=a%3Db&fieldSelector=spec.nodeName%3Dn1&limit=500&continue=tok&resourceVersion=0&resourceVersionMatch=NotOlderThan',
      },
    },
    {
      name: 'group kinds',
      run: () => client.resource('CSIStorageCapacity').list({ namespace: 'kube-system' }),
      want: { method: 'GET', url: '/apis/storage.k8s.io/v1/namespaces/kube-system/csistoragecapacities' },
    },
    {
      name: 'create takes the namespace from the object and fills type meta',
      run: () => client.resource('Lease').create({ metadata: { name: 'l', namespace: 'kube-system' } }),
      want: {
        method: 'POST',
        url: '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases',
        body: {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: 'l', namespace: 'kube-system' },
        },
      },
    },
    {
      name: 'update',
      run: () =>
        client.resource('StorageClass').update({ metadata: { name: 'sc', resourceVersion: '5' }, provisioner: 'p' }),
      want: { method: 'PUT', url: '/apis/storage.k8s.io/v1/storageclasses/sc' },
    },
    {
      name: 'updateStatus',
      run: () =>
        client.resource('PersistentVolume').updateStatus({ metadata: { name: 'pv1' }, status: { phase: 'Bound' } }),
      want: { method: 'PUT', url: '/api/v1/persistentvolumes/pv1/status' },
    },
    {
      name: 'merge patch',
      run: () => client.resource('Node').patch('n1', 'merge', { metadata: { labels: { a: 'b' } } }),
      want: { method: 'PATCH', url: '/api/v1/nodes/n1', contentType: 'application/merge-patch+json' },
    },
    {
      name: 'json patch on status',
      run: () =>
        client
          .resource('PersistentVolume')
          .patchStatus('pv1', 'json', [{ op: 'add', path: '/status/phase', value: 'Bound' }]),
      want: {
        method: 'PATCH',
        url: '/api/v1/persistentvolumes/pv1/status',
        contentType: 'application/json-patch+json',
      },
    },
    {
      name: 'strategic patch',
      run: () => client.resource('Pod').patch('p', 'strategic', {}, { namespace: 'ns' }),
      want: {
        method: 'PATCH',
        url: '/api/v1/namespaces/ns/pods/p',
        contentType: 'application/strategic-merge-patch+json',
      },
    },
    {
      name: 'delete with options',
      run: () =>
        client.resource('PersistentVolume').delete('pv1', {
          propagationPolicy: 'Background',
          preconditions: { uid: 'u', resourceVersion: '3' },
          gracePeriodSeconds: 0,
        }),
      want: {
        method: 'DELETE',
        url: '/api/v1/persistentvolumes/pv1',
        body: {
          apiVersion: 'v1',
          kind: 'DeleteOptions',
          propagationPolicy: 'Background',
          preconditions: { uid: 'u', resourceVersion: '3' },
          gracePeriodSeconds: 0,
        },
      },
    },
    {
      name: 'deleteCollection',
      run: () => client.resource('Event').deleteCollection({ namespace: 'ns', labelSelector: 'x=y' }),
      want: { method: 'DELETE', url: '/api/v1/namespaces/ns/events?labelSelector=x%3Dy' },
    },
  ])('$name', async ({ run, want }) => {
    await run();
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ ...want, auth: 'Bearer tok' });
  });

  it('delete returns the object when the server does, undefined for a Status', async () => {
    respond = (_q, res) =>
      json(res, 200, {
        kind: 'PersistentVolume',
        metadata: { name: 'pv1', finalizers: ['kubernetes.io/pv-protection'] },
      });
    expect((await client.resource('PersistentVolume').delete('pv1'))?.metadata?.name).toBe('pv1');
    respond = (_q, res) => json(res, 200, { kind: 'Status', status: 'Success' });
    expect(await client.resource('PersistentVolume').delete('pv1')).toBeUndefined();
  });

  it('list restores kind and apiVersion on items (the wire omits them)', async () => {
    respond = (_q, res) =>
      json(res, 200, {
        kind: 'VolumeAttachmentList',
        apiVersion: 'storage.k8s.io/v1',
        metadata: { resourceVersion: '9' },
        items: [{ metadata: { name: 'va1' } }],
      });
    const list = await client.resource('VolumeAttachment').list();
    expect(list.items[0]).toMatchObject({
      kind: 'VolumeAttachment',
      apiVersion: 'storage.k8s.io/v1',
      metadata: { name: 'va1' },
    });
    expect(list.metadata.resourceVersion).toBe('9');
  });

  it('a Status error body becomes a typed error', async () => {
    respond = (_q, res) =>
      json(res, 404, {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        reason: 'NotFound',
        code: 404,
        message: 'persistentvolumes "x" not found',
      });
    const err = await client
      .resource('PersistentVolume')
      .get('x')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as Error).message).toBe('persistentvolumes "x" not found');
  });

  it('getIfExists: the object, undefined for a 404, and any other error thrown', async () => {
    const pvs = client.resource('PersistentVolume');
    respond = (_q, res) => json(res, 200, { metadata: { name: 'x' } });
    expect((await pvs.getIfExists('x'))?.metadata?.name).toBe('x');
    respond = (_q, res) =>
      json(res, 404, {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        reason: 'NotFound',
        code: 404,
        message: 'persistentvolumes "x" not found',
      });
    expect(await pvs.getIfExists('x')).toBeUndefined();
    respond = (_q, res) =>
      json(res, 403, {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        reason: 'Forbidden',
        code: 403,
        message: 'forbidden',
      });
    await expect(pvs.getIfExists('x')).rejects.toThrow('forbidden');
  });

  it('deleteIfExists and patchStatusIfExists: undefined for a 404, any other error thrown', async () => {
    const pvs = client.resource('PersistentVolume');
    const status = (code: number, reason: string) => ({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason,
      code,
      message: reason,
    });
    const methods: string[] = [];
    respond = (q, res) => {
      methods.push(`${q.method} ${q.url}`);
      json(res, 404, status(404, 'NotFound'));
    };
    expect(await pvs.deleteIfExists('x')).toBeUndefined();
    expect(await pvs.patchStatusIfExists('x', 'merge', { status: {} })).toBeUndefined();
    expect(methods).toEqual(['DELETE /api/v1/persistentvolumes/x', 'PATCH /api/v1/persistentvolumes/x/status']);
    respond = (_q, res) => json(res, 409, status(409, 'Conflict'));
    await expect(pvs.deleteIfExists('x')).rejects.toThrow('Conflict');
    await expect(pvs.patchStatusIfExists('x', 'merge', {})).rejects.toThrow('Conflict');
  });
});

describe('RestClient watch', () => {
  it('streams events split across chunks and ends when the server closes', async () => {
    respond = (_q, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      const body =
        JSON.stringify({
          type: 'ADDED',
          object: { kind: 'PersistentVolume', metadata: { name: 'a', resourceVersion: '2' } },
        }) +
        '\n' +
        JSON.stringify({ type: 'BOOKMARK', object: { kind: 'PersistentVolume', metadata: { resourceVersion: '3' } } }) +
        '\n';
      res.write(body.slice(0, 17));
      setImmediate(() => {
        res.write(body.slice(17, 60));
        setImmediate(() => res.end(body.slice(60)));
      });
    };
    const got: string[] = [];
    for await (const ev of client
      .resource('PersistentVolume')
      .watch({ resourceVersion: '1', allowWatchBookmarks: true, timeoutSeconds: 60 })) {
      got.push(`${ev.type} ${ev.type === 'ERROR' ? '' : ev.object.metadata?.resourceVersion}`);
    }
    expect(got).toEqual(['ADDED 2', 'BOOKMARK 3']);
    expect(seen[0]?.url).toBe(
      '/api/v1/persistentvolumes?watch=true&resourceVersion=1&allowWatchBookmarks=true&timeoutSeconds=60',
    );
  });

  it('yields an ERROR 410 event as ExpiredError and stops', async () => {
    respond = (_q, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(
        JSON.stringify({
          type: 'ERROR',
          object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' },
        }) + '\n',
      );
      // leave the stream open: the client must stop by itself after an ERROR
    };
    const events = [];
    for await (const ev of client.resource('Pod').watch({ resourceVersion: '1' })) events.push(ev);
    expect(events).toHaveLength(1);
    expect(events[0]?.type === 'ERROR' && events[0].error).toBeInstanceOf(ExpiredError);
  });

  it('an HTTP 410 answer to a watch throws ExpiredError', async () => {
    respond = (_q, res) => json(res, 410, { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' });
    const it = client.resource('Pod').watch({ resourceVersion: '1' });
    await expect(it.next()).rejects.toBeInstanceOf(ExpiredError);
  });

  it('aborting the signal ends the iteration quietly', async () => {
    respond = (_q, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '2' } } }) + '\n');
    };
    const ctl = new AbortController();
    const got: string[] = [];
    for await (const ev of client.resource('ConfigMap').watch({ namespace: 'ns', signal: ctl.signal })) {
      got.push(ev.type);
      ctl.abort();
    }
    expect(got).toEqual(['ADDED']);
  });
});
