import { describe, it, expect } from 'vitest';
import { csiProto, registrationProto, protoDir } from './index.js';

describe('proto loading', () => {
  it('finds the proto directory', () => {
    expect(protoDir()).toMatch(/src\/csi\/proto$/);
  });

  it('defines every CSI RPC named by the spec', () => {
    const v1 = csiProto().csi.v1;
    expect(Object.keys(v1.Identity.service).sort()).toEqual(['GetPluginCapabilities', 'GetPluginInfo', 'Probe']);
    expect(Object.keys(v1.Controller.service).sort()).toEqual([
      'ControllerExpandVolume',
      'ControllerGetCapabilities',
      'ControllerGetVolume',
      'ControllerModifyVolume',
      'ControllerPublishVolume',
      'ControllerUnpublishVolume',
      'CreateSnapshot',
      'CreateVolume',
      'DeleteSnapshot',
      'DeleteVolume',
      'GetCapacity',
      'ListSnapshots',
      'ListVolumes',
      'ValidateVolumeCapabilities',
    ]);
    expect(Object.keys(v1.Node.service).sort()).toEqual([
      'NodeExpandVolume',
      'NodeGetCapabilities',
      'NodeGetInfo',
      'NodeGetVolumeStats',
      'NodePublishVolume',
      'NodeStageVolume',
      'NodeUnpublishVolume',
      'NodeUnstageVolume',
    ]);
    expect(v1.Node.service.NodePublishVolume.path).toBe('/csi.v1.Node/NodePublishVolume');
  });

  it('uses the registration paths the kubelet dials', () => {
    const svc = registrationProto().pluginregistration.Registration.service;
    expect(svc.GetInfo.path).toBe('/pluginregistration.Registration/GetInfo');
    expect(svc.NotifyRegistrationStatus.path).toBe('/pluginregistration.Registration/NotifyRegistrationStatus');
  });

  // Hand-encoded bytes pin the spec's field numbers, so a renumbering in csi.proto fails here.
  it.each([
    {
      name: 'NodePublishVolumeRequest target_path=4 readonly=6',
      encode: () =>
        csiProto().csi.v1.Node.service.NodePublishVolume.requestSerialize({ targetPath: 'x', readonly: true }),
      want: [0x22, 0x01, 0x78, 0x30, 0x01],
    },
    {
      name: 'Volume capacity_bytes=1 volume_id=2',
      encode: () =>
        csiProto().csi.v1.Controller.service.CreateVolume.responseSerialize({
          volume: { capacityBytes: 5, volumeId: 'v' },
        }),
      want: [0x0a, 0x05, 0x08, 0x05, 0x12, 0x01, 0x76],
    },
    {
      name: 'NodeGetInfoResponse node_id=1 max_volumes_per_node=2',
      encode: () => csiProto().csi.v1.Node.service.NodeGetInfo.responseSerialize({ nodeId: 'n', maxVolumesPerNode: 3 }),
      want: [0x0a, 0x01, 0x6e, 0x10, 0x03],
    },
    {
      name: 'PluginInfo supported_versions=4',
      encode: () =>
        registrationProto().pluginregistration.Registration.service.GetInfo.responseSerialize({
          supportedVersions: ['1.0.0'],
        }),
      want: [0x22, 0x05, ...Buffer.from('1.0.0')],
    },
  ])('$name', ({ encode, want }) => {
    expect([...encode()]).toEqual(want);
  });

  it('decodes with camelCase fields, string enums, defaults and oneof names', () => {
    const m = csiProto().csi.v1.Node.service.NodeStageVolume;
    const bytes = m.requestSerialize({
      volumeId: 'v',
      volumeCapability: { mount: { fsType: 'ext4' }, accessMode: { mode: 1 } },
    });
    const got = m.requestDeserialize(bytes);
    expect(got.volumeId).toBe('v');
    expect(got.stagingTargetPath).toBe('');
    expect(got.volumeCapability?.accessType).toBe('mount');
    expect(got.volumeCapability?.accessMode?.mode).toBe('SINGLE_NODE_WRITER');
    expect(got.secrets).toEqual({});
  });
});
