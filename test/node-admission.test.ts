import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../src/cli/testing.test-kit.js';
import {
  formatNodeToken,
  NODE_TOKEN_NAMESPACE,
  NODE_TOKEN_SECRET_KEY,
  NODE_TOKEN_SECRET_TYPE,
  nodeTokenSecretName,
} from '../src/kube/nodetoken.js';
import { api } from './helpers/http.js';

/** NodeRestriction on every write path a node can reach: create, update, patch, apply (create and update), delete, eviction. */
describe('NodeRestriction through each write path', () => {
  let s: TestApiServer;
  let token: string;
  beforeAll(async () => {
    s = await startTestApiServer({ controllers: false });
    const secret = 'n1-secret-0123456789';
    const made = await api(s, 'POST', `/api/v1/namespaces/${NODE_TOKEN_NAMESPACE}/secrets`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: nodeTokenSecretName('n1') },
      type: NODE_TOKEN_SECRET_TYPE,
      data: { [NODE_TOKEN_SECRET_KEY]: Buffer.from(secret).toString('base64') },
    });
    expect(made.status).toBe(201);
    token = formatNodeToken('n1', secret);
    for (const n of ['n1', 'n2'])
      expect(
        (await api(s, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: n } })).status,
      ).toBe(201);
    for (const [pod, node] of [
      ['on-n1', 'n1'],
      ['on-n2', 'n2'],
    ]) {
      const p = await api(s, 'POST', '/api/v1/namespaces/default/pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: pod },
        spec: { nodeName: node, containers: [{ name: 'c', image: 'busybox' }] },
      });
      expect(p.status).toBe(201);
    }
  });
  afterAll(async () => {
    await s?.close();
  });

  const asNode = (method: string, path: string, body?: unknown, contentType?: string) =>
    api(s, method, path, body, { token, contentType });
  const refused = (r: { status: number; body: { message?: string } }, message: string): void => {
    expect(r.status).toBe(403);
    expect(r.body.message).toBe(message);
  };
  const node = (name: string, extra: Record<string, unknown> = {}) => ({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name },
    ...extra,
  });
  const tainted = { spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] } };
  const APPLY = 'application/apply-patch+yaml';

  it('refuses a node writing another Node by create, update, patch and apply', async () => {
    const other = 'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"';
    refused(
      await asNode('POST', '/api/v1/nodes', node('n3')),
      'nodes "n3" is forbidden: node "n1" is not allowed to modify node "n3"',
    );
    refused(await asNode('PUT', '/api/v1/nodes/n2', node('n2')), other);
    refused(
      await asNode('PATCH', '/api/v1/nodes/n2', { metadata: { labels: { a: 'b' } } }, 'application/merge-patch+json'),
      other,
    );
    refused(await asNode('PATCH', '/api/v1/nodes/n2?fieldManager=n', JSON.stringify(node('n2')), APPLY), other);
    refused(
      await asNode('PATCH', '/api/v1/nodes/n4?fieldManager=n', JSON.stringify(node('n4')), APPLY),
      'nodes "n4" is forbidden: node "n1" is not allowed to modify node "n4"',
    );
    expect((await api(s, 'GET', '/api/v1/nodes/n4')).status).toBe(404);
  });

  it('refuses taints on its own Node by update, patch and apply, and admits a harmless change', async () => {
    const taints = 'nodes "n1" is forbidden: node "n1" is not allowed to modify taints';
    refused(await asNode('PUT', '/api/v1/nodes/n1', node('n1', tainted)), taints);
    refused(await asNode('PATCH', '/api/v1/nodes/n1', tainted, 'application/merge-patch+json'), taints);
    refused(
      await asNode('PATCH', '/api/v1/nodes/n1?fieldManager=n', JSON.stringify(node('n1', tainted)), APPLY),
      taints,
    );
    expect((await api(s, 'GET', '/api/v1/nodes/n1')).body.spec?.taints).toBeUndefined();
    const ok = await asNode(
      'PATCH',
      '/api/v1/nodes/n1?fieldManager=n',
      JSON.stringify(node('n1', { metadata: { name: 'n1', labels: { 'kubernetes.io/hostname': 'n1' } } })),
      APPLY,
    );
    expect(ok.status).toBe(200);
  });

  it("refuses status writes, deletes and evictions of another node's pod", async () => {
    const path = '/api/v1/namespaces/default/pods/on-n2';
    const status =
      'pods "on-n2" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself';
    refused(
      await asNode('PATCH', `${path}/status`, { status: { phase: 'Running' } }, 'application/merge-patch+json'),
      status,
    );
    refused(
      await asNode('DELETE', path),
      'pods "on-n2" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself',
    );
    refused(
      await asNode('POST', `${path}/eviction`, {
        apiVersion: 'policy/v1',
        kind: 'Eviction',
        metadata: { name: 'on-n2' },
      }),
      'pods "on-n2" is forbidden: node n1 can only evict pods with spec.nodeName set to itself',
    );
    expect((await api(s, 'GET', path)).status).toBe(200);
    expect(
      (
        await asNode(
          'PATCH',
          '/api/v1/namespaces/default/pods/on-n1/status',
          { status: { phase: 'Running' } },
          'application/merge-patch+json',
        )
      ).status,
    ).toBe(200);
  });
});
