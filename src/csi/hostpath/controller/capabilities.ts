import type {
  ControllerGetCapabilitiesResponse,
  ControllerModifyVolumeResponse,
  ControllerServiceCapability,
} from '../../proto/types.js';
import type { HostpathDriver } from '../driver.js';
import { unimplemented } from '../errors.js';

/** Controller capabilities; PUBLISH_UNPUBLISH_VOLUME only when attach is enabled. */
export function controllerCapabilities(enableAttach: boolean): ControllerServiceCapability[] {
  const types = [
    'CREATE_DELETE_VOLUME',
    'PUBLISH_UNPUBLISH_VOLUME',
    'LIST_VOLUMES',
    'GET_CAPACITY',
    'CREATE_DELETE_SNAPSHOT',
    'LIST_SNAPSHOTS',
    'CLONE_VOLUME',
    'EXPAND_VOLUME',
    'LIST_VOLUMES_PUBLISHED_NODES',
    'GET_VOLUME',
    'VOLUME_CONDITION',
    'SINGLE_NODE_MULTI_WRITER',
  ] as const;
  return types.filter((t) => enableAttach || t !== 'PUBLISH_UNPUBLISH_VOLUME').map((type) => ({ rpc: { type } }));
}

export async function controllerGetCapabilities(d: HostpathDriver): Promise<ControllerGetCapabilitiesResponse> {
  return { capabilities: controllerCapabilities(d.config.enableAttach) };
}

export async function controllerModifyVolume(): Promise<ControllerModifyVolumeResponse> {
  throw unimplemented('ControllerModifyVolume is not supported');
}
