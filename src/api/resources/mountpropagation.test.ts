import { describe, expect, it } from 'vitest';
import { ctx, obj, texts } from './core.test-kit.js';
import { podResource as pod } from './pod.js';

function causes(mountPropagation: string, privileged?: boolean): string[] {
  const o = obj(
    'Pod',
    'p',
    {
      spec: {
        containers: [
          {
            name: 'c',
            image: 'busybox:1.36',
            ...(privileged !== undefined ? { securityContext: { privileged } } : {}),
            volumeMounts: [{ name: 'pods', mountPath: '/var/lib/kubelet/pods', mountPropagation }],
          },
        ],
        volumes: [{ name: 'pods', hostPath: { path: '/var/lib/kubelet/pods', type: 'Directory' } }],
      },
    },
    'default',
  );
  pod.prepareForCreate(o, ctx());
  return texts(pod.validateCreate(o, ctx()));
}

describe('mountPropagation (validateMountPropagation)', () => {
  it('accepts None and HostToContainer for any container, Bidirectional for a privileged one', () => {
    expect(causes('None')).toEqual([]);
    expect(causes('HostToContainer')).toEqual([]);
    expect(causes('Bidirectional', true)).toEqual([]);
  });

  it('refuses Bidirectional for an unprivileged container and an unknown mode, with kube’s messages', () => {
    expect(causes('Bidirectional', false)).toEqual([
      'spec.containers[0].volumeMounts[0].mountPropagation: Forbidden: Bidirectional mount propagation is available only to privileged containers',
    ]);
    expect(causes('Shared', true)).toEqual([
      'spec.containers[0].volumeMounts[0].mountPropagation: Unsupported value: "Shared": supported values: "Bidirectional", "HostToContainer", "None"',
    ]);
  });
});
