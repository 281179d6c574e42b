import { describe, expect, it } from 'vitest';
import type { LifecycleHandler, Pod } from 'kubernetes-types/core/v1.js';
import { hookFailureMessage, podDescription } from './hooks.js';

const pod: Pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u1' } };

describe('lifecycle hook messages', () => {
  it('names the pod as the kubelet does', () => {
    expect(podDescription(pod)).toBe('p_ns(u1)');
  });

  it.each<{ name: string; h: LifecycleHandler; output: string; want: string }>([
    {
      name: 'exec',
      h: { exec: { command: ['sh', '-c', 'exit 3'] } },
      output: 'oops\n',
      want: 'Exec lifecycle hook ([sh -c exit 3]) for Container "c" in Pod "p_ns(u1)" failed - error: command \'sh -c exit 3\' exited with non-zero status, message: "oops\\n"',
    },
    {
      name: 'httpGet',
      h: { httpGet: { path: '/stop', port: 8080 } },
      output: 'HTTP probe failed with statuscode: 500',
      want: 'HTTP lifecycle hook (/stop) for Container "c" in Pod "p_ns(u1)" failed - error: HTTP probe failed with statuscode: 500',
    },
  ])('$name failure', ({ h, output, want }) => {
    expect(hookFailureMessage(pod, { name: 'c' }, h, { result: 'failure', output })).toBe(want);
  });
});
