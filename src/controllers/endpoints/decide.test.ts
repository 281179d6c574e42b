import type { Pod, Service } from 'kubernetes-types/core/v1.js';
import { describe, expect, it } from 'vitest';
import { desiredEndpoints, desiredSliceContent, managesEndpoints, newSlice, sliceContents } from './decide.js';

const svc = (spec: Service['spec']): Service => ({
  metadata: { name: 'web', namespace: 'ns', uid: 'svc-uid', labels: { team: 'a' } },
  spec,
});
function pod(
  name: string,
  o: { labels?: Record<string, string>; ready?: boolean; deleting?: boolean; phase?: string; podIP?: string } = {},
): Pod {
  return {
    metadata: {
      name,
      namespace: 'ns',
      uid: `uid-${name}`,
      labels: o.labels ?? { app: 'web' },
      ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: { nodeName: 'n1', containers: [{ name: 'c', ports: [{ name: 'http', containerPort: 8080 }] }] },
    // A volume-only pod reports the node's address only: pods share the node's network.
    status: {
      phase: o.phase ?? 'Running',
      hostIP: '192.0.2.2',
      ...(o.podIP ? { podIP: o.podIP } : {}),
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
    },
  };
}

describe('endpoints of a Service', () => {
  const web = svc({
    selector: { app: 'web' },
    ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }],
  });

  it('ready pods in addresses, unready in notReadyAddresses, named target ports resolved, others left out', () => {
    const ep = desiredEndpoints(web, [
      pod('a'),
      pod('b', { ready: false }),
      pod('c', { labels: { app: 'db' } }),
      pod('d', { phase: 'Succeeded' }),
      pod('e', { deleting: true }),
    ]);
    expect(ep).toEqual({
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'web', namespace: 'ns', labels: { team: 'a' } },
      subsets: [
        {
          addresses: [
            { ip: '192.0.2.2', nodeName: 'n1', targetRef: { kind: 'Pod', namespace: 'ns', name: 'a', uid: 'uid-a' } },
          ],
          notReadyAddresses: [
            { ip: '192.0.2.2', nodeName: 'n1', targetRef: { kind: 'Pod', namespace: 'ns', name: 'b', uid: 'uid-b' } },
          ],
          ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
        },
      ],
    });
  });

  it('the slice keeps terminating pods with their conditions and is owned by the Service', () => {
    const content = desiredSliceContent(web, [pod('a', { podIP: '10.1.0.5' }), pod('e', { deleting: true })]);
    expect(content.endpoints.map((e) => [e.addresses, e.conditions])).toEqual([
      [['10.1.0.5'], { ready: true, serving: true, terminating: false }],
      [['192.0.2.2'], { ready: false, serving: true, terminating: true }],
    ]);
    expect(content.ports).toEqual([{ name: 'http', port: 8080, protocol: 'TCP' }]);
    expect(newSlice(web, content).metadata).toMatchObject({
      generateName: 'web-',
      labels: {
        'kubernetes.io/service-name': 'web',
        'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
        team: 'a',
      },
      ownerReferences: [
        { apiVersion: 'v1', kind: 'Service', name: 'web', uid: 'svc-uid', controller: true, blockOwnerDeletion: true },
      ],
    });
  });

  it('no selector or ExternalName: someone else writes the endpoints; no pods: no subsets', () => {
    expect(managesEndpoints(svc({ ports: [{ port: 80 }] }))).toBe(false);
    expect(managesEndpoints(svc({ type: 'ExternalName', externalName: 'x', selector: { app: 'web' } }))).toBe(false);
    expect(desiredEndpoints(web, []).subsets).toBeUndefined();
    expect(desiredEndpoints(svc({ clusterIP: 'None', selector: { app: 'web' } }), []).metadata?.labels).toEqual({
      team: 'a',
      'service.kubernetes.io/headless': '',
    });
  });
});

describe('slices of at most 100 endpoints', () => {
  it.each([
    { endpoints: 0, want: [0] },
    { endpoints: 100, want: [100] },
    { endpoints: 250, want: [100, 100, 50] },
  ])('$endpoints endpoints → $want', ({ endpoints, want }) => {
    const content = {
      endpoints: Array.from({ length: endpoints }, (_, i) => ({ addresses: [`10.0.0.${i % 250}`] })),
      ports: [],
    };
    expect(sliceContents(content).map((s) => s.endpoints.length)).toEqual(want);
  });
});
