import { describe, expect, it } from 'vitest';
import { attachEvents } from './events.js';
import { attachmentName, type DesiredAttachment, type VolumeAttachment } from './types.js';

const D = 'd.csi';
const desired: DesiredAttachment = {
  name: attachmentName('h', D, 'n1'),
  pvName: 'pv1',
  driver: D,
  volumeHandle: 'h',
  nodeName: 'n1',
  uniqueName: `kubernetes.io/csi/${D}^h`,
  multiAttachAllowed: false,
  pods: [{ namespace: 'ns', name: 'p', uid: 'u' }],
};
const va = (status: VolumeAttachment['status']): VolumeAttachment => ({
  metadata: { name: desired.name },
  spec: { attacher: D, nodeName: 'n1', source: { persistentVolumeName: 'pv1' } },
  ...(status ? { status } : {}),
});
const map = new Map([[desired.name, desired]]);

describe('attachEvents', () => {
  it('tells success once, each distinct failure once, nothing while pending', () => {
    let r = attachEvents(map, [va(undefined)], new Set());
    expect(r.events).toEqual([]);
    r = attachEvents(
      map,
      [va({ attached: false, attachError: { message: 'rpc error: code = Internal desc = boom' } })],
      r.reported,
    );
    expect(r.events).toEqual([
      {
        pod: desired.pods[0],
        type: 'Warning',
        reason: 'FailedAttachVolume',
        message: 'AttachVolume.Attach failed for volume "pv1" : rpc error: code = Internal desc = boom',
      },
    ]);
    expect(
      attachEvents(
        map,
        [va({ attached: false, attachError: { message: 'rpc error: code = Internal desc = boom' } })],
        r.reported,
      ).events,
    ).toEqual([]);
    r = attachEvents(map, [va({ attached: true })], r.reported);
    expect(r.events.map((e) => e.message)).toEqual(['AttachVolume.Attach succeeded for volume "pv1"']);
    expect(attachEvents(map, [va({ attached: true })], r.reported).events).toEqual([]);
    expect(attachEvents(new Map(), [va({ attached: true })], new Set()).events).toEqual([]);
  });
});
