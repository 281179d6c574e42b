/**
 * How a sandbox that could not be created reads on a cluster: the kubelet's
 * `FailedCreatePodSandBox` Warning, `Failed to create pod sandbox: <error>` with the error as Go's
 * gRPC status prints it (`rpc error: code = Unknown desc = …`). The pod's status meanwhile shows
 * its containers waiting in ContainerCreating and `PodReadyToStartContainers` False (./pod-status.ts).
 */
import { GrpcError } from '../../csi/errors.js';

export const FAILED_CREATE_POD_SANDBOX = 'FailedCreatePodSandBox';

/** A gRPC code name as grpc-go's codes.Code String() spells it (`NOT_FOUND` → `NotFound`). */
export function goCodeName(name: string): string {
  if (name === 'CANCELLED') return 'Canceled';
  return name
    .toLowerCase()
    .split('_')
    .map((w) => (w === '' ? '' : w[0]!.toUpperCase() + w.slice(1)))
    .join('');
}

/** An error as a Go client prints it: a gRPC status as `rpc error: code = X desc = Y`. */
export function goErrorText(e: unknown): string {
  if (e instanceof GrpcError) return `rpc error: code = ${goCodeName(e.grpcCodeName)} desc = ${e.details}`;
  return e instanceof Error ? e.message : String(e);
}

export function failedCreatePodSandboxMessage(e: unknown): string {
  return `Failed to create pod sandbox: ${goErrorText(e)}`;
}
