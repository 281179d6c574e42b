/**
 * Pure edits of the Node and CSINode objects for driver (de)registration. Each returns the new
 * value, or undefined when nothing changes (so the caller skips the write).
 */
import { createHash } from 'node:crypto';
import type { Node } from 'kubernetes-types/core/v1.js';
import type { CSINode, CSINodeDriver } from 'kubernetes-types/storage/v1.js';
import { ANN_CSI_NODE_ID } from '../../../kube/names.js';
import { InvalidError } from '../../../util/errors.js';

export { ANN_CSI_NODE_ID };
export const ATTACH_LIMIT_PREFIX = 'attachable-volumes-csi-';
const RESOURCE_NAME_MAX = 63; // a resource name is a qualified name: at most 63 characters

/** The node status resource of a driver's attach limit; long driver names are shortened with a hash. */
export function attachLimitKey(driver: string): string {
  if (ATTACH_LIMIT_PREFIX.length + driver.length <= RESOURCE_NAME_MAX) return ATTACH_LIMIT_PREFIX + driver;
  const hash = createHash('sha1').update(driver).digest('hex').slice(0, 16);
  return ATTACH_LIMIT_PREFIX + driver.slice(0, RESOURCE_NAME_MAX - ATTACH_LIMIT_PREFIX.length - hash.length) + hash;
}

/** Parses the node-id annotation; InvalidError when it is not a JSON map of strings. */
export function parseNodeIds(annotations: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const raw = annotations?.[ANN_CSI_NODE_ID];
  if (raw === undefined || raw === '') return {};
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch (e) {
    throw new InvalidError(`annotation ${ANN_CSI_NODE_ID} is not JSON: ${raw}`, [], { cause: e });
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v) || Object.values(v).some((x) => typeof x !== 'string')) {
    throw new InvalidError(`annotation ${ANN_CSI_NODE_ID} is not a map of driver to node id: ${raw}`);
  }
  return v as Record<string, string>;
}

/**
 * Annotations with `driver` set to `nodeId`, or removed when `nodeId` is undefined (the
 * annotation itself is removed when no driver is left).
 */
export function withNodeId(
  annotations: Readonly<Record<string, string>> | undefined,
  driver: string,
  nodeId: string | undefined,
): Record<string, string> | undefined {
  const ids = parseNodeIds(annotations);
  if (ids[driver] === nodeId) return undefined;
  if (nodeId === undefined) delete ids[driver];
  else ids[driver] = nodeId;
  const out = { ...annotations };
  if (Object.keys(ids).length === 0) delete out[ANN_CSI_NODE_ID];
  else out[ANN_CSI_NODE_ID] = JSON.stringify(sortKeys(ids));
  return out;
}

/**
 * Labels with the driver's topology segments added. InvalidError when a segment collides with an
 * existing label of another value: the node would end up in two topologies at once.
 */
export function withTopologyLabels(
  labels: Readonly<Record<string, string>> | undefined,
  segments: Readonly<Record<string, string>>,
): { labels: Record<string, string>; added: string[] } | undefined {
  const added: string[] = [];
  for (const [k, v] of Object.entries(segments)) {
    const cur = labels?.[k];
    if (cur === undefined) added.push(k);
    else if (cur !== v)
      throw new InvalidError(`topology label ${k}=${v} collides with the node's existing label ${k}=${cur}`);
  }
  if (added.length === 0) return undefined;
  const out = { ...labels };
  for (const k of added) out[k] = segments[k] ?? '';
  return { labels: out, added };
}

/** The CSINode with `entry` in place of any driver of the same name (created when missing). */
export function withCsiNodeDriver(csinode: CSINode | undefined, node: Node, entry: CSINodeDriver): CSINode | undefined {
  const nodeName = node.metadata?.name ?? '';
  const base: CSINode = csinode ?? {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'CSINode',
    metadata: {
      name: nodeName,
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid: node.metadata?.uid ?? '' }],
    },
    spec: { drivers: [] },
  };
  const drivers = base.spec.drivers ?? [];
  const existing = drivers.find((d) => d.name === entry.name);
  if (csinode && existing && sameDriver(existing, entry)) return undefined;
  return { ...base, spec: { ...base.spec, drivers: [...drivers.filter((d) => d.name !== entry.name), entry] } };
}

/** The CSINode without the driver, or undefined when it is not listed. */
export function withoutCsiNodeDriver(csinode: CSINode, driver: string): CSINode | undefined {
  const drivers = csinode.spec.drivers ?? [];
  if (!drivers.some((d) => d.name === driver)) return undefined;
  return { ...csinode, spec: { ...csinode.spec, drivers: drivers.filter((d) => d.name !== driver) } };
}

/** The CSINode driver entry from NodeGetInfo: allocatable only when the driver states a limit. */
export function csiNodeDriver(
  driver: string,
  nodeId: string,
  topologyKeys: readonly string[],
  maxVolumesPerNode: number,
): CSINodeDriver {
  const entry: CSINodeDriver = { name: driver, nodeID: nodeId, topologyKeys: [...topologyKeys].sort() };
  if (maxVolumesPerNode > 0) entry.allocatable = { count: maxVolumesPerNode };
  return entry;
}

function sameDriver(a: CSINodeDriver, b: CSINodeDriver): boolean {
  return (
    a.nodeID === b.nodeID &&
    JSON.stringify([...(a.topologyKeys ?? [])].sort()) === JSON.stringify([...(b.topologyKeys ?? [])].sort()) &&
    (a.allocatable?.count ?? undefined) === (b.allocatable?.count ?? undefined)
  );
}

function sortKeys(o: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
}
