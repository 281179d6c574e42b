import type { NodeGetCapabilitiesResponse, NodeGetInfoResponse, NodeServiceCapability } from '../../proto/types.js';
import type { HostpathDriver } from '../driver.js';

export function nodeCapabilities(): NodeServiceCapability[] {
  const types = [
    'STAGE_UNSTAGE_VOLUME',
    'GET_VOLUME_STATS',
    'EXPAND_VOLUME',
    'SINGLE_NODE_MULTI_WRITER',
    'VOLUME_CONDITION',
  ] as const;
  return types.map((type) => ({ rpc: { type } }));
}

export async function nodeGetInfo(d: HostpathDriver): Promise<NodeGetInfoResponse> {
  return { nodeId: d.config.nodeId, maxVolumesPerNode: d.config.maxVolumesPerNode, accessibleTopology: d.topology() };
}

export async function nodeGetCapabilities(): Promise<NodeGetCapabilitiesResponse> {
  return { capabilities: nodeCapabilities() };
}
