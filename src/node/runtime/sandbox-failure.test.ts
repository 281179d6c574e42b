import { status as Status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { toCriError } from './client.js';
import { failedCreatePodSandboxMessage, goCodeName } from './sandbox-failure.js';

describe('FailedCreatePodSandBox message', () => {
  it.each([
    ['UNKNOWN', 'Unknown'],
    ['NOT_FOUND', 'NotFound'],
    ['CANCELLED', 'Canceled'],
    ['DEADLINE_EXCEEDED', 'DeadlineExceeded'],
  ])('%s is %s in Go', (from, to) => expect(goCodeName(from)).toBe(to));

  it("reads as the kubelet's, the CRI error as grpc-go prints it", () => {
    const err = toCriError(
      '/runtime.v1.RuntimeService/RunPodSandbox',
      Object.assign(new Error('2 UNKNOWN: failed'), {
        code: Status.UNKNOWN,
        details: 'failed to get sandbox image "registry.k8s.io/pause:3.6": failed to pull image',
        metadata: {},
      }),
    );
    expect(failedCreatePodSandboxMessage(err)).toBe(
      'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox image "registry.k8s.io/pause:3.6": failed to pull image',
    );
  });
});
