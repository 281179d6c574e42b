import { describe, expect, it } from 'vitest';
import type { Pod, ResourceRequirements } from 'kubernetes-types/core/v1.js';
import {
  containerConfig,
  linuxResources,
  volumeForcesReadOnly,
  podLogDir,
  pullPolicyOf,
  sandboxConfig,
} from './container-config.js';
import { containerEnv } from './env.js';

const pod: Pod = {
  metadata: { name: 'p', namespace: 'ns', uid: 'u1', labels: { app: 'web' } },
  spec: {
    nodeName: 'n1',
    containers: [
      {
        name: 'c',
        image: 'reg/busybox:1',
        command: ['sh', '-c'],
        args: ['echo $(GREETING) $$(NOT) $(MISSING)'],
        workingDir: '/data',
        env: [
          { name: 'NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          { name: 'GREETING', value: 'hello $(NAME)' },
          { name: 'APP', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
          { name: 'IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
        ],
        volumeMounts: [
          { name: 'data', mountPath: '/data', readOnly: true },
          { name: 'data', mountPath: '/sub', subPath: 'a/b' },
        ],
      },
    ],
  },
};
const src = { hostIPs: ['10.0.0.5'], configMap: () => undefined, secret: () => undefined };

describe('container config', () => {
  it('builds the CRI container: command/args expanded, mounts at their mountPath from the given host paths, labels, log path', () => {
    const c = pod.spec!.containers[0]!;
    const cfg = containerConfig({
      pod,
      container: c,
      attempt: 2,
      imageRef: 'sha256:abc',
      env: containerEnv(pod, c, src).env,
      mounts: new Map([
        [0, '/host/data'],
        [1, '/host/subpaths/1'],
      ]),
    });
    expect(cfg.args).toEqual(['echo hello p $(NOT) $(MISSING)']);
    expect(cfg.workingDir).toBe('/data');
    expect(cfg.mounts).toEqual([
      { containerPath: '/data', hostPath: '/host/data', readonly: true, propagation: 'PROPAGATION_PRIVATE' },
      { containerPath: '/sub', hostPath: '/host/subpaths/1', readonly: false, propagation: 'PROPAGATION_PRIVATE' },
    ]);
    expect(cfg.metadata).toEqual({ name: 'c', attempt: 2 });
    expect(cfg.logPath).toBe('c/2.log');
    expect(cfg.labels).toMatchObject({ 'io.kubernetes.pod.uid': 'u1', 'io.kubernetes.container.name': 'c' });
  });

  it('block volumes become CRI devices at their devicePath; the security context and fsGroup/supplementalGroups pass through', () => {
    const p: Pod = {
      ...pod,
      spec: { ...pod.spec!, securityContext: { runAsUser: 1000, fsGroup: 2000, supplementalGroups: [3000] } },
    };
    const c = {
      name: 'c',
      volumeDevices: [{ name: 'raw', devicePath: '/dev/xvda' }],
      securityContext: {
        runAsGroup: 1500,
        readOnlyRootFilesystem: true,
        privileged: false,
        capabilities: { add: ['NET_ADMIN'], drop: ['ALL'] },
      },
    };
    const cfg = containerConfig({
      pod: p,
      container: c,
      attempt: 0,
      imageRef: 'sha256:abc',
      env: new Map(),
      mounts: new Map(),
      devices: new Map([[0, '/var/lib/kubelet/pods/u1/volumeDevices/raw']]),
    });
    expect(cfg.devices).toEqual([
      { containerPath: '/dev/xvda', hostPath: '/var/lib/kubelet/pods/u1/volumeDevices/raw', permissions: 'mrw' },
    ]);
    expect(cfg.linux?.securityContext).toMatchObject({
      runAsUser: { value: 1000 },
      runAsGroup: { value: 1500 },
      readonlyRootfs: true,
      privileged: false,
      supplementalGroups: [2000, 3000],
      capabilities: { addCapabilities: ['NET_ADMIN'], dropCapabilities: ['ALL'] },
    });
  });

  it('configMap, secret, downwardAPI and projected volumes are mounted read-only whatever the volumeMount says', () => {
    const names = ['cm', 'sec', 'down', 'proj', 'empty', 'claim', 'claimro'];
    const p: Pod = {
      metadata: { name: 'p', namespace: 'ns', uid: 'u1' },
      spec: {
        volumes: [
          { name: 'cm', configMap: { name: 'x' } },
          { name: 'sec', secret: { secretName: 'x' } },
          { name: 'down', downwardAPI: { items: [] } },
          { name: 'proj', projected: { sources: [] } },
          { name: 'empty', emptyDir: {} },
          { name: 'claim', persistentVolumeClaim: { claimName: 'c' } },
          { name: 'claimro', persistentVolumeClaim: { claimName: 'c', readOnly: true } },
        ],
        containers: [
          { name: 'c', volumeMounts: names.map((name) => ({ name, mountPath: `/${name}`, readOnly: false })) },
        ],
      },
    };
    const cfg = containerConfig({
      pod: p,
      container: p.spec!.containers[0]!,
      attempt: 0,
      imageRef: 'sha256:abc',
      env: new Map(),
      mounts: new Map(names.map((n, i) => [i, `/host/${n}`])),
    });
    expect(Object.fromEntries(cfg.mounts!.map((m) => [m.containerPath, m.readonly]))).toEqual({
      '/cm': true,
      '/sec': true,
      '/down': true,
      '/proj': true,
      '/empty': false,
      '/claim': false,
      '/claimro': true,
    });
    expect(volumeForcesReadOnly(undefined)).toBe(false);
  });

  it('puts the sandbox on the host network, logs in the kubelet layout', () => {
    const s = sandboxConfig(pod, 1, '/root');
    expect(s.linux?.securityContext?.namespaceOptions?.network).toBe('NODE');
    expect(s.logDirectory).toBe(podLogDir('/root', pod));
    expect(s.logDirectory).toBe('/root/logs/pods/ns_p_u1');
    expect(s.metadata).toEqual({ name: 'p', namespace: 'ns', uid: 'u1', attempt: 1 });
  });

  it.each([
    { image: 'busybox', want: 'Always' },
    { image: 'busybox:latest', want: 'Always' },
    { image: '127.0.0.1:5000/busybox', want: 'Always' },
    { image: '127.0.0.1:5000/busybox:t1', want: 'IfNotPresent' },
    { image: 'busybox@sha256:abc', want: 'IfNotPresent' },
  ])('default pull policy of $image: $want', ({ image, want }) => {
    expect(pullPolicyOf({ name: 'c', image })).toBe(want);
  });

  it.each<{ resources: ResourceRequirements; want: object }>([
    { resources: {}, want: { cpuShares: 2 } },
    { resources: { requests: { cpu: '250m' } }, want: { cpuShares: 256 } },
    {
      resources: { limits: { cpu: '1', memory: '64Mi' } },
      want: { cpuShares: 1024, cpuPeriod: 100_000, cpuQuota: 100_000, memoryLimitInBytes: 67_108_864 },
    },
    {
      resources: { requests: { cpu: '100m' }, limits: { cpu: '5m' } },
      want: { cpuShares: 102, cpuPeriod: 100_000, cpuQuota: 1_000 },
    },
  ])('resources $resources → $want', ({ resources, want }) => {
    expect(linuxResources({ name: 'c', resources })).toEqual(want);
  });
});
