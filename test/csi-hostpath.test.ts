/**
 * Conformance suite for the built-in hostpath CSI driver, modelled on csi-sanity: the driver runs
 * in-process on a temp unix socket and is driven through raw grpc-js clients. Needs root (mounts,
 * loop devices). Everything it creates lives under one temp dir, checked clean in afterAll.
 */
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHostpathDriver, type RunningHostpathDriver } from '../src/csi/hostpath/server.js';
import { TOPOLOGY_KEY } from '../src/csi/hostpath/driver.js';
import { attachLoop, listLoopDevices } from '../src/mount/loop.js';
import { unmount } from '../src/mount/mount.js';
import { mountsUnder } from '../src/mount/mountinfo.js';
import {
  blockCap,
  call,
  connect,
  expectCode,
  GiB,
  MiB,
  mountCap,
  quietLogger,
  removeAndExpectNothingLeft,
  type Clients,
} from './csi-hostpath-kit.js';

const NODE = 'node-a';
const CAPACITY = 20 * GiB;
const notRoot = process.getuid?.() !== 0;

describe.skipIf(notRoot)('hostpath CSI driver (root: real mounts and loop devices)', () => {
  let tmp = '';
  let stateDir = '';
  let sock = '';
  let ac: AbortController;
  let running: RunningHostpathDriver;
  let c: Clients;
  let seq = 0;
  const uniq = (p: string): string => `${p}-${++seq}`;

  const start = async (): Promise<void> => {
    ac = new AbortController();
    running = await startHostpathDriver({
      endpoint: `unix://${sock}`,
      nodeId: NODE,
      stateDir,
      enableAttach: true,
      capacityBytes: CAPACITY,
      signal: ac.signal,
      logger: quietLogger(),
    });
    c = connect(sock);
  };
  const stop = async (): Promise<void> => {
    c.close();
    ac.abort();
    await running.done;
  };

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'stowage-csi-hostpath-'));
    stateDir = path.join(tmp, 'state');
    sock = path.join(tmp, 'csi.sock');
    await start();
  });

  afterAll(async () => {
    if (c) await stop();
    await removeAndExpectNothingLeft(tmp);
  });

  const create = async (name: string, bytes = 16 * MiB, cap = mountCap(), extra: object = {}) =>
    (
      await call(c.controller, 'CreateVolume', {
        name,
        capacityRange: { requiredBytes: bytes },
        volumeCapabilities: [cap],
        ...extra,
      })
    ).volume;

  /** ControllerPublish + NodeStage + NodePublish; returns the target path. */
  const bringUp = async (volumeId: string, cap = mountCap(), opts: { readonly?: boolean; target?: string } = {}) => {
    const staging = path.join(tmp, 'staging', volumeId);
    await mkdir(staging, { recursive: true });
    const target = opts.target ?? path.join(tmp, 'pods', uniq('pod'), 'vol');
    await mkdir(path.dirname(target), { recursive: true });
    await call(c.controller, 'ControllerPublishVolume', { volumeId, nodeId: NODE, volumeCapability: cap });
    await call(c.node, 'NodeStageVolume', { volumeId, stagingTargetPath: staging, volumeCapability: cap });
    await call(c.node, 'NodePublishVolume', {
      volumeId,
      stagingTargetPath: staging,
      targetPath: target,
      volumeCapability: cap,
      readonly: opts.readonly ?? false,
    });
    return { staging, target };
  };
  const tearDown = async (volumeId: string, staging: string, targets: string[]) => {
    for (const t of targets) await call(c.node, 'NodeUnpublishVolume', { volumeId, targetPath: t });
    await call(c.node, 'NodeUnstageVolume', { volumeId, stagingTargetPath: staging });
    await call(c.controller, 'ControllerUnpublishVolume', { volumeId, nodeId: NODE });
  };

  describe('Identity', () => {
    it('reports name, capabilities and readiness', async () => {
      const info = await call(c.identity, 'GetPluginInfo');
      expect(info.name).toBe('hostpath.csi.stowage.io');
      expect(info.vendorVersion).not.toBe('');
      const caps = await call(c.identity, 'GetPluginCapabilities');
      const services = caps.capabilities.filter((x: any) => x.service).map((x: any) => x.service.type);
      expect(services).toEqual(['CONTROLLER_SERVICE', 'VOLUME_ACCESSIBILITY_CONSTRAINTS']);
      expect((await call(c.identity, 'Probe')).ready.value).toBe(true);
    });

    it('NodeGetInfo and capabilities', async () => {
      const ni = await call(c.node, 'NodeGetInfo');
      expect(ni).toMatchObject({
        nodeId: NODE,
        maxVolumesPerNode: 0,
        accessibleTopology: { segments: { [TOPOLOGY_KEY]: NODE } },
      });
      const nc = (await call(c.node, 'NodeGetCapabilities')).capabilities.map((x: any) => x.rpc.type);
      expect(nc).toEqual(
        expect.arrayContaining([
          'STAGE_UNSTAGE_VOLUME',
          'GET_VOLUME_STATS',
          'EXPAND_VOLUME',
          'SINGLE_NODE_MULTI_WRITER',
          'VOLUME_CONDITION',
        ]),
      );
      const cc = (await call(c.controller, 'ControllerGetCapabilities')).capabilities.map((x: any) => x.rpc.type);
      expect(cc).toEqual(
        expect.arrayContaining([
          'CREATE_DELETE_VOLUME',
          'PUBLISH_UNPUBLISH_VOLUME',
          'LIST_VOLUMES',
          'GET_CAPACITY',
          'CREATE_DELETE_SNAPSHOT',
          'CLONE_VOLUME',
          'EXPAND_VOLUME',
          'GET_VOLUME',
        ]),
      );
    });
  });

  describe('argument validation', () => {
    const someId = '00000000-0000-4000-8000-000000000000';
    const cases: { name: string; svc: 'controller' | 'node'; method: string; req: object; code: status }[] = [
      {
        name: 'CreateVolume without name',
        svc: 'controller',
        method: 'CreateVolume',
        req: { volumeCapabilities: [mountCap()] },
        code: status.INVALID_ARGUMENT,
      },
      {
        name: 'CreateVolume without capabilities',
        svc: 'controller',
        method: 'CreateVolume',
        req: { name: 'x' },
        code: status.INVALID_ARGUMENT,
      },
      {
        name: 'CreateVolume with a multi-node mode',
        svc: 'controller',
        method: 'CreateVolume',
        req: { name: 'x', volumeCapabilities: [mountCap('MULTI_NODE_MULTI_WRITER')] },
        code: status.INVALID_ARGUMENT,
      },
      {
        name: 'CreateVolume with a capability lacking an access type',
        svc: 'controller',
        method: 'CreateVolume',
        req: { name: 'x', volumeCapabilities: [{ accessMode: { mode: 'SINGLE_NODE_WRITER' } }] },
        code: status.INVALID_ARGUMENT,
      },
      {
        name: 'CreateVolume from a missing snapshot',
        svc: 'controller',
        method: 'CreateVolume',
        req: { name: 'x', volumeCapabilities: [mountCap()], volumeContentSource: { snapshot: { snapshotId: 'nope' } } },
        code: status.NOT_FOUND,
      },
      {
        name: 'CreateVolume from a missing volume',
        svc: 'controller',
        method: 'CreateVolume',
        req: { name: 'x', volumeCapabilities: [mountCap()], volumeContentSource: { volume: { volumeId: someId } } },
        code: status.NOT_FOUND,
      },
      {
        name: 'CreateVolume outside our topology',
        svc: 'controller',
        method: 'CreateVolume',
        req: {
          name: 'x',
          volumeCapabilities: [mountCap()],
          accessibilityRequirements: { requisite: [{ segments: { [TOPOLOGY_KEY]: 'other' } }] },
        },
        code: status.RESOURCE_EXHAUSTED,
      },
      {
        name: 'DeleteVolume without id',
        svc: 'controller',
        method: 'DeleteVolume',
        req: {},
        code: status.INVALID_ARGUMENT,
      },
      {
        name: 'ControllerPublish without volume id',
        svc: 'controller',
        method: 'ControllerPublishVolume',
        req: {},
        code: status.INVALID_ARGUMENT,
      },
      {
        name: 'ControllerPublish without node id',
        svc: 'controller',
        method: 'ControllerPublishVolume',
        req: { volumeId: someId },
        code: status.INVALID_ARGUMENT,
      },
      {
        name: 'ControllerPublish without capability',
        svc: 'controller',
        method: 'ControllerPublishVolume',
        req: { volumeId: someId, nodeId: NODE },
        code: status.INVALID_ARGUMENT,
      },
      {
        name: 'ControllerPublish of a missing volume',
        svc: 'controller',
        method: 'ControllerPublishVolume',
        req: { volumeId: someId, nodeId: NODE, volumeCapability: mountCap() },
        code: status.NOT_FOUND,
      },
      {
        name: 'ControllerUnpublish without volume id',
        svc: 'controller',
        method: 'ControllerUnpublishVolume',
        req: {},
        code: status.INVALID_ARGUMENT,
      },
      {
        name: 'Validate without volume id',
        svc: 'controller',
        method: 'ValidateVolumeCapabilities',
        req: {},
        code: status.INVALID_ARGUMENT,
      },
      {
        name: 'Validate of a missing volume',
        svc: 'controller',
        method: 'ValidateVolumeCapabilities',
        req: { volumeId: someId, volumeCapabilities: [mountCap()] },
        code: status.NOT_FOUND,
      },
      {
        name: 'ListVolumes with a bad token',
        svc: 'controller',
        method: 'ListVolumes',
        req: { startingToken: 'invalid-token' },
        code: status.ABORTED,
      },
      {
        name: 'ListSnapshots with a bad token',
        svc: 'controller',
        method: 'ListSnapshots',
        req: { startingToken: 'invalid-token' },
        code: status.ABORTED,
      },
      {
        name: 'CreateSnapshot without name',
        svc: 'controller',
        method: 'CreateSnapshot',
        req: { sourceVolumeId: 'x' },
        code: status.INVALID_ARGUMENT,
      },
      {
        name: 'CreateSnapshot without source',
        svc: 'controller',
        method: 'CreateSnapshot',
        req: { name: 'x' },
        code: status.INVALID_ARGUMENT,
      },
      {
        name: 'CreateSnapshot of a missing volume',
        svc: 'controller',
        method: 'CreateSnapshot',
        req: { name: 'x', sourceVolumeId: someId },
        code: status.NOT_FOUND,
      },
      {
        name: 'DeleteSnapshot without id',
        svc: 'controller',
        method: 'DeleteSnapshot',
        req: {},
        code: status.INVALID_ARGUMENT,
      },
      {
        name: 'ControllerExpand without id',
        svc: 'controller',
        method: 'ControllerExpandVolume',
        req: { capacityRange: { requiredBytes: GiB } },
        code: status.INVALID_ARGUMENT,
      },
      {
        name: 'ControllerExpand without range',
        svc: 'controller',
        method: 'ControllerExpandVolume',
        req: { volumeId: someId },
        code: status.INVALID_ARGUMENT,
      },
      {
        name: 'ControllerGetVolume of a missing volume',
        svc: 'controller',
        method: 'ControllerGetVolume',
        req: { volumeId: someId },
        code: status.NOT_FOUND,
      },
      {
        name: 'NodeStage without volume id',
        svc: 'node',
        method: 'NodeStageVolume',
        req: { stagingTargetPath: '/x', volumeCapability: mountCap() },
        code: status.INVALID_ARGUMENT,
      },
      {
        name: 'NodeStage without staging path',
        svc: 'node',
        method: 'NodeStageVolume',
        req: { volumeId: someId, volumeCapability: mountCap() },
        code: status.INVALID_ARGUMENT,
      },
      {
        name: 'NodeStage without capability',
        svc: 'node',
        method: 'NodeStageVolume',
        req: { volumeId: someId, stagingTargetPath: '/x' },
        code: status.INVALID_ARGUMENT,
      },
      {
        name: 'NodeUnstage without volume id',
        svc: 'node',
        method: 'NodeUnstageVolume',
        req: { stagingTargetPath: '/x' },
        code: status.INVALID_ARGUMENT,
      },
      {
        name: 'NodeUnstage without staging path',
        svc: 'node',
        method: 'NodeUnstageVolume',
        req: { volumeId: someId },
        code: status.INVALID_ARGUMENT,
      },
      {
        name: 'NodePublish without volume id',
        svc: 'node',
        method: 'NodePublishVolume',
        req: {},
        code: status.INVALID_ARGUMENT,
      },
      {
        name: 'NodePublish without target',
        svc: 'node',
        method: 'NodePublishVolume',
        req: { volumeId: someId },
        code: status.INVALID_ARGUMENT,
      },
      {
        name: 'NodePublish without capability',
        svc: 'node',
        method: 'NodePublishVolume',
        req: { volumeId: someId, targetPath: '/x/target' },
        code: status.INVALID_ARGUMENT,
      },
      {
        name: 'NodePublish of a missing volume',
        svc: 'node',
        method: 'NodePublishVolume',
        req: { volumeId: someId, targetPath: '/x/target', stagingTargetPath: '/x', volumeCapability: mountCap() },
        code: status.NOT_FOUND,
      },
      {
        name: 'NodeUnpublish without volume id',
        svc: 'node',
        method: 'NodeUnpublishVolume',
        req: {},
        code: status.INVALID_ARGUMENT,
      },
      {
        name: 'NodeUnpublish without target',
        svc: 'node',
        method: 'NodeUnpublishVolume',
        req: { volumeId: someId },
        code: status.INVALID_ARGUMENT,
      },
      {
        name: 'NodeGetVolumeStats without volume id',
        svc: 'node',
        method: 'NodeGetVolumeStats',
        req: { volumePath: 'some/path' },
        code: status.INVALID_ARGUMENT,
      },
      {
        name: 'NodeGetVolumeStats without path',
        svc: 'node',
        method: 'NodeGetVolumeStats',
        req: { volumeId: someId },
        code: status.INVALID_ARGUMENT,
      },
      {
        name: 'NodeGetVolumeStats of a missing volume',
        svc: 'node',
        method: 'NodeGetVolumeStats',
        req: { volumeId: someId, volumePath: 'some/path' },
        code: status.NOT_FOUND,
      },
      {
        name: 'NodeExpand without volume id',
        svc: 'node',
        method: 'NodeExpandVolume',
        req: { volumePath: '/x' },
        code: status.INVALID_ARGUMENT,
      },
      {
        name: 'NodeExpand without path',
        svc: 'node',
        method: 'NodeExpandVolume',
        req: { volumeId: someId },
        code: status.INVALID_ARGUMENT,
      },
      {
        name: 'NodeExpand of a missing volume',
        svc: 'node',
        method: 'NodeExpandVolume',
        req: { volumeId: someId, volumePath: 'some/path' },
        code: status.NOT_FOUND,
      },
    ];
    it.each(cases)('$name', async ({ svc, method, req, code }) => {
      const err = await expectCode(call(c[svc], method, req), code);
      expect(err.details.length).toBeGreaterThan(0);
    });

    it('messages name the missing field', async () => {
      const err = await expectCode(call(c.node, 'NodePublishVolume', { volumeId: someId }), status.INVALID_ARGUMENT);
      expect(err.details).toContain('target_path');
    });

    it('deleting unknown volumes and snapshots succeeds (idempotent)', async () => {
      await call(c.controller, 'DeleteVolume', { volumeId: 'never-existed' });
      await call(c.controller, 'DeleteSnapshot', { snapshotId: 'never-existed' });
      await call(c.controller, 'ControllerUnpublishVolume', { volumeId: 'never-existed', nodeId: NODE });
    });
  });

  describe('CreateVolume', () => {
    it('is idempotent by name; an incompatible repeat is ALREADY_EXISTS', async () => {
      const name = uniq('idem');
      const req = {
        name,
        capacityRange: { requiredBytes: 32 * MiB, limitBytes: 32 * MiB },
        volumeCapabilities: [mountCap()],
      };
      const a = (await call(c.controller, 'CreateVolume', req)).volume;
      const b = (await call(c.controller, 'CreateVolume', req)).volume;
      expect(b.volumeId).toBe(a.volumeId);
      expect(a.capacityBytes).toBe(32 * MiB);
      expect(a.accessibleTopology).toEqual([{ segments: { [TOPOLOGY_KEY]: NODE } }]);
      expect((await stat(path.join(stateDir, 'volumes', a.volumeId))).isDirectory()).toBe(true);
      await expectCode(
        call(c.controller, 'CreateVolume', {
          ...req,
          capacityRange: { requiredBytes: 64 * MiB, limitBytes: 64 * MiB },
        }),
        status.ALREADY_EXISTS,
      );
      await expectCode(
        call(c.controller, 'CreateVolume', { ...req, volumeCapabilities: [blockCap()] }),
        status.ALREADY_EXISTS,
      );
      await call(c.controller, 'DeleteVolume', { volumeId: a.volumeId });
      await call(c.controller, 'DeleteVolume', { volumeId: a.volumeId });
      await expectCode(call(c.controller, 'ControllerGetVolume', { volumeId: a.volumeId }), status.NOT_FOUND);
    });

    it('concurrent creates with one name yield one volume', async () => {
      const name = uniq('race');
      const vols = await Promise.all([1, 2, 3, 4].map(() => create(name)));
      expect(new Set(vols.map((v: any) => v.volumeId)).size).toBe(1);
      await call(c.controller, 'DeleteVolume', { volumeId: vols[0].volumeId });
    });

    it('a 128-character name works; no range gives the 1 GiB default', async () => {
      const v = (await call(c.controller, 'CreateVolume', { name: 'n'.repeat(128), volumeCapabilities: [mountCap()] }))
        .volume;
      expect(v.capacityBytes).toBe(GiB);
      await call(c.controller, 'DeleteVolume', { volumeId: v.volumeId });
    });

    it('capacity limits: OUT_OF_RANGE for impossible ranges, RESOURCE_EXHAUSTED when full, GetCapacity tracks usage', async () => {
      await expectCode(
        call(c.controller, 'CreateVolume', {
          name: uniq('oor'),
          capacityRange: { requiredBytes: 2 * GiB, limitBytes: GiB },
          volumeCapabilities: [mountCap()],
        }),
        status.OUT_OF_RANGE,
      );
      await expectCode(create(uniq('toobig'), CAPACITY + GiB), status.OUT_OF_RANGE);
      const before = (await call(c.controller, 'GetCapacity')).availableCapacity;
      const big = await create(uniq('big'), before - 3 * GiB);
      const small = await create(uniq('small'), 2 * GiB);
      expect((await call(c.controller, 'GetCapacity')).availableCapacity).toBe(GiB);
      await expectCode(create(uniq('nospace'), 2 * GiB), status.RESOURCE_EXHAUSTED);
      await expectCode(
        call(c.controller, 'ControllerExpandVolume', {
          volumeId: small.volumeId,
          capacityRange: { requiredBytes: 4 * GiB },
        }),
        status.RESOURCE_EXHAUSTED,
      );
      await expectCode(
        call(c.controller, 'ControllerExpandVolume', {
          volumeId: big.volumeId,
          capacityRange: { requiredBytes: CAPACITY + GiB },
        }),
        status.OUT_OF_RANGE,
      );
      for (const x of [big, small]) await call(c.controller, 'DeleteVolume', { volumeId: x.volumeId });
      expect((await call(c.controller, 'GetCapacity')).availableCapacity).toBe(before);
      expect(
        (await call(c.controller, 'GetCapacity', { accessibleTopology: { segments: { [TOPOLOGY_KEY]: 'elsewhere' } } }))
          .availableCapacity,
      ).toBe(0);
    });

    it('ValidateVolumeCapabilities confirms matching capabilities only', async () => {
      const v = await create(uniq('validate'));
      const ok = await call(c.controller, 'ValidateVolumeCapabilities', {
        volumeId: v.volumeId,
        volumeCapabilities: [mountCap()],
      });
      expect(ok.confirmed.volumeCapabilities).toHaveLength(1);
      const wrongType = await call(c.controller, 'ValidateVolumeCapabilities', {
        volumeId: v.volumeId,
        volumeCapabilities: [blockCap()],
      });
      expect(wrongType.confirmed).toBeNull();
      expect(wrongType.message).toContain('mount');
      const multi = await call(c.controller, 'ValidateVolumeCapabilities', {
        volumeId: v.volumeId,
        volumeCapabilities: [mountCap('MULTI_NODE_MULTI_WRITER')],
      });
      expect(multi.confirmed).toBeNull();
      await expectCode(
        call(c.controller, 'ValidateVolumeCapabilities', { volumeId: v.volumeId }),
        status.INVALID_ARGUMENT,
      );
      await call(c.controller, 'DeleteVolume', { volumeId: v.volumeId });
    });
  });

  describe('mount volume lifecycle', () => {
    it('create → publish → write → unpublish → publish again → data still there; every step idempotent', async () => {
      const v = await create(uniq('life'));
      const id = v.volumeId as string;
      const cap = mountCap();
      const staging = path.join(tmp, 'staging', id);
      await mkdir(staging, { recursive: true });
      const parent = path.join(tmp, 'pods', uniq('pod'));
      await mkdir(parent, { recursive: true });
      const target = path.join(parent, 'vol');

      await expectCode(
        call(c.node, 'NodeStageVolume', { volumeId: id, stagingTargetPath: staging, volumeCapability: cap }),
        status.FAILED_PRECONDITION,
      );
      await call(c.controller, 'ControllerPublishVolume', { volumeId: id, nodeId: NODE, volumeCapability: cap });
      await call(c.controller, 'ControllerPublishVolume', { volumeId: id, nodeId: NODE, volumeCapability: cap });
      await expectCode(
        call(c.controller, 'ControllerPublishVolume', {
          volumeId: id,
          nodeId: NODE,
          volumeCapability: cap,
          readonly: true,
        }),
        status.ALREADY_EXISTS,
      );
      await expectCode(
        call(c.controller, 'ControllerPublishVolume', { volumeId: id, nodeId: 'other-node', volumeCapability: cap }),
        status.NOT_FOUND,
      );

      await expectCode(
        call(c.node, 'NodePublishVolume', {
          volumeId: id,
          stagingTargetPath: staging,
          targetPath: target,
          volumeCapability: cap,
        }),
        status.FAILED_PRECONDITION,
      );
      for (let i = 0; i < 2; i++)
        await call(c.node, 'NodeStageVolume', { volumeId: id, stagingTargetPath: staging, volumeCapability: cap });
      expect((await mountsUnder(staging)).length).toBe(1);
      await expectCode(
        call(c.node, 'NodeStageVolume', { volumeId: id, stagingTargetPath: staging, volumeCapability: blockCap() }),
        status.FAILED_PRECONDITION,
      );
      // Concurrent repeats serialize on the volume: one mount, every call OK.
      await Promise.all(
        [1, 2, 3].map(() =>
          call(c.node, 'NodePublishVolume', {
            volumeId: id,
            stagingTargetPath: staging,
            targetPath: target,
            volumeCapability: cap,
          }),
        ),
      );
      expect((await mountsUnder(target)).length).toBe(1);
      await expectCode(
        call(c.node, 'NodePublishVolume', {
          volumeId: id,
          stagingTargetPath: staging,
          targetPath: target,
          volumeCapability: cap,
          readonly: true,
        }),
        status.ALREADY_EXISTS,
      );

      await writeFile(path.join(target, 'hello.txt'), 'persisted');
      await expectCode(call(c.controller, 'DeleteVolume', { volumeId: id }), status.FAILED_PRECONDITION);

      const stats = await call(c.node, 'NodeGetVolumeStats', { volumeId: id, volumePath: target });
      const bytes = stats.usage.find((u: any) => u.unit === 'BYTES');
      expect(bytes.total).toBe(16 * MiB);
      expect(bytes.used).toBeGreaterThan(0);
      expect(stats.usage.find((u: any) => u.unit === 'INODES').used).toBeGreaterThanOrEqual(2);
      expect(stats.volumeCondition.abnormal).toBe(false);
      await expectCode(
        call(c.node, 'NodeGetVolumeStats', { volumeId: id, volumePath: path.join(tmp, 'nowhere') }),
        status.NOT_FOUND,
      );

      const gv = await call(c.controller, 'ControllerGetVolume', { volumeId: id });
      expect(gv.status.publishedNodeIds).toEqual([NODE]);

      for (let i = 0; i < 2; i++) await call(c.node, 'NodeUnpublishVolume', { volumeId: id, targetPath: target });
      await expect(stat(target)).rejects.toMatchObject({ code: 'ENOENT' });

      await call(c.node, 'NodePublishVolume', {
        volumeId: id,
        stagingTargetPath: staging,
        targetPath: target,
        volumeCapability: cap,
      });
      expect(await readFile(path.join(target, 'hello.txt'), 'utf8')).toBe('persisted');

      // A second, read-only publication of the same volume refuses writes.
      const roTarget = path.join(parent, 'ro');
      await call(c.node, 'NodePublishVolume', {
        volumeId: id,
        stagingTargetPath: staging,
        targetPath: roTarget,
        volumeCapability: cap,
        readonly: true,
      });
      expect(await readFile(path.join(roTarget, 'hello.txt'), 'utf8')).toBe('persisted');
      await expect(writeFile(path.join(roTarget, 'nope.txt'), 'x')).rejects.toMatchObject({ code: 'EROFS' });

      await tearDown(id, staging, [target, roTarget]);
      await call(c.node, 'NodeUnstageVolume', { volumeId: id, stagingTargetPath: staging });
      expect(await mountsUnder(parent)).toEqual([]);
      expect(await mountsUnder(staging)).toEqual([]);
      await call(c.controller, 'DeleteVolume', { volumeId: id });
      await expect(stat(path.join(stateDir, 'volumes', id))).rejects.toMatchObject({ code: 'ENOENT' });
    });

    it('publishing after the staging mount vanished (reboot) re-creates it instead of exposing an empty dir', async () => {
      const v = await create(uniq('reboot'));
      const { staging, target } = await bringUp(v.volumeId);
      await writeFile(path.join(target, 'keep'), 'data');
      await call(c.node, 'NodeUnpublishVolume', { volumeId: v.volumeId, targetPath: target });
      await unmount(staging);
      await call(c.node, 'NodePublishVolume', {
        volumeId: v.volumeId,
        stagingTargetPath: staging,
        targetPath: target,
        volumeCapability: mountCap(),
      });
      expect(await readFile(path.join(target, 'keep'), 'utf8')).toBe('data');
      await tearDown(v.volumeId, staging, [target]);
      expect(await mountsUnder(staging)).toEqual([]);
      await call(c.controller, 'DeleteVolume', { volumeId: v.volumeId });
    });

    it('NodeUnpublishVolume for another volume id leaves the mount at that target alone', async () => {
      const a = await create(uniq('owner'));
      const b = await create(uniq('bystander'));
      const { staging, target } = await bringUp(a.volumeId);
      await call(c.node, 'NodeUnpublishVolume', { volumeId: b.volumeId, targetPath: target });
      expect((await mountsUnder(target)).length).toBe(1);
      await tearDown(a.volumeId, staging, [target]);
      for (const x of [a, b]) await call(c.controller, 'DeleteVolume', { volumeId: x.volumeId });
    });

    it('volume condition turns abnormal when the backing directory disappears', async () => {
      const v = await create(uniq('cond'));
      const { staging, target } = await bringUp(v.volumeId);
      await tearDown(v.volumeId, staging, [target]);
      await rm(path.join(stateDir, 'volumes', v.volumeId), { recursive: true });
      const gv = await call(c.controller, 'ControllerGetVolume', { volumeId: v.volumeId });
      expect(gv.status.volumeCondition.abnormal).toBe(true);
      await call(c.controller, 'DeleteVolume', { volumeId: v.volumeId });
    });
  });

  describe('snapshots and clones', () => {
    it('snapshot → restore gives the same content; clone copies a volume', async () => {
      const v = await create(uniq('snapsrc'));
      const { staging, target } = await bringUp(v.volumeId);
      await mkdir(path.join(target, 'dir'));
      await writeFile(path.join(target, 'dir', 'data.bin'), 'snapshot me');
      const snapName = uniq('snap');
      const s1 = (await call(c.controller, 'CreateSnapshot', { name: snapName, sourceVolumeId: v.volumeId })).snapshot;
      const s2 = (await call(c.controller, 'CreateSnapshot', { name: snapName, sourceVolumeId: v.volumeId })).snapshot;
      expect(s2.snapshotId).toBe(s1.snapshotId);
      expect(s1).toMatchObject({ sourceVolumeId: v.volumeId, readyToUse: true, sizeBytes: 16 * MiB });
      expect(Number(s1.creationTime.seconds)).toBeGreaterThan(0);
      await writeFile(path.join(target, 'dir', 'data.bin'), 'changed later');

      const other = await create(uniq('other'));
      await expectCode(
        call(c.controller, 'CreateSnapshot', { name: snapName, sourceVolumeId: other.volumeId }),
        status.ALREADY_EXISTS,
      );

      const restored = await create(uniq('restored'), 16 * MiB, mountCap(), {
        volumeContentSource: { snapshot: { snapshotId: s1.snapshotId } },
      });
      expect(restored.contentSource.snapshot.snapshotId).toBe(s1.snapshotId);
      expect(await readFile(path.join(stateDir, 'volumes', restored.volumeId, 'dir', 'data.bin'), 'utf8')).toBe(
        'snapshot me',
      );

      const clone = await create(uniq('clone'), 16 * MiB, mountCap(), {
        volumeContentSource: { volume: { volumeId: v.volumeId } },
      });
      expect(await readFile(path.join(stateDir, 'volumes', clone.volumeId, 'dir', 'data.bin'), 'utf8')).toBe(
        'changed later',
      );
      await expectCode(
        create(uniq('wrongkind'), 16 * MiB, blockCap(), {
          volumeContentSource: { snapshot: { snapshotId: s1.snapshotId } },
        }),
        status.INVALID_ARGUMENT,
      );

      const byId = await call(c.controller, 'ListSnapshots', { snapshotId: s1.snapshotId });
      expect(byId.entries.map((e: any) => e.snapshot.snapshotId)).toEqual([s1.snapshotId]);
      const bySource = await call(c.controller, 'ListSnapshots', { sourceVolumeId: v.volumeId });
      expect(bySource.entries).toHaveLength(1);
      expect((await call(c.controller, 'ListSnapshots', { snapshotId: 'none' })).entries).toEqual([]);

      await tearDown(v.volumeId, staging, [target]);
      for (let i = 0; i < 2; i++) await call(c.controller, 'DeleteSnapshot', { snapshotId: s1.snapshotId });
      expect((await call(c.controller, 'ListSnapshots', { snapshotId: s1.snapshotId })).entries).toEqual([]);
      for (const x of [v, other, restored, clone]) await call(c.controller, 'DeleteVolume', { volumeId: x.volumeId });
    });

    it('ListSnapshots pages with max_entries and next_token', async () => {
      const v = await create(uniq('snappage'));
      const ids: string[] = [];
      for (let i = 0; i < 5; i++)
        ids.push(
          (await call(c.controller, 'CreateSnapshot', { name: uniq('ps'), sourceVolumeId: v.volumeId })).snapshot
            .snapshotId,
        );
      const p1 = await call(c.controller, 'ListSnapshots', { maxEntries: 2 });
      expect(p1.entries).toHaveLength(2);
      expect(p1.nextToken).not.toBe('');
      const rest = await call(c.controller, 'ListSnapshots', { startingToken: p1.nextToken });
      const all = [...p1.entries, ...rest.entries].map((e: any) => e.snapshot.snapshotId);
      expect(new Set(all).size).toBe(all.length);
      expect(all).toEqual(expect.arrayContaining(ids));
      for (const id of ids) await call(c.controller, 'DeleteSnapshot', { snapshotId: id });
      await call(c.controller, 'DeleteVolume', { volumeId: v.volumeId });
    });
  });

  describe('block volumes', () => {
    it('publish shows a block device at the target; expansion grows file and device; loop released', async () => {
      const v = await create(uniq('blk'), 8 * MiB, blockCap());
      const file = path.join(stateDir, 'volumes', v.volumeId);
      const fst = await stat(file);
      expect(fst.isFile()).toBe(true);
      expect(fst.size).toBe(8 * MiB);
      expect(fst.blocks * 512).toBeLessThan(8 * MiB);

      const { staging, target } = await bringUp(v.volumeId, blockCap());
      await call(c.node, 'NodePublishVolume', {
        volumeId: v.volumeId,
        stagingTargetPath: staging,
        targetPath: target,
        volumeCapability: blockCap(),
      });
      expect((await stat(target)).isBlockDevice()).toBe(true);
      const loops = (await listLoopDevices()).filter((l) => l.backingFile === file);
      expect(loops).toHaveLength(1);

      const fh = await open(target, 'r+');
      await fh.write(Buffer.from('raw block data'), 0, 14, 4096);
      await fh.sync();
      await fh.close();
      const back = Buffer.alloc(14);
      const rf = await open(file, 'r');
      await rf.read(back, 0, 14, 4096);
      await rf.close();
      expect(back.toString()).toBe('raw block data');

      const exp = await call(c.controller, 'ControllerExpandVolume', {
        volumeId: v.volumeId,
        capacityRange: { requiredBytes: 16 * MiB },
        volumeCapability: blockCap(),
      });
      expect(exp).toMatchObject({ capacityBytes: 16 * MiB, nodeExpansionRequired: true });
      expect((await stat(file)).size).toBe(16 * MiB);
      const nexp = await call(c.node, 'NodeExpandVolume', {
        volumeId: v.volumeId,
        volumePath: target,
        capacityRange: { requiredBytes: 16 * MiB },
      });
      expect(nexp.capacityBytes).toBe(16 * MiB);
      const sectors = Number((await readFile(`/sys/block/${path.basename(loops[0]!.device)}/size`, 'utf8')).trim());
      expect(sectors * 512).toBe(16 * MiB);
      const stats = await call(c.node, 'NodeGetVolumeStats', { volumeId: v.volumeId, volumePath: target });
      expect(stats.usage[0]).toMatchObject({ unit: 'BYTES', total: 16 * MiB });

      await tearDown(v.volumeId, staging, [target]);
      await expect(stat(target)).rejects.toMatchObject({ code: 'ENOENT' });
      expect((await listLoopDevices()).filter((l) => l.backingFile === file)).toEqual([]);

      const snap = (await call(c.controller, 'CreateSnapshot', { name: uniq('blksnap'), sourceVolumeId: v.volumeId }))
        .snapshot;
      const restored = await create(uniq('blkrestore'), 32 * MiB, blockCap(), {
        volumeContentSource: { snapshot: { snapshotId: snap.snapshotId } },
      });
      const rfile = path.join(stateDir, 'volumes', restored.volumeId);
      expect((await stat(rfile)).size).toBe(32 * MiB);
      const rb = Buffer.alloc(14);
      const rh = await open(rfile, 'r');
      await rh.read(rb, 0, 14, 4096);
      await rh.close();
      expect(rb.toString()).toBe('raw block data');
      await call(c.controller, 'DeleteSnapshot', { snapshotId: snap.snapshotId });
      for (const x of [v, restored]) await call(c.controller, 'DeleteVolume', { volumeId: x.volumeId });
    });

    it('a read-only block publication refuses writes and releases its own loop device', async () => {
      const v = await create(uniq('blkro'), 4 * MiB, blockCap());
      const file = path.join(stateDir, 'volumes', v.volumeId);
      const { staging, target } = await bringUp(v.volumeId, blockCap());
      const roTarget = path.join(path.dirname(target), 'ro');
      await call(c.node, 'NodePublishVolume', {
        volumeId: v.volumeId,
        stagingTargetPath: staging,
        targetPath: roTarget,
        volumeCapability: blockCap(),
        readonly: true,
      });
      expect((await stat(roTarget)).isBlockDevice()).toBe(true);
      const modes = (await listLoopDevices())
        .filter((l) => l.backingFile === file)
        .map((l) => l.readOnly)
        .sort();
      expect(modes).toEqual([false, true]);
      const err = await (async () => {
        const fh = await open(roTarget, 'r+');
        try {
          await fh.write(Buffer.from('x'), 0, 1, 0);
          return undefined;
        } finally {
          await fh.close();
        }
      })().catch((e: NodeJS.ErrnoException) => e.code);
      expect(['EROFS', 'EACCES', 'EPERM']).toContain(err);
      await call(c.node, 'NodeUnpublishVolume', { volumeId: v.volumeId, targetPath: roTarget });
      expect((await listLoopDevices()).filter((l) => l.backingFile === file).map((l) => l.readOnly)).toEqual([false]);
      await tearDown(v.volumeId, staging, [target]);
      expect((await listLoopDevices()).filter((l) => l.backingFile === file)).toEqual([]);
      await call(c.controller, 'DeleteVolume', { volumeId: v.volumeId });
    });

    it('DeleteVolume detaches a loop device left behind by a crash', async () => {
      const v = await create(uniq('blkleak'), 4 * MiB, blockCap());
      const file = path.join(stateDir, 'volumes', v.volumeId);
      await attachLoop(file);
      await call(c.controller, 'DeleteVolume', { volumeId: v.volumeId });
      expect((await listLoopDevices()).filter((l) => l.backingFile.startsWith(file))).toEqual([]);
    });

    it('directory volumes expand without node expansion; smaller requests do not shrink', async () => {
      const v = await create(uniq('dirgrow'));
      const exp = await call(c.controller, 'ControllerExpandVolume', {
        volumeId: v.volumeId,
        capacityRange: { requiredBytes: 32 * MiB },
      });
      expect(exp).toMatchObject({ capacityBytes: 32 * MiB, nodeExpansionRequired: false });
      const same = await call(c.controller, 'ControllerExpandVolume', {
        volumeId: v.volumeId,
        capacityRange: { requiredBytes: 8 * MiB },
      });
      expect(same.capacityBytes).toBe(32 * MiB);
      await call(c.controller, 'DeleteVolume', { volumeId: v.volumeId });
    });
  });

  describe('ListVolumes', () => {
    it("pages without duplicates and tolerates deletion of a page's last entry", async () => {
      const mine = [];
      for (let i = 0; i < 5; i++) mine.push((await create(uniq('page'))).volumeId as string);
      const seen: string[] = [];
      let token = '';
      let pages = 0;
      do {
        const page = await call(c.controller, 'ListVolumes', { maxEntries: 2, startingToken: token });
        expect(page.entries.length).toBeLessThanOrEqual(2);
        seen.push(...page.entries.map((e: any) => e.volume.volumeId));
        if (pages === 0 && page.nextToken) {
          // Delete the last entry of the first page: the token must still work.
          const last = page.entries[page.entries.length - 1].volume.volumeId;
          if (mine.includes(last)) {
            await call(c.controller, 'DeleteVolume', { volumeId: last });
            mine.splice(mine.indexOf(last), 1);
          }
        }
        token = page.nextToken;
        pages++;
      } while (token && pages < 100);
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen).toEqual(expect.arrayContaining(mine));
      const all = await call(c.controller, 'ListVolumes');
      expect(all.nextToken).toBe('');
      for (const id of mine) await call(c.controller, 'DeleteVolume', { volumeId: id });
    });
  });

  describe('restart', () => {
    it('a restarted driver keeps volumes, snapshots and publications; unpublish still works', async () => {
      const v = await create(uniq('restart'));
      const { staging, target } = await bringUp(v.volumeId);
      await writeFile(path.join(target, 'f'), 'before restart');
      const snap = (await call(c.controller, 'CreateSnapshot', { name: uniq('rsnap'), sourceVolumeId: v.volumeId }))
        .snapshot;

      await stop();
      await expect(stat(sock)).rejects.toMatchObject({ code: 'ENOENT' });
      await start();

      const gv = await call(c.controller, 'ControllerGetVolume', { volumeId: v.volumeId });
      expect(gv.volume.capacityBytes).toBe(16 * MiB);
      expect(gv.status.publishedNodeIds).toEqual([NODE]);
      expect((await call(c.controller, 'ListSnapshots', { snapshotId: snap.snapshotId })).entries).toHaveLength(1);
      expect(await readFile(path.join(target, 'f'), 'utf8')).toBe('before restart');
      // Republishing after restart recognises the existing mount.
      await call(c.node, 'NodePublishVolume', {
        volumeId: v.volumeId,
        stagingTargetPath: staging,
        targetPath: target,
        volumeCapability: mountCap(),
      });
      await tearDown(v.volumeId, staging, [target]);
      expect(await mountsUnder(path.dirname(target))).toEqual([]);
      await call(c.controller, 'DeleteSnapshot', { snapshotId: snap.snapshotId });
      await call(c.controller, 'DeleteVolume', { volumeId: v.volumeId });
    });

    it('refuses to take over a socket a live driver is serving', async () => {
      const other = new AbortController();
      await expect(
        startHostpathDriver({
          endpoint: sock,
          nodeId: NODE,
          stateDir: path.join(tmp, 'second'),
          signal: other.signal,
          logger: quietLogger(),
        }),
      ).rejects.toThrow(/in use/);
      expect((await call(c.identity, 'Probe')).ready.value).toBe(true);
    });

    it('a stale socket file is replaced at start', async () => {
      await stop();
      // A driver killed with SIGKILL leaves its socket file behind.
      const child = spawn(
        process.execPath,
        ['-e', "require('net').createServer().listen(process.argv[1], () => console.log('up'))", sock],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
      expect((await stat(sock)).isSocket()).toBe(true);
      await start();
      expect((await call(c.identity, 'Probe')).ready.value).toBe(true);
    });
  });

  describe('without --enable-attach', () => {
    it('ControllerPublish is UNIMPLEMENTED and not advertised; stage works without it', async () => {
      const dir = path.join(tmp, 'noattach');
      const sock2 = path.join(dir, 'csi.sock');
      const ac2 = new AbortController();
      const r2 = await startHostpathDriver({
        endpoint: sock2,
        nodeId: NODE,
        stateDir: path.join(dir, 'state'),
        maxVolumesPerNode: 7,
        signal: ac2.signal,
        logger: quietLogger(),
      });
      const c2 = connect(sock2);
      try {
        const cc = (await call(c2.controller, 'ControllerGetCapabilities')).capabilities.map((x: any) => x.rpc.type);
        expect(cc).not.toContain('PUBLISH_UNPUBLISH_VOLUME');
        expect((await call(c2.node, 'NodeGetInfo')).maxVolumesPerNode).toBe(7);
        await expectCode(
          call(c2.controller, 'ControllerPublishVolume', { volumeId: 'x', nodeId: NODE, volumeCapability: mountCap() }),
          status.UNIMPLEMENTED,
        );
        const v = (
          await call(c2.controller, 'CreateVolume', {
            name: 'n',
            volumeCapabilities: [mountCap()],
            capacityRange: { requiredBytes: MiB },
          })
        ).volume;
        const staging = path.join(dir, 'staging');
        await mkdir(staging, { recursive: true });
        await call(c2.node, 'NodeStageVolume', {
          volumeId: v.volumeId,
          stagingTargetPath: staging,
          volumeCapability: mountCap(),
        });
        await call(c2.node, 'NodeUnstageVolume', { volumeId: v.volumeId, stagingTargetPath: staging });
        await call(c2.controller, 'DeleteVolume', { volumeId: v.volumeId });
      } finally {
        c2.close();
        ac2.abort();
        await r2.done;
      }
    });
  });
});
