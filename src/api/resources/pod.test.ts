import { describe, expect, it } from 'vitest';
import { ctx, NOW, obj, texts } from './core.test-kit.js';
import { podResource as pod, podSummary } from './pod.js';
import { defaultPullPolicy, podQosClass } from './poddefaults.js';
import type { KubeObject } from './types.js';

const basePod = (spec: Record<string, unknown> = {}): KubeObject =>
  obj('Pod', 'p', { spec: { containers: [{ name: 'c', image: 'busybox:1.36' }], ...spec } }, 'default');

function created(spec: Record<string, unknown> = {}): KubeObject {
  const o = basePod(spec);
  pod.prepareForCreate(o, ctx());
  pod.mutatingAdmission?.(o, undefined, ctx());
  return o;
}

describe('pod defaults', () => {
  it('fills spec and container defaults, phase Pending, default tolerations', () => {
    const o = created();
    expect(o.spec).toMatchObject({
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      terminationGracePeriodSeconds: 30,
      schedulerName: 'default-scheduler',
      securityContext: {},
      enableServiceLinks: true,
      priority: 0,
      preemptionPolicy: 'PreemptLowerPriority',
      containers: [
        {
          name: 'c',
          image: 'busybox:1.36',
          imagePullPolicy: 'IfNotPresent',
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
        },
      ],
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
    });
    expect((o.spec as { serviceAccountName?: string }).serviceAccountName).toBeUndefined();
    expect(o.status).toEqual({ phase: 'Pending', qosClass: 'BestEffort' });
    expect(pod.validateCreate(o, ctx())).toEqual([]);
  });

  it('keeps values the client set, and is idempotent', () => {
    const o = created({ restartPolicy: 'Never', tolerations: [{ operator: 'Exists' }] });
    expect((o.spec as { restartPolicy: string }).restartPolicy).toBe('Never');
    expect((o.spec as { tolerations: unknown[] }).tolerations).toEqual([{ operator: 'Exists' }]);
    const again = structuredClone(o);
    pod.prepareForCreate(again, ctx());
    pod.mutatingAdmission?.(again, undefined, ctx());
    expect(again.spec).toEqual(o.spec);
  });

  it.each([
    ['busybox', 'Always'],
    ['busybox:latest', 'Always'],
    ['registry:5000/busybox', 'Always'],
    ['registry:5000/busybox:1.2', 'IfNotPresent'],
    ['busybox@sha256:abc', 'IfNotPresent'],
  ])('pull policy of %s is %s', (image, want) => expect(defaultPullPolicy(image)).toBe(want));

  it('defaults volumes, probes, ports and requests from limits', () => {
    const o = created({
      volumes: [
        { name: 'a' },
        { name: 'b', secret: { secretName: 's' } },
        { name: 'c', persistentVolumeClaim: { claimName: 'pvc' } },
      ],
      containers: [
        {
          name: 'c',
          image: 'x:1',
          ports: [{ containerPort: 80 }],
          livenessProbe: { httpGet: { port: 80 } },
          resources: { limits: { cpu: '1', memory: '1Gi' } },
        },
      ],
    });
    const spec = o.spec as { volumes: unknown[]; containers: Array<Record<string, unknown>> };
    expect(spec.volumes).toEqual([
      { name: 'a', emptyDir: {} },
      { name: 'b', secret: { secretName: 's', defaultMode: 420 } },
      { name: 'c', persistentVolumeClaim: { claimName: 'pvc' } },
    ]);
    expect(spec.containers[0]).toMatchObject({
      ports: [{ containerPort: 80, protocol: 'TCP' }],
      livenessProbe: {
        httpGet: { port: 80, path: '/', scheme: 'HTTP' },
        timeoutSeconds: 1,
        periodSeconds: 10,
        successThreshold: 1,
        failureThreshold: 3,
      },
      resources: { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1', memory: '1Gi' } },
    });
    expect(o.status).toEqual({ phase: 'Pending', qosClass: 'Guaranteed' });
  });

  it.each([
    ['no resources', [{}], 'BestEffort'],
    ['requests only', [{ requests: { cpu: '100m' } }], 'Burstable'],
    [
      'limits equal requests',
      [{ requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1000m', memory: '1024Mi' } }],
      'Guaranteed',
    ],
    [
      'one container short',
      [{ limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1', memory: '1Gi' } }, {}],
      'Burstable',
    ],
  ])('qos: %s → %s', (_n, resources, want) => {
    const o = basePod({ containers: resources.map((r, i) => ({ name: `c${i}`, image: 'x', resources: r })) });
    expect(podQosClass(o)).toBe(want);
  });
});

describe('pod create validation', () => {
  it.each([
    ['no containers', { containers: [] }, ['spec.containers: Required value']],
    ['container without image', { containers: [{ name: 'c' }] }, ['spec.containers[0].image: Required value']],
    ['container without name', { containers: [{ image: 'x' }] }, ['spec.containers[0].name: Required value']],
    [
      'duplicate container names across init and regular',
      { initContainers: [{ name: 'c', image: 'x' }], containers: [{ name: 'c', image: 'x' }] },
      ['spec.containers[0].name: Duplicate value: "c"'],
    ],
    [
      'duplicate volume names',
      {
        volumes: [
          { name: 'v', emptyDir: {} },
          { name: 'v', emptyDir: {} },
        ],
      },
      ['spec.volumes[1].name: Duplicate value: "v"'],
    ],
    [
      'two volume sources',
      { volumes: [{ name: 'v', emptyDir: {}, hostPath: { path: '/x' } }] },
      ['spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type'],
    ],
    [
      'pvc without claimName',
      { volumes: [{ name: 'v', persistentVolumeClaim: {} }] },
      ['spec.volumes[0].persistentVolumeClaim.claimName: Required value'],
    ],
    [
      'mount of a missing volume',
      { containers: [{ name: 'c', image: 'x', volumeMounts: [{ name: 'nope', mountPath: '/d' }] }] },
      ['spec.containers[0].volumeMounts[0].name: Not found: "nope"'],
    ],
    [
      'bad restartPolicy',
      { restartPolicy: 'Sometimes' },
      ['spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'],
    ],
    [
      'bad port',
      { containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 70000 }] }] },
      ['spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive'],
    ],
    [
      'bad pull policy',
      { containers: [{ name: 'c', image: 'x', imagePullPolicy: 'Sometimes' }] },
      [
        'spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"',
      ],
    ],
    [
      'requests above limits',
      { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '2' }, limits: { cpu: '1' } } }] },
      ['spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1'],
    ],
    [
      'block device on a non-PVC volume',
      {
        volumes: [{ name: 'v', emptyDir: {} }],
        containers: [{ name: 'c', image: 'x', volumeDevices: [{ name: 'v', devicePath: '/dev/x' }] }],
      },
      [
        'spec.containers[0].volumeDevices[0].name: Invalid value: "v": can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode',
      ],
    ],
  ])('%s', (_n, spec, want) => {
    expect(texts(pod.validateCreate(created(spec), ctx()))).toEqual(want);
  });

  it('rejects a bad name', () => {
    const o = created();
    o.metadata.name = 'Bad_Name';
    expect(texts(pod.validateCreate(o, ctx()))[0]).toMatch(
      /^metadata\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/,
    );
    expect(pod.validateCreate(o, ctx())[0]?.type).toBe('FieldValueInvalid');
  });
});

describe('pod update', () => {
  const update = (mutate: (spec: Record<string, unknown>) => void) => {
    const old = created({ activeDeadlineSeconds: 100, tolerations: [{ key: 'k0', operator: 'Exists' }] });
    old.status = { phase: 'Running' };
    const next = structuredClone(old);
    next.status = { phase: 'Pending' };
    mutate(next.spec as Record<string, unknown>);
    pod.prepareForUpdate(next, old, ctx());
    pod.mutatingAdmission?.(next, old, ctx());
    return { next, causes: texts(pod.validateUpdate(next, old, ctx())) };
  };

  it.each([
    [
      'image change',
      (s: Record<string, unknown>) => ((s.containers as Array<Record<string, unknown>>)[0]!.image = 'busybox:1.37'),
    ],
    ['lower activeDeadlineSeconds', (s: Record<string, unknown>) => (s.activeDeadlineSeconds = 50)],
    [
      'add a toleration',
      (s: Record<string, unknown>) => (s.tolerations as unknown[]).push({ key: 'k', operator: 'Exists' }),
    ],
    ['set nodeName once', (s: Record<string, unknown>) => (s.nodeName = 'node-1')],
    ['omit defaulted fields', (s: Record<string, unknown>) => delete s.dnsPolicy],
    [
      'omit admission-set fields (replace with the original YAML)',
      (s: Record<string, unknown>) => {
        s.tolerations = [{ key: 'k0', operator: 'Exists' }];
        delete s.priority;
        delete s.preemptionPolicy;
      },
    ],
  ])('allows %s and keeps status', (_n, mutate) => {
    const { next, causes } = update(mutate);
    expect(causes).toEqual([]);
    expect(next.status).toEqual({ phase: 'Running' });
  });

  it.each([
    [
      'restartPolicy change',
      (s: Record<string, unknown>) => (s.restartPolicy = 'Never'),
      'spec: Forbidden: pod updates may not change fields other than',
    ],
    [
      'adding a volume',
      (s: Record<string, unknown>) => (s.volumes = [{ name: 'v', emptyDir: {} }]),
      'spec: Forbidden: pod updates may not change fields',
    ],
    [
      'raising activeDeadlineSeconds',
      (s: Record<string, unknown>) => (s.activeDeadlineSeconds = 200),
      'must be less than or equal to previous value',
    ],
    ['removing a toleration', (s: Record<string, unknown>) => (s.tolerations = []), 'spec.tolerations: Forbidden'],
    [
      'removing the image',
      (s: Record<string, unknown>) => ((s.containers as Array<Record<string, unknown>>)[0]!.image = ''),
      'spec.containers[0].image: Required value',
    ],
  ])('rejects %s', (_n, mutate, want) => {
    expect(update(mutate).causes.join('\n')).toContain(want);
  });

  it('nodeName cannot be changed once set', () => {
    const old = created({ nodeName: 'a' });
    const next = structuredClone(old);
    (next.spec as Record<string, unknown>).nodeName = 'b';
    pod.prepareForUpdate(next, old, ctx());
    pod.mutatingAdmission?.(next, old, ctx());
    expect(texts(pod.validateUpdate(next, old, ctx())).join()).toContain('spec: Forbidden');
  });
});

describe('pod status update', () => {
  it('keeps spec and owner references, checks the phase', () => {
    const old = created();
    old.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'X', name: 'x', uid: '1' }];
    const next = structuredClone(old);
    next.spec = {};
    next.metadata.ownerReferences = [];
    next.status = { phase: 'Running', podIP: '10.0.0.1' };
    pod.prepareForStatusUpdate(next, old, ctx());
    expect(next.spec).toEqual(old.spec);
    expect(next.metadata.ownerReferences).toEqual(old.metadata.ownerReferences);
    expect(pod.validateStatusUpdate(next, old, ctx())).toEqual([]);
  });

  it.each([
    ['Pending', 'Bogus', 'status.phase: Unsupported value: "Bogus"'],
    ['Succeeded', 'Running', 'status.phase: Forbidden: cannot transition from terminal phase "Succeeded" to "Running"'],
  ])('%s → %s rejected', (from, to, want) => {
    const old = created();
    old.status = { phase: from };
    const next = structuredClone(old);
    next.status = { phase: to };
    expect(texts(pod.validateStatusUpdate(next, old, ctx())).join()).toContain(want);
  });
});

describe('pod printing', () => {
  const running = (status: Record<string, unknown>, spec: Record<string, unknown> = {}) => {
    const o = created(spec);
    o.status = status;
    return o;
  };
  it('columns as kube-apiserver 1.30 declares them', () => {
    expect(pod.columns.map((c) => [c.name, c.priority])).toEqual([
      ['Name', 0],
      ['Ready', 0],
      ['Status', 0],
      ['Restarts', 0],
      ['Age', 0],
      ['IP', 1],
      ['Node', 1],
      ['Nominated Node', 1],
      ['Readiness Gates', 1],
    ]);
  });

  it.each([
    [
      'pending pod',
      { phase: 'Pending' },
      {},
      ['p', '0/1', 'Pending', '0', '5m', '<none>', '<none>', '<none>', '<none>'],
    ],
    [
      'running and ready',
      {
        phase: 'Running',
        podIPs: [{ ip: '10.1.2.3' }],
        containerStatuses: [{ name: 'c', ready: true, restartCount: 0, state: { running: {} } }],
      },
      { nodeName: 'n1' },
      ['p', '1/1', 'Running', '0', '5m', '10.1.2.3', 'n1', '<none>', '<none>'],
    ],
    [
      'crash looping with restarts',
      {
        phase: 'Running',
        containerStatuses: [
          {
            name: 'c',
            ready: false,
            restartCount: 3,
            state: { waiting: { reason: 'CrashLoopBackOff' } },
            lastState: { terminated: { exitCode: 1, finishedAt: '2024-05-01T11:58:00Z' } },
          },
        ],
      },
      {},
      ['p', '0/1', 'CrashLoopBackOff', '3 (2m ago)', '5m', '<none>', '<none>', '<none>', '<none>'],
    ],
    [
      'init container running',
      { phase: 'Pending', initContainerStatuses: [{ name: 'i', state: { running: {} } }] },
      { initContainers: [{ name: 'i', image: 'x' }] },
      ['p', '0/1', 'Init:0/1', '0', '5m', '<none>', '<none>', '<none>', '<none>'],
    ],
    [
      'readiness gates',
      { phase: 'Running', conditions: [{ type: 'g1', status: 'True' }] },
      { readinessGates: [{ conditionType: 'g1' }, { conditionType: 'g2' }] },
      ['p', '0/1', 'Running', '0', '5m', '<none>', '<none>', '<none>', '1/2'],
    ],
  ])('%s', (_n, status, spec, want) => {
    expect(pod.row(running(status, spec), NOW)).toEqual(want);
  });

  it('Terminating while being deleted', () => {
    const o = running({ phase: 'Running' });
    o.metadata.deletionTimestamp = '2024-05-01T12:00:00Z';
    expect(podSummary(o, NOW).status).toBe('Terminating');
  });

  it('field selectors', () => {
    const o = running({ phase: 'Running', podIP: '10.0.0.9' }, { nodeName: 'n1' });
    const f = pod.fieldSelectors;
    expect([
      f['spec.nodeName']?.(o),
      f['status.phase']?.(o),
      f['spec.restartPolicy']?.(o),
      f['spec.schedulerName']?.(o),
      f['status.podIP']?.(o),
      f['spec.hostNetwork']?.(o),
    ]).toEqual(['n1', 'Running', 'Always', 'default-scheduler', '10.0.0.9', 'false']);
  });

  it('patch meta merges containers by name', () => {
    expect(pod.patchMeta(['spec', 'containers'])).toEqual({ strategy: 'merge', mergeKey: 'name' });
  });
});
