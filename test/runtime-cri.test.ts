/**
 * The CRI client against a real containerd started as `stowage up` starts it, pulling a busybox
 * image built by the test from a loopback registry: sandbox on the host network, a container
 * with a host directory mounted, its exit code and what it wrote.
 */
import { mkdtempSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CriClient } from '../src/node/runtime/client.js';
import { startEmbeddedContainerd, type EmbeddedContainerd } from '../src/node/runtime/containerd.js';
import { runtimeTestsMissing, startRegistry, unmountUnder, type Registry } from './helpers/runtime.js';

const missing = runtimeTestsMissing();
if (missing.length > 0)
  console.warn(`container runtime tests skipped: missing ${missing.join(', ')} (.ci/run installs them)`);

describe.skipIf(missing.length > 0)('CRI client on an embedded containerd', () => {
  let dir: string;
  let registry: Registry | undefined;
  let containerd: EmbeddedContainerd | undefined;
  let cri: CriClient | undefined;
  let image: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'stowage-cri-'));
    registry = await startRegistry(join(dir, 'registry'));
    const pause = await registry.push('pause', 't1', ['sleep', '2147483647']);
    image = await registry.push('busybox', 't1', ['sh']);
    containerd = await startEmbeddedContainerd({ dir: join(dir, 'containerd'), sandboxImage: pause });
    cri = new CriClient({ endpoint: containerd.endpoint });
  }, 180_000);

  afterAll(async () => {
    if (cri) {
      for (const s of await cri.listPodSandbox().catch(() => [])) {
        await cri.stopPodSandbox(s.id).catch(() => undefined);
        await cri.removePodSandbox(s.id).catch(() => undefined);
      }
      cri.close();
    }
    await containerd?.stop();
    await registry?.stop();
    await unmountUnder(dir);
    rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  it('reports the runtime ready', async () => {
    const v = await cri!.version();
    expect(v.runtimeName).toBe('containerd');
    const st = await cri!.status();
    expect(st.status?.conditions.find((c) => c.type === 'RuntimeReady')?.status).toBe(true);
  });

  it('pulls an image from the loopback registry, runs a container (with cpu and memory limits) on the host network that writes to a mounted directory, and reports its exit', async () => {
    expect(await cri!.imageStatus(image)).toBeNull();
    const pulled = await cri!.pullImage({ image: { image } });
    expect(pulled.imageRef).toMatch(/^sha256:/);
    expect((await cri!.imageStatus(image))?.id).toBe(pulled.imageRef);

    const data = join(dir, 'data');
    mkdirSync(data);
    const logs = join(dir, 'logs');
    const sandboxConfig = {
      metadata: { name: 'p1', uid: 'uid-1', namespace: 'default', attempt: 0 },
      logDirectory: logs,
      linux: {
        securityContext: {
          namespaceOptions: { network: 'NODE' as const, pid: 'CONTAINER' as const, ipc: 'POD' as const },
        },
      },
    };
    const { podSandboxId } = await cri!.runPodSandbox({ config: sandboxConfig });
    const sandbox = await cri!.podSandboxStatus(podSandboxId);
    expect(sandbox.status?.state).toBe('SANDBOX_READY');

    const { containerId } = await cri!.createContainer({
      podSandboxId,
      sandboxConfig,
      config: {
        metadata: { name: 'writer', attempt: 0 },
        image: { image: pulled.imageRef },
        command: ['sh', '-c'],
        args: ['echo "hello from $NAME" > /data/out.txt && exit 3'],
        envs: [{ key: 'NAME', value: 'writer' }],
        mounts: [{ containerPath: '/data', hostPath: data }],
        logPath: 'writer/0.log',
        linux: {
          resources: { cpuShares: 256, cpuPeriod: 100_000, cpuQuota: 50_000, memoryLimitInBytes: 64 * 1024 * 1024 },
        },
      },
    });
    await cri!.startContainer(containerId);
    let status = (await cri!.containerStatus(containerId)).status;
    while (status?.state !== 'CONTAINER_EXITED') status = (await cri!.containerStatus(containerId)).status;
    expect(status.exitCode).toBe(3);
    expect(readFileSync(join(data, 'out.txt'), 'utf8')).toBe('hello from writer\n');
    expect(
      cri!
        .trace()
        .some(
          (t) =>
            t.method === '/runtime.v1.RuntimeService/StartContainer' &&
            t.containerId === containerId &&
            t.code === 'OK',
        ),
    ).toBe(true);

    await cri!.stopPodSandbox(podSandboxId);
    await cri!.removePodSandbox(podSandboxId);
    expect(await cri!.listContainers({ podSandboxId })).toEqual([]);
  }, 120_000);
});
