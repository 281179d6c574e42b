/**
 * The hostpath driver through Stowage's own CsiClient (what the sidecars and node agent use):
 * capability discovery, a full mount lifecycle, typed errors and the call trace.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CsiClient, CsiError } from '../src/csi/client.js';
import { startHostpathDriver, type RunningHostpathDriver } from '../src/csi/hostpath/server.js';
import { mountsUnder } from '../src/mount/mountinfo.js';
import { unmount } from '../src/mount/mount.js';
import { mountCap, MiB, quietLogger } from './csi-hostpath-kit.js';

describe.skipIf(process.getuid?.() !== 0)('hostpath driver via CsiClient (root)', () => {
  let tmp = '';
  const ac = new AbortController();
  let running: RunningHostpathDriver;
  let client: CsiClient;

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'stowage-csi-client-'));
    running = await startHostpathDriver({
      endpoint: `unix://${tmp}/csi.sock`,
      nodeId: 'n1',
      stateDir: path.join(tmp, 'state'),
      signal: ac.signal,
      logger: quietLogger(),
    });
    client = new CsiClient({ endpoint: `unix://${tmp}/csi.sock`, log: quietLogger() });
    await client.connect({ timeoutMs: 10_000 });
  });

  afterAll(async () => {
    client?.close();
    ac.abort();
    await running?.done;
    const left = await mountsUnder(tmp);
    for (const m of left) await unmount(m.mountPoint);
    await rm(tmp, { recursive: true, force: true });
    expect(left).toEqual([]);
  });

  it('discovers capabilities (no attach by default)', async () => {
    expect([...(await client.pluginCapabilities())]).toEqual(
      expect.arrayContaining(['CONTROLLER_SERVICE', 'VOLUME_ACCESSIBILITY_CONSTRAINTS']),
    );
    const cc = await client.controllerCapabilities();
    expect(cc.has('CREATE_DELETE_VOLUME')).toBe(true);
    expect(cc.has('PUBLISH_UNPUBLISH_VOLUME')).toBe(false);
    expect((await client.nodeCapabilities()).has('STAGE_UNSTAGE_VOLUME')).toBe(true);
    expect(await client.isReady()).toBe(true);
  });

  it('runs create → stage → publish → unpublish → unstage → delete, and traces each call', async () => {
    const { volume } = await client.createVolume({
      name: 'via-client',
      capacityRange: { requiredBytes: 8 * MiB },
      volumeCapabilities: [mountCap()],
    });
    const id = volume!.volumeId;
    const staging = path.join(tmp, 'staging');
    const target = path.join(tmp, 'pod', 'vol');
    await mkdir(staging, { recursive: true });
    await mkdir(path.dirname(target), { recursive: true });
    await client.nodeStageVolume({ volumeId: id, stagingTargetPath: staging, volumeCapability: mountCap() });
    await client.nodePublishVolume({
      volumeId: id,
      stagingTargetPath: staging,
      targetPath: target,
      volumeCapability: mountCap(),
    });
    await writeFile(path.join(target, 'x'), 'y');
    expect(await readFile(path.join(tmp, 'state', 'volumes', id, 'x'), 'utf8')).toBe('y');
    await client.nodeUnpublishVolume({ volumeId: id, targetPath: target });
    await client.nodeUnstageVolume({ volumeId: id, stagingTargetPath: staging });
    await client.deleteVolume({ volumeId: id });

    const methods = client
      .trace()
      .filter((t) => t.volumeId === id)
      .map((t) => `${t.method.split('/').pop()}:${t.code}`);
    expect(methods).toEqual([
      'CreateVolume:OK',
      'NodeStageVolume:OK',
      'NodePublishVolume:OK',
      'NodeUnpublishVolume:OK',
      'NodeUnstageVolume:OK',
      'DeleteVolume:OK',
    ]);
  });

  it('driver refusals arrive as CsiError with the exact gRPC code', async () => {
    const err = await client.nodePublishVolume({ volumeId: 'nope' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CsiError);
    expect((err as CsiError).grpcCode).toBe(status.INVALID_ARGUMENT);
    expect((err as CsiError).retryable).toBe(false);
    const nf = await client
      .controllerGetVolume({ volumeId: '00000000-0000-4000-8000-000000000000' })
      .catch((e: unknown) => e);
    expect((nf as CsiError).grpcCode).toBe(status.NOT_FOUND);
  });
});
