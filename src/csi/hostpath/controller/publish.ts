import type {
  ControllerPublishVolumeRequest__Output,
  ControllerPublishVolumeResponse,
  ControllerUnpublishVolumeRequest__Output,
  ControllerUnpublishVolumeResponse,
} from '../../proto/types.js';
import type { HostpathDriver } from '../driver.js';
import { alreadyExists, invalidArgument, missing, notFound, resourceExhausted, unimplemented } from '../errors.js';
import { parseCapability, unsupportedReason } from '../validate.js';
import { commit } from '../intent.js';
import { checkKind } from './checks.js';

/** ControllerPublishVolume: records the attachment; the reply waits for the record to be durable. */
export async function controllerPublishVolume(
  d: HostpathDriver,
  req: ControllerPublishVolumeRequest__Output,
): Promise<ControllerPublishVolumeResponse> {
  const { config } = d;
  if (!config.enableAttach) throw unimplemented('ControllerPublishVolume is not supported (attach is disabled)');
  if (!req.volumeId) throw missing('volume_id');
  if (!req.nodeId) throw missing('node_id');
  const cap = parseCapability(req.volumeCapability, 'volume_capability');
  return d.locks.run(`vol:${req.volumeId}`, async () => {
    const v = d.getVolume(req.volumeId);
    if (!config.sharedStorage && req.nodeId !== config.nodeId)
      throw notFound(`node ${req.nodeId} does not exist (this driver serves node ${config.nodeId})`);
    checkKind(v, cap.kind, 'volume_capability');
    const why = unsupportedReason(cap);
    if (why) throw invalidArgument(why);
    const existing = v.attachments[req.nodeId];
    if (existing) {
      if (existing.readOnly !== req.readonly)
        throw alreadyExists(`volume ${v.id} is already published to ${req.nodeId} with readonly=${existing.readOnly}`);
      return { publishContext: {} };
    }
    if (config.maxVolumesPerNode > 0) {
      const count = d.liveVolumes().filter((x) => x.attachments[req.nodeId]).length;
      if (count >= config.maxVolumesPerNode)
        throw resourceExhausted(`node ${req.nodeId} already has ${count} volumes (max ${config.maxVolumesPerNode})`);
    }
    await commit(
      d,
      () => (v.attachments[req.nodeId] = { readOnly: req.readonly }),
      () => delete v.attachments[req.nodeId],
    );
    return { publishContext: {} };
  });
}

/** ControllerUnpublishVolume. Spec: an unknown volume or node can be regarded as unpublished → OK. */
export async function controllerUnpublishVolume(
  d: HostpathDriver,
  req: ControllerUnpublishVolumeRequest__Output,
): Promise<ControllerUnpublishVolumeResponse> {
  if (!d.config.enableAttach) throw unimplemented('ControllerUnpublishVolume is not supported (attach is disabled)');
  if (!req.volumeId) throw missing('volume_id');
  return d.locks.run(`vol:${req.volumeId}`, async () => {
    const v = d.volume(req.volumeId);
    if (!v) return {};
    if (req.nodeId) delete v.attachments[req.nodeId];
    else v.attachments = {};
    await d.store.save();
    return {};
  });
}
