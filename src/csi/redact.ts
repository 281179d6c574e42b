/**
 * CSI requests as they may be recorded: every `secrets` map (the fields the CSI spec marks
 * `csi_secret`: CreateVolume, DeleteVolume, ControllerPublish/Unpublish, ValidateVolumeCapabilities,
 * ListSnapshots, CreateSnapshot, DeleteSnapshot, ControllerExpand, ControllerModify, NodeStage,
 * NodePublish, NodeExpand, the group snapshot calls) keeps its keys with each value stripped, as the
 * sidecars' protosanitizer prints them.
 */
export const STRIPPED = '***stripped***';

/** A deep copy with every value of every `secrets` map replaced by STRIPPED; buffers as base64. */
export function redactSecrets(m: unknown): unknown {
  if (Buffer.isBuffer(m) || m instanceof Uint8Array) return Buffer.from(m).toString('base64');
  if (Array.isArray(m)) return m.map(redactSecrets);
  if (typeof m !== 'object' || m === null) return m;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(m)) {
    if (k === 'secrets' && typeof v === 'object' && v !== null && !Array.isArray(v))
      out[k] = Object.fromEntries(Object.keys(v).map((s) => [s, STRIPPED]));
    else out[k] = redactSecrets(v);
  }
  return out;
}
