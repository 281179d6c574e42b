import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KUBELET_CLIENT_CN, KUBELET_CLIENT_ORG } from '../../kube/names.js';
import { newLogger } from '../../util/log.js';
import { issueCa, issueLeaf } from '../../util/pki.js';
import { startNodeServer, type NodeServer } from './server.js';

describe("the node endpoint's authentication", () => {
  let server: NodeServer;
  const ca = issueCa('test-ca', 1);
  const apiserver = issueLeaf({
    commonName: KUBELET_CLIENT_CN,
    organizations: [KUBELET_CLIENT_ORG],
    usage: 'client',
    ca,
    validDays: 1,
  });
  const someNode = issueLeaf({
    commonName: 'system:node:other',
    organizations: ['system:nodes'],
    usage: 'client',
    ca,
    validDays: 1,
  });
  const stranger = issueLeaf({
    commonName: KUBELET_CLIENT_CN,
    organizations: [KUBELET_CLIENT_ORG],
    usage: 'client',
    ca: issueCa('other-ca', 1),
    validDays: 1,
  });

  beforeAll(async () => {
    server = await startNodeServer({
      address: '127.0.0.1',
      port: 0,
      clientCaPem: ca.certPem,
      hosts: ['127.0.0.1'],
      nodeName: 'n1',
      getPod: async (namespace, name) =>
        name === 'p' || name === 'elsewhere'
          ? {
              metadata: { name, namespace },
              spec: { nodeName: name === 'p' ? 'n1' : 'n2', containers: [{ name: 'c' }] },
              status: {
                containerStatuses: [
                  {
                    name: 'c',
                    image: 'i',
                    imageID: '',
                    ready: false,
                    restartCount: 0,
                    state: { waiting: { reason: 'ContainerCreating' } },
                  },
                ],
              },
            }
          : undefined,
      log: newLogger('test'),
    });
  });
  afterAll(() => server?.close());

  const get = (
    path: string,
    cert?: { certPem: string; keyPem: string },
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: server.port,
          path,
          headers,
          rejectUnauthorized: false,
          ...(cert ? { cert: cert.certPem, key: cert.keyPem } : {}),
        },
        (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: body.trim() }));
        },
      );
      req.on('error', reject);
      req.end();
    });

  it.each([
    { who: 'no certificate', cert: undefined, status: 401 },
    { who: 'a certificate from another CA', cert: stranger, status: 401 },
    { who: "another identity of the cluster's CA", cert: someNode, status: 403 },
    { who: "the API server's certificate", cert: apiserver, status: 200 },
  ])('$who → $status', async ({ cert, status }) => expect((await get('/healthz', cert)).status).toBe(status));

  it("answers log requests with the kubelet's refusals as 400 text", async () => {
    expect(await get('/containerLogs/default/p/c', apiserver)).toEqual({
      status: 400,
      body: 'this node runs no container runtime: pods get their volumes but their containers do not run',
    });
    expect((await get('/containerLogs/default/p', apiserver)).status).toBe(404);
  });

  it.each([
    { what: 'a pod the API does not have', path: '/containerLogs/default/gone/c', body: 'pod "gone" does not exist' },
    {
      what: 'a pod bound to another node',
      path: '/containerLogs/default/elsewhere/c',
      body: 'pod "elsewhere" does not exist',
    },
    {
      what: "a container not in the pod's spec",
      path: '/containerLogs/default/p/x',
      body: 'container "x" not found in pod "p"',
    },
  ])("answers logs of $what with the kubelet's 404", async ({ path, body }) =>
    expect(await get(path, apiserver)).toEqual({ status: 404, body }),
  );

  const upgrade = {
    Connection: 'Upgrade',
    Upgrade: 'websocket',
    'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
    'Sec-WebSocket-Version': '13',
    'Sec-WebSocket-Protocol': 'v5.channel.k8s.io',
  };
  it.each([
    { who: 'no certificate', cert: undefined, path: '/exec/default/p/c', status: 401 },
    { who: 'a certificate from another CA', cert: stranger, path: '/exec/default/p/c', status: 401 },
    { who: "another identity of the cluster's CA", cert: someNode, path: '/exec/default/p/c', status: 403 },
    { who: 'the API server, for a log path', cert: apiserver, path: '/containerLogs/default/p/c', status: 404 },
  ])('refuses an exec upgrade from $who with $status before switching protocols', async ({ cert, path, status }) =>
    expect((await get(path, cert, upgrade)).status).toBe(status),
  );

  it('refuses an exec upgrade without a channel protocol with 400', async () => {
    expect(await get('/exec/default/p/c', apiserver, { ...upgrade, 'Sec-WebSocket-Protocol': 'chat' })).toEqual({
      status: 400,
      body: 'only WebSocket upgrades with v5.channel.k8s.io or v4.channel.k8s.io are served',
    });
  });
});
