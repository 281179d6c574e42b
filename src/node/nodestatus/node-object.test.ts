import { describe, it, expect } from 'vitest';
import type { Node } from 'kubernetes-types/core/v1.js';
import type { HostInfo } from './host.js';
import { firstInternalIPv4, goArch, osImageFrom } from './host.js';
import { microTime, missingLabels, newLease, nodeLabels, nodeStatus, renewedLease } from './node-object.js';

const host: HostInfo = {
  hostname: 'box',
  os: 'linux',
  arch: 'amd64',
  kernelVersion: '6.1.0',
  osImage: 'Debian GNU/Linux 12 (bookworm)',
  internalIP: '10.0.0.5',
  cpus: 4,
  memoryBytes: 8 * 1024 ** 3,
  machineID: 'm',
  bootID: 'b',
};
const T0 = Date.UTC(2026, 0, 1, 0, 0, 0);

describe('node object', () => {
  it('labels the node like the kubelet', () => {
    expect(nodeLabels('n1', host)).toMatchObject({
      'kubernetes.io/hostname': 'n1',
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'amd64',
    });
  });

  it('finds missing labels and ignores others', () => {
    const node: Node = { metadata: { labels: { 'kubernetes.io/hostname': 'n1', extra: 'x' } } };
    expect(missingLabels(node, { 'kubernetes.io/hostname': 'n1', 'kubernetes.io/os': 'linux' })).toEqual({
      'kubernetes.io/os': 'linux',
    });
    expect(missingLabels(node, { 'kubernetes.io/hostname': 'n1' })).toBeUndefined();
  });

  it('reports Ready and no pressure, addresses, node info and capacity', () => {
    const s = nodeStatus({ host, nodeName: 'n1', kubeletVersion: 'v1.30.0', nowMs: T0 });
    const ready = s.conditions?.find((c) => c.type === 'Ready');
    expect(ready).toMatchObject({ status: 'True', reason: 'KubeletReady', lastHeartbeatTime: '2026-01-01T00:00:00Z' });
    expect(
      s.conditions
        ?.filter((c) => c.status === 'False')
        .map((c) => c.type)
        .sort(),
    ).toEqual(['DiskPressure', 'MemoryPressure', 'PIDPressure']);
    expect(s.addresses).toEqual([
      { type: 'InternalIP', address: '10.0.0.5' },
      { type: 'Hostname', address: 'box' },
    ]);
    expect(s.nodeInfo).toMatchObject({
      kubeletVersion: 'v1.30.0',
      operatingSystem: 'linux',
      architecture: 'amd64',
      kernelVersion: '6.1.0',
    });
    expect(s.capacity).toEqual({ cpu: '4', memory: '8388608Ki', pods: '110' });
  });

  it('publishes the endpoint as the kubelet does', () => {
    expect(
      nodeStatus({ host, nodeName: 'n1', kubeletVersion: 'v', nowMs: T0, endpoint: { port: 4321 } }).daemonEndpoints,
    ).toEqual({ kubeletEndpoint: { Port: 4321 } });
    expect(nodeStatus({ host, nodeName: 'n1', kubeletVersion: 'v', nowMs: T0 }).daemonEndpoints).toBeUndefined();
  });

  it('keeps lastTransitionTime while a condition holds; the heartbeat moves', () => {
    const first = nodeStatus({ host, nodeName: 'n1', kubeletVersion: 'v', nowMs: T0 });
    const later = nodeStatus({ current: first, host, nodeName: 'n1', kubeletVersion: 'v', nowMs: T0 + 60_000 });
    const ready = later.conditions?.find((c) => c.type === 'Ready');
    expect(ready?.lastTransitionTime).toBe('2026-01-01T00:00:00Z');
    expect(ready?.lastHeartbeatTime).toBe('2026-01-01T00:01:00Z');
  });

  it('says whether pods run containers: the runtime condition and containerRuntimeVersion', () => {
    const none = nodeStatus({ host, nodeName: 'n1', kubeletVersion: 'v', nowMs: T0, runtime: { kind: 'none' } });
    expect(none.conditions?.find((c) => c.type === 'ContainerRuntimeUnavailable')).toMatchObject({
      status: 'True',
      reason: 'NoContainerRuntime',
    });
    expect(none.nodeInfo?.containerRuntimeVersion).toBe('');
    const cri = nodeStatus({
      host,
      nodeName: 'n1',
      kubeletVersion: 'v',
      nowMs: T0,
      runtime: { kind: 'cri', endpoint: '/run/c.sock', name: 'containerd', version: '1.6.20' },
    });
    expect(cri.conditions?.find((c) => c.type === 'ContainerRuntimeUnavailable')).toMatchObject({
      status: 'False',
      reason: 'ContainerRuntimeConnected',
    });
    expect(cri.nodeInfo?.containerRuntimeVersion).toBe('containerd://1.6.20');
    expect(cri.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    const down = nodeStatus({
      current: cri,
      host,
      nodeName: 'n1',
      kubeletVersion: 'v',
      nowMs: T0 + 1000,
      runtime: {
        kind: 'cri',
        endpoint: '/run/c.sock',
        name: 'containerd',
        version: '1.6.20',
        down: 'connection refused',
      },
    });
    expect(down.conditions?.find((c) => c.type === 'ContainerRuntimeUnavailable')).toMatchObject({
      status: 'True',
      reason: 'ContainerRuntimeDown',
      message: 'container runtime containerd://1.6.20 at /run/c.sock is down: connection refused',
    });
    expect(down.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'KubeletNotReady',
      message: 'container runtime is down',
      lastTransitionTime: '2026-01-01T00:00:01Z',
    });
  });

  it('builds and renews the node lease', () => {
    const node: Node = { metadata: { name: 'n1', uid: 'u1' } };
    const l = newLease(node, T0);
    expect(l.metadata).toMatchObject({
      name: 'n1',
      namespace: 'kube-node-lease',
      ownerReferences: [{ kind: 'Node', name: 'n1', uid: 'u1' }],
    });
    expect(l.spec).toEqual({
      holderIdentity: 'n1',
      leaseDurationSeconds: 40,
      renewTime: '2026-01-01T00:00:00.000000Z',
    });
    expect(renewedLease(l, 'n1', T0 + 10_123).spec?.renewTime).toBe('2026-01-01T00:00:10.123000Z');
    expect(microTime(T0 + 5)).toBe('2026-01-01T00:00:00.005000Z');
  });

  it('host helpers', () => {
    expect(goArch('x64')).toBe('amd64');
    expect(goArch('arm64')).toBe('arm64');
    expect(osImageFrom('NAME="x"\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n')).toBe(
      'Debian GNU/Linux 12 (bookworm)',
    );
    expect(
      firstInternalIPv4({
        lo: [{ address: '127.0.0.1', family: 'IPv4', internal: true, netmask: '', mac: '', cidr: null }],
        eth0: [{ address: '10.1.2.3', family: 'IPv4', internal: false, netmask: '', mac: '', cidr: null }],
      }),
    ).toBe('10.1.2.3');
  });
});
