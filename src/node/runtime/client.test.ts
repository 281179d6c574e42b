import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { handler } from '../../csi/fake-driver.test-kit.js';
import { CriClient, CriError, subjectOf, type CriCallTrace } from './client.js';
import { criProto, criServices } from './proto/index.js';

let dir: string;
let server: grpc.Server | undefined;
let client: CriClient | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'stowage-cri-client-'));
});
afterEach(async () => {
  client?.close();
  client = undefined;
  await new Promise<void>((resolve) => (server ? server.tryShutdown(() => resolve()) : resolve()));
  server = undefined;
  rmSync(dir, { recursive: true, force: true });
});

async function startFakeRuntime(
  runtime: grpc.UntypedServiceImplementation,
  image: grpc.UntypedServiceImplementation = {},
): Promise<string> {
  const socket = join(dir, 'cri.sock');
  server = new grpc.Server();
  server.addService(criServices().runtime, runtime);
  server.addService(criServices().image, image);
  await new Promise<void>((resolve, reject) =>
    server?.bindAsync(`unix://${socket}`, grpc.ServerCredentials.createInsecure(), (err) =>
      err ? reject(err) : resolve(),
    ),
  );
  return `unix://${socket}`;
}

describe('cri.proto field numbers (those of the CRI API)', () => {
  const rt = () => criProto().runtime.v1.RuntimeService.service;
  it.each([
    {
      name: 'StopContainerRequest container_id=1 timeout=2',
      encode: () => rt().StopContainer.requestSerialize({ containerId: 'c', timeout: 30 }),
      want: [0x0a, 0x01, 0x63, 0x10, 30],
    },
    {
      name: 'ContainerStatus exit_code=7 reason=10 (inside ContainerStatusResponse status=1)',
      encode: () => rt().ContainerStatus.responseSerialize({ status: { exitCode: 2, reason: 'r' } }),
      want: [0x0a, 0x05, 0x38, 0x02, 0x52, 0x01, 0x72],
    },
    {
      name: 'PodSandboxConfig linux=8 > security_context=2 > namespace_options=1 > network=1 NODE',
      encode: () =>
        rt().RunPodSandbox.requestSerialize({
          config: { linux: { securityContext: { namespaceOptions: { network: 'NODE' } } } },
        }),
      want: [0x0a, 0x08, 0x42, 0x06, 0x12, 0x04, 0x0a, 0x02, 0x08, 0x02],
    },
    {
      name: 'ContainerConfig working_dir=5, Mount container_path=1 readonly=3 inside mounts=7',
      encode: () =>
        rt().CreateContainer.requestSerialize({
          config: { workingDir: 'w', mounts: [{ containerPath: 'p', readonly: true }] },
        }),
      want: [0x12, 0x0a, 0x2a, 0x01, 0x77, 0x3a, 0x05, 0x0a, 0x01, 0x70, 0x18, 0x01],
    },
  ])('$name', ({ encode, want }) => {
    expect([...encode()]).toEqual(want);
  });
});

describe('CriClient', () => {
  it('calls the runtime and records each call with what it was about', async () => {
    const endpoint = await startFakeRuntime({
      Version: handler(() => ({
        version: '0.1.0',
        runtimeName: 'fake',
        runtimeVersion: '1.0',
        runtimeApiVersion: 'v1',
      })),
      StartContainer: handler(() => ({})),
    });
    client = new CriClient({ endpoint });
    await client.connect(5_000);
    expect((await client.version()).runtimeName).toBe('fake');
    await client.startContainer('c1');
    const calls: readonly CriCallTrace[] = client.trace();
    expect(calls.map((c) => [c.method, c.code, c.containerId])).toEqual([
      ['/runtime.v1.RuntimeService/Version', 'OK', undefined],
      ['/runtime.v1.RuntimeService/StartContainer', 'OK', 'c1'],
    ]);
  });

  it('turns a gRPC status into a CriError and traces the failure', async () => {
    const endpoint = await startFakeRuntime({
      ContainerStatus: handler(() => {
        throw { code: grpc.status.NOT_FOUND, details: 'container "c9" not found' };
      }),
    });
    client = new CriClient({ endpoint });
    const err = await client.containerStatus('c9').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CriError);
    expect(err).toMatchObject({
      code: 'NotFound',
      grpcCodeName: 'NOT_FOUND',
      retryable: false,
      details: 'container "c9" not found',
    });
    expect(client.trace().at(-1)).toMatchObject({
      method: '/runtime.v1.RuntimeService/ContainerStatus',
      containerId: 'c9',
      code: 'NOT_FOUND',
    });
  });

  it('gives up at the deadline with DEADLINE_EXCEEDED', async () => {
    const endpoint = await startFakeRuntime(
      {},
      {
        PullImage: (() => undefined) as grpc.handleUnaryCall<unknown, unknown>, // never answers
      },
    );
    client = new CriClient({ endpoint, timeouts: { image: 200 } });
    const err = await client.pullImage({ image: { image: 'busybox' } }).catch((e: unknown) => e);
    expect(err).toMatchObject({ grpcCodeName: 'DEADLINE_EXCEEDED', retryable: true });
    expect(client.trace().at(-1)).toMatchObject({ image: 'busybox', code: 'DEADLINE_EXCEEDED' });
  });

  it('says the endpoint is unavailable when nothing listens', async () => {
    client = new CriClient({ endpoint: join(dir, 'none.sock') });
    await expect(client.connect(200)).rejects.toMatchObject({ grpcCodeName: 'UNAVAILABLE' });
  });
});

describe('subjectOf', () => {
  it.each([
    { m: { podSandboxId: 's' }, want: { podSandboxId: 's' } },
    { m: { containerId: 'c', podSandboxId: '' }, want: { containerId: 'c' } },
    { m: { image: { image: 'i' } }, want: { image: 'i' } },
    { m: null, want: {} },
  ])('$m', ({ m, want }) => expect(subjectOf(m)).toEqual(want));
});
