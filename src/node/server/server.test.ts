import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KUBELET_CLIENT_CN, KUBELET_CLIENT_ORG } from '../../kube/names.js';
import { newLogger } from '../../util/log.js';
import { issueCa, issueLeaf } from '../../util/pki.js';
import { startNodeServer, type NodeServer } from './server.js';

describe("the node endpoint's authentication", () => {
  let server: NodeServer;
  const ca = issueCa('test-ca', 1);
  const apiserver = issueLeaf({ commonName: KUBELET_CLIENT_CN, organizations: [KUBELET_CLIENT_ORG], usage: 'client', ca, validDays: 1 });
  const someNode = issueLeaf({ commonName: 'system:node:other', organizations: ['system:nodes'], usage: 'client', ca, validDays: 1 });
  const stranger = issueLeaf({ commonName: KUBELET_CLIENT_CN, organizations: [KUBELET_CLIENT_ORG], usage: 'client', ca: issueCa('other-ca', 1), validDays: 1 });

  beforeAll(async () => {
    server = await startNodeServer({
      address: '127.0.0.1',
      port: 0,
      clientCaPem: ca.certPem,
      hosts: ['127.0.0.1'],
      getPod: async (namespace, name) => (name === 'p' ? { metadata: { name, namespace }, status: { containerStatuses: [{ name: 'c', image: 'i', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } }] } } : undefined),
      log: newLogger('test'),
    });
  });
  afterAll(() => server?.close());

  const get = (path: string, cert?: { certPem: string; keyPem: string }): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: server.port, path, rejectUnauthorized: false, ...(cert ? { cert: cert.certPem, key: cert.keyPem } : {}) }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: body.trim() }));
      });
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
    expect(await get('/containerLogs/default/p/c', apiserver)).toEqual({ status: 400, body: 'this node runs no container runtime: pods get their volumes but their containers do not run' });
    expect((await get('/containerLogs/default/p', apiserver)).status).toBe(404);
  });
});
