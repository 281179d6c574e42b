import type { Container, Pod, PodSpec } from 'kubernetes-types/core/v1.js';
import { describe, expect, it } from 'vitest';
import { containerConfig, sandboxConfig } from './container-config.js';
import { hasPrivilegedContainer, processNamespaces } from './security.js';

const mkPod = (spec: Partial<PodSpec>, c: Partial<Container> = {}): Pod => ({
  metadata: { name: 'p', namespace: 'ns', uid: 'u' },
  spec: { containers: [{ name: 'c', image: 'i', ...c }], ...spec },
});

describe('pod security for the CRI', () => {
  it.each([
    ['a plain pod', {}, { pid: 'CONTAINER', ipc: 'POD' }],
    ['hostPID', { hostPID: true }, { pid: 'NODE', ipc: 'POD' }],
    ['shareProcessNamespace', { shareProcessNamespace: true }, { pid: 'POD', ipc: 'POD' }],
    ['hostIPC', { hostIPC: true }, { pid: 'CONTAINER', ipc: 'NODE' }],
  ])('%s: its PID and IPC namespaces', (_, spec, want) => {
    expect(processNamespaces(mkPod(spec))).toEqual(want);
    const sandbox = sandboxConfig(mkPod(spec), 0, '/root');
    expect(sandbox.linux?.securityContext?.namespaceOptions).toMatchObject(want);
  });

  it('the sandbox is privileged when any container is (init containers too)', () => {
    expect(hasPrivilegedContainer(mkPod({}))).toBe(false);
    const privileged = mkPod({}, { securityContext: { privileged: true } });
    expect(sandboxConfig(privileged, 0, '/root').linux?.securityContext?.privileged).toBe(true);
    const init = mkPod({ initContainers: [{ name: 'i', image: 'i', securityContext: { privileged: true } }] });
    expect(hasPrivilegedContainer(init)).toBe(true);
  });

  it('volume mounts carry their propagation; a privileged container with capabilities and hostPID', () => {
    const p = mkPod(
      { hostPID: true },
      {
        securityContext: { privileged: true, capabilities: { add: ['SYS_ADMIN'] } },
        volumeMounts: [
          { name: 'a', mountPath: '/a', mountPropagation: 'Bidirectional' },
          { name: 'b', mountPath: '/b', mountPropagation: 'HostToContainer' },
          { name: 'c', mountPath: '/c' },
        ],
      },
    );
    const cfg = containerConfig({
      pod: p,
      container: p.spec!.containers[0]!,
      attempt: 0,
      imageRef: 'sha256:x',
      env: new Map(),
      mounts: new Map([
        [0, '/h/a'],
        [1, '/h/b'],
        [2, '/h/c'],
      ]),
    });
    expect(cfg.mounts?.map((m) => m.propagation)).toEqual([
      'PROPAGATION_BIDIRECTIONAL',
      'PROPAGATION_HOST_TO_CONTAINER',
      'PROPAGATION_PRIVATE',
    ]);
    expect(cfg.linux?.securityContext).toMatchObject({
      privileged: true,
      namespaceOptions: { network: 'NODE', pid: 'NODE', ipc: 'POD' },
      capabilities: { addCapabilities: ['SYS_ADMIN'], dropCapabilities: [] },
    });
  });
});
