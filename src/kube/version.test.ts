import { describe, expect, it } from 'vitest';
import { COMPONENTS, componentUserAgent, KUBE_VERSION, PLATFORM } from './version.js';

describe('componentUserAgent', () => {
  it.each([
    {
      command: COMPONENTS.kubelet,
      suffix: undefined,
      want: `kubelet/${KUBE_VERSION.gitVersion} (${PLATFORM}) kubernetes/stowage`,
    },
    {
      command: COMPONENTS.provisioner,
      suffix: undefined,
      want: `csi-provisioner/${KUBE_VERSION.gitVersion} (${PLATFORM}) kubernetes/stowage`,
    },
    {
      command: COMPONENTS.controllerManager,
      suffix: 'system:serviceaccount:kube-system:persistent-volume-binder',
      want: `kube-controller-manager/${KUBE_VERSION.gitVersion} (${PLATFORM}) kubernetes/stowage/system:serviceaccount:kube-system:persistent-volume-binder`,
    },
  ])('$command: client-go shape, the manager name before the first /', ({ command, suffix, want }) => {
    const ua = componentUserAgent(command, suffix);
    expect(ua).toBe(want);
    expect(ua.split('/')[0]).toBe(command);
  });

  it('names the platform as Go does', () => {
    expect(PLATFORM).toMatch(/^[a-z0-9]+\/(amd64|arm64|386|arm|[a-z0-9]+)$/);
    if (process.arch === 'x64') expect(PLATFORM.endsWith('/amd64')).toBe(true);
  });
});
