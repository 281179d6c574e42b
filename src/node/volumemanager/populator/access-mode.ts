import type { CsiAccessMode } from '../types.js';

/** PV access modes → CSI access mode (kubelet's mapping, single-node forms for RWO/RWOP). */
export function csiAccessMode(modes: readonly string[] | undefined): CsiAccessMode {
  const m = modes ?? [];
  if (m.includes('ReadWriteOncePod')) return 'SINGLE_NODE_SINGLE_WRITER';
  if (m.includes('ReadWriteOnce')) return 'SINGLE_NODE_WRITER';
  if (m.includes('ReadWriteMany')) return 'MULTI_NODE_MULTI_WRITER';
  if (m.includes('ReadOnlyMany')) return 'MULTI_NODE_READER_ONLY';
  return 'SINGLE_NODE_WRITER';
}
