import { describe, expect, it } from 'vitest';
import { ctx, obj, texts } from './core.test-kit.js';
import { deploymentResource as deployment } from './deployment.js';
import { replicaSetResource as replicaSet } from './replicaset.js';
import { scaleOf, scaleSubresource, validateScale, withScaledReplicas } from './scale.js';
import { newServiceResource } from './service.js';
import { allocateClusterIp, cidrContains, parseCidr } from './serviceip.js';
import type { KubeObject, ResourceDef } from './types.js';

const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.25' }] } };
const workload = (kind: string, spec: Record<string, unknown> = {}): KubeObject => ({
  ...obj(kind, 'web', { spec: { selector: { matchLabels: { app: 'web' } }, template, ...spec } }, 'default'),
  apiVersion: 'apps/v1',
});

function create(def: ResourceDef, o: KubeObject, objects: KubeObject[] = []): string[] {
  def.prepareForCreate(o, ctx(objects));
  return texts(def.validateCreate(o, ctx(objects)));
}

describe('Deployment defaults and validation', () => {
  it('defaults as apps/v1: one replica, RollingUpdate 25%/25%, history 10, deadline 600, pod defaults in the template', () => {
    const d = workload('Deployment');
    expect(create(deployment, d)).toEqual([]);
    expect(d.spec).toMatchObject({
      replicas: 1,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
      template: {
        spec: { restartPolicy: 'Always', dnsPolicy: 'ClusterFirst', containers: [{ imagePullPolicy: 'IfNotPresent' }] },
      },
    });
    expect(d.metadata.generation).toBe(1);
    expect(d.status).toEqual({});
  });

  it.each([
    {
      name: 'selector must match template labels',
      spec: { selector: { matchLabels: { app: 'other' } } },
      want: [
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`',
      ],
    },
    { name: 'selector required', spec: { selector: undefined }, want: ['spec.selector: Required value'] },
    {
      name: 'negative replicas',
      spec: { replicas: -1 },
      want: ['spec.replicas: Invalid value: -1: must be greater than or equal to 0'],
    },
    {
      name: 'both fenceposts zero',
      spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 0 } } },
      want: ['spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0'],
    },
    {
      name: 'Recreate with rollingUpdate',
      spec: { strategy: { type: 'Recreate', rollingUpdate: { maxSurge: 1 } } },
      want: ["spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"],
    },
    {
      name: 'unknown strategy',
      spec: { strategy: { type: 'Blue' } },
      want: ['spec.strategy.type: Unsupported value: "Blue": supported values: "Recreate", "RollingUpdate"'],
    },
    {
      name: 'restartPolicy Never',
      spec: { template: { ...template, spec: { ...template.spec, restartPolicy: 'Never' } } },
      want: ['spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"'],
    },
    {
      name: 'pod spec validated under the template',
      spec: { template: { ...template, spec: { containers: [] } } },
      want: ['spec.template.spec.containers: Required value'],
    },
    {
      name: 'empty selector',
      spec: { selector: { matchLabels: {} } },
      want: [
        'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment',
      ],
    },
    {
      name: 'template activeDeadlineSeconds',
      spec: { template: { ...template, spec: { ...template.spec, activeDeadlineSeconds: 5 } } },
      want: [
        'spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported',
      ],
    },
    {
      name: 'deadline not above minReadySeconds',
      spec: { minReadySeconds: 700 },
      want: ['spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds'],
    },
  ])('$name', ({ spec, want }) => {
    expect(create(deployment, workload('Deployment', spec))).toEqual(want);
  });

  it('the selector is immutable; annotation changes bump the generation', () => {
    const old = workload('Deployment');
    create(deployment, old);
    const next = structuredClone(old);
    (next.spec as { selector: unknown }).selector = { matchLabels: { app: 'web', tier: 'x' } };
    (next.spec as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels.tier = 'x';
    deployment.prepareForUpdate(next, old, ctx());
    expect(texts(deployment.validateUpdate(next, old, ctx()))).toEqual([
      'spec.selector: Invalid value: "{\\"matchLabels\\":{\\"app\\":\\"web\\",\\"tier\\":\\"x\\"}}": field is immutable',
    ]);
    const annotated = structuredClone(old);
    annotated.metadata.annotations = { 'kubernetes.io/change-cause': 'x' };
    deployment.prepareForUpdate(annotated, old, ctx());
    expect(annotated.metadata.generation).toBe(2);
  });

  it('spec.strategy is retainKeys, so that kubectl apply switching to Recreate drops rollingUpdate', () => {
    expect(deployment.patchMeta(['spec', 'strategy']).strategy).toBe('retainKeys');
  });

  it('kubectl columns: READY UP-TO-DATE AVAILABLE AGE, wide CONTAINERS IMAGES SELECTOR', () => {
    const d = workload('Deployment', { replicas: 3 });
    d.status = { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 };
    expect(deployment.columns.map((c) => c.name)).toEqual([
      'Name',
      'Ready',
      'Up-to-date',
      'Available',
      'Age',
      'Containers',
      'Images',
      'Selector',
    ]);
    expect(deployment.row(d, Date.parse('2024-05-01T12:00:00Z'))).toEqual([
      'web',
      '2/3',
      3,
      2,
      '5m',
      'c',
      'nginx:1.25',
      'app=web',
    ]);
  });
});

describe('ReplicaSet', () => {
  it('defaults one replica and shows DESIRED CURRENT READY', () => {
    const r = workload('ReplicaSet');
    expect(create(replicaSet, r)).toEqual([]);
    r.status = { replicas: 1, readyReplicas: 0 };
    expect(replicaSet.row(r, Date.parse('2024-05-01T12:00:00Z')).slice(0, 5)).toEqual(['web', 1, 1, 0, '5m']);
    expect(replicaSet.shortNames).toEqual(['rs']);
    expect(replicaSet.categories).toEqual(['all']);
  });

  it('a status with a negative count is refused', () => {
    const old = workload('ReplicaSet');
    create(replicaSet, old);
    const next = { ...structuredClone(old), status: { replicas: 2, readyReplicas: -1, observedGeneration: 1 } };
    expect(texts(replicaSet.validateStatusUpdate!(next, old, ctx()))).toEqual([
      'status.readyReplicas: Invalid value: -1: must be greater than or equal to 0',
    ]);
    expect(
      texts(replicaSet.validateStatusUpdate!({ ...next, status: { replicas: 2, readyReplicas: 1 } }, old, ctx())),
    ).toEqual([]);
  });
});

describe('the scale subresource', () => {
  const sub = scaleSubresource();
  it('reads spec.replicas, status.replicas and the selector as a string', () => {
    const d = workload('Deployment', {
      replicas: 4,
      selector: {
        matchLabels: { app: 'web' },
        matchExpressions: [{ key: 'tier', operator: 'In', values: ['b', 'a'] }],
      },
    });
    d.status = { replicas: 3 };
    expect(scaleOf(sub, d)).toMatchObject({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: { name: 'web', namespace: 'default' },
      spec: { replicas: 4 },
      status: { replicas: 3, selector: 'app=web,tier in (a,b)' },
    });
  });
  it('writes spec.replicas into a copy and refuses negative counts', () => {
    const d = workload('Deployment', { replicas: 1 });
    const out = withScaledReplicas(sub, d, { metadata: {}, spec: { replicas: 5 } });
    expect([(out.spec as { replicas: number }).replicas, (d.spec as { replicas: number }).replicas]).toEqual([5, 1]);
    expect(texts(validateScale({ metadata: {}, spec: { replicas: -2 } }))).toEqual([
      'spec.replicas: Invalid value: -2: must be greater than or equal to 0',
    ]);
  });
});

describe('Service', () => {
  const svcDef = newServiceResource({ serviceCidr: '10.0.0.0/29' });
  const svc = (spec: Record<string, unknown>): KubeObject => obj('Service', 's', { spec }, 'default');

  it('defaults type ClusterIP, TCP, targetPort = port, and allocates a ClusterIP from the range', () => {
    const s = svc({ selector: { app: 'web' }, ports: [{ port: 80 }] });
    expect(create(svcDef, s)).toEqual([]);
    const spec = s.spec as { clusterIP: string; clusterIPs: string[] };
    expect(s.spec).toMatchObject({
      type: 'ClusterIP',
      sessionAffinity: 'None',
      ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }],
      internalTrafficPolicy: 'Cluster',
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
    });
    expect(spec.clusterIPs).toEqual([spec.clusterIP]);
    expect(cidrContains(parseCidr('10.0.0.0/29'), spec.clusterIP)).toBe(true);
    expect(spec.clusterIP).not.toBe('10.0.0.1'); // kept for the kubernetes Service
  });

  it('a full range, a taken or out-of-range address are refused as kube-apiserver does', () => {
    const taken = ['10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5', '10.0.0.6'].map((ip, i) => ({
      ...obj('Service', `t${i}`, { spec: { clusterIP: ip } }, 'default'),
      metadata: { name: `t${i}`, namespace: 'default', uid: `t${i}` },
    }));
    expect(create(svcDef, svc({ ports: [{ port: 80 }] }), taken)).toEqual([
      'spec.clusterIPs: Invalid value: []string{}: failed to allocate a serviceIP: range is full',
    ]);
    expect(create(svcDef, svc({ ports: [{ port: 80 }], clusterIP: '10.0.0.3' }), taken)).toEqual([
      'spec.clusterIPs: Invalid value: []string{"10.0.0.3"}: failed to allocate IP 10.0.0.3: provided IP is already allocated',
    ]);
    expect(create(svcDef, svc({ ports: [{ port: 80 }], clusterIP: '10.9.0.3' }))).toEqual([
      'spec.clusterIPs: Invalid value: []string{"10.9.0.3"}: failed to allocate IP 10.9.0.3: provided IP is not in the valid range. The range of valid IPs is 10.0.0.0/29',
    ]);
  });

  it.each(['1:2', ':::', '10.0.0.03'])('a clusterIP that is no IP address (%s) is refused', (ip) => {
    expect(create(svcDef, svc({ ports: [{ port: 80 }], clusterIP: ip }))).toEqual([
      `spec.clusterIPs[0]: Invalid value: "${ip}": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`,
    ]);
  });

  it('headless and ExternalName get no address; NodePort gets a node port', () => {
    const headless = svc({ clusterIP: 'None', selector: { app: 'x' } });
    expect(create(svcDef, headless)).toEqual([]);
    expect((headless.spec as { clusterIP: string }).clusterIP).toBe('None');
    const ext = svc({ type: 'ExternalName', externalName: 'db.example.com' });
    expect(create(svcDef, ext)).toEqual([]);
    expect((ext.spec as { clusterIP?: string }).clusterIP).toBeUndefined();
    const np = svc({ type: 'NodePort', ports: [{ port: 80 }] });
    expect(create(svcDef, np)).toEqual([]);
    const nodePort = (np.spec as { ports: Array<{ nodePort: number }> }).ports[0]!.nodePort;
    expect(nodePort).toBeGreaterThanOrEqual(30000);
    expect(nodePort).toBeLessThanOrEqual(32767);
    expect(svcDef.row(np, Date.parse('2024-05-01T12:00:00Z'))).toEqual([
      's',
      'NodePort',
      (np.spec as { clusterIP: string }).clusterIP,
      '<none>',
      `80:${nodePort}/TCP`,
      '5m',
      '<none>',
    ]);
  });

  it.each([
    { name: 'ports required', spec: {}, want: ['spec.ports: Required value'] },
    {
      name: 'two unnamed ports',
      spec: { ports: [{ port: 80 }, { port: 81 }] },
      want: ['spec.ports[0].name: Required value', 'spec.ports[1].name: Required value'],
    },
    {
      name: 'port out of range',
      spec: { ports: [{ port: 70000 }] },
      want: [
        'spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive',
        'spec.ports[0].targetPort: Invalid value: 70000: must be between 1 and 65535, inclusive',
      ],
    },
    {
      name: 'nodePort on a ClusterIP Service',
      spec: { ports: [{ port: 80, nodePort: 30001 }] },
      want: ["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"],
    },
    { name: 'ExternalName needs a name', spec: { type: 'ExternalName' }, want: ['spec.externalName: Required value'] },
    {
      name: 'unknown type',
      spec: { type: 'Magic', ports: [{ port: 1 }] },
      want: [
        'spec.type: Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"',
      ],
    },
  ])('$name', ({ spec, want }) => {
    expect(create(svcDef, svc(spec))).toEqual(want);
  });

  it('an update keeps the allocated ClusterIP when omitted and refuses to change it', () => {
    const old = svc({ ports: [{ port: 80 }] });
    create(svcDef, old);
    const next = svc({ ports: [{ port: 81 }] });
    svcDef.prepareForUpdate(next, old, ctx([old]));
    expect((next.spec as { clusterIP: string }).clusterIP).toBe((old.spec as { clusterIP: string }).clusterIP);
    const other = (old.spec as { clusterIP: string }).clusterIP === '10.0.0.6' ? '10.0.0.5' : '10.0.0.6';
    const moved = svc({ ports: [{ port: 80 }], clusterIP: other });
    svcDef.prepareForUpdate(moved, old, ctx([old]));
    expect(texts(svcDef.validateUpdate(moved, old, ctx([old])))[0]).toBe(
      `spec.clusterIPs[0]: Invalid value: "${other}": may not change once set`,
    );
  });

  it('allocation is random over the range but never hands out a used address', () => {
    const c = parseCidr('10.96.0.0/12');
    expect(allocateClusterIp(c, new Set(), () => 0)).toBe('10.96.0.2');
    expect(allocateClusterIp(c, new Set(['10.96.0.2']), () => 0)).toBe('10.96.0.3');
  });
});

describe('discovery and OpenAPI of the scale subresource', () => {
  it('publishes <kind>/scale as autoscaling/v1 Scale, as kube-apiserver does', async () => {
    const { apiResourceList } = await import('../discovery.js');
    const { buildOpenApiV3 } = await import('../openapi/documents.js');
    const list = apiResourceList([deployment, replicaSet], 'apps', 'v1') as {
      resources: Array<{ name: string; group?: string; version?: string; kind: string; verbs: string[] }>;
    };
    expect(list.resources.find((r) => r.name === 'deployments/scale')).toEqual({
      name: 'deployments/scale',
      singularName: '',
      namespaced: true,
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
      verbs: ['get', 'patch', 'update'],
    });
    const doc = buildOpenApiV3([deployment]).entry('apis/apps/v1')!.document as {
      paths: Record<string, Record<string, { 'x-kubernetes-group-version-kind'?: unknown }>>;
      components: { schemas: Record<string, unknown> };
    };
    expect(
      doc.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale']?.patch?.[
        'x-kubernetes-group-version-kind'
      ],
    ).toEqual({ group: 'autoscaling', version: 'v1', kind: 'Scale' });
    expect(doc.components.schemas['io.k8s.api.autoscaling.v1.Scale']).toBeDefined();
  });
});
