import type {
  ControllerGetVolumeRequest__Output,
  ControllerGetVolumeResponse,
  ListVolumesRequest__Output,
  ListVolumesResponse,
} from '../../proto/types.js';
import type { HostpathDriver } from '../driver.js';
import { missing } from '../errors.js';
import { paginate } from '../validate.js';

export async function listVolumes(d: HostpathDriver, req: ListVolumesRequest__Output): Promise<ListVolumesResponse> {
  const ids = d
    .liveVolumes()
    .map((v) => v.id)
    .sort();
  const page = paginate(ids, req.maxEntries, req.startingToken);
  const entries = [];
  for (const id of page.ids) {
    const v = d.volume(id);
    if (!v) continue;
    entries.push({
      volume: d.toCsiVolume(v),
      status: { publishedNodeIds: d.publishedNodes(v), volumeCondition: await d.condition(v) },
    });
  }
  return { entries, nextToken: page.nextToken };
}

export async function controllerGetVolume(
  d: HostpathDriver,
  req: ControllerGetVolumeRequest__Output,
): Promise<ControllerGetVolumeResponse> {
  if (!req.volumeId) throw missing('volume_id');
  const v = d.getVolume(req.volumeId);
  return {
    volume: d.toCsiVolume(v),
    status: { publishedNodeIds: d.publishedNodes(v), volumeCondition: await d.condition(v) },
  };
}
