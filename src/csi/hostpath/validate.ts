/**
 * Pure argument checks and decisions for the hostpath driver; every failure is a CsiStatusError
 * with the code the CSI spec names and a message naming the field.
 */
import type { CapacityRange__Output, TopologyRequirement__Output, VolumeCapability__Output } from '../proto/types.js';
import { aborted, invalidArgument, missing, outOfRange } from './errors.js';
import type { AccessKind } from './state.js';

export const ACCESS_MODES = [
  'SINGLE_NODE_WRITER',
  'SINGLE_NODE_READER_ONLY',
  'MULTI_NODE_READER_ONLY',
  'MULTI_NODE_SINGLE_WRITER',
  'MULTI_NODE_MULTI_WRITER',
  'SINGLE_NODE_SINGLE_WRITER',
  'SINGLE_NODE_MULTI_WRITER',
] as const;
export type AccessModeName = (typeof ACCESS_MODES)[number];

/**
 * A hostpath volume lives on one node's disk, so only single-node modes can be honoured; a
 * MULTI_NODE_* request is refused (INVALID_ARGUMENT at CreateVolume, not confirmed by
 * ValidateVolumeCapabilities) rather than accepted and silently broken on a second node.
 */
export const SUPPORTED_MODES: ReadonlySet<AccessModeName> = new Set<AccessModeName>([
  'SINGLE_NODE_WRITER',
  'SINGLE_NODE_READER_ONLY',
  'SINGLE_NODE_SINGLE_WRITER',
  'SINGLE_NODE_MULTI_WRITER',
]);

export interface ParsedCapability {
  readonly kind: AccessKind;
  readonly mode: AccessModeName;
  readonly fsType: string;
  readonly mountFlags: readonly string[];
}

/** Checks shape only (access type and mode present and known). `field` names it in messages. */
export function parseCapability(cap: VolumeCapability__Output | null | undefined, field: string): ParsedCapability {
  if (!cap) throw missing(field);
  const mode = cap.accessMode?.mode;
  if (!mode || mode === 'UNKNOWN') throw invalidArgument(`${field}.access_mode is required`);
  if (!(ACCESS_MODES as readonly string[]).includes(mode))
    throw invalidArgument(`${field}.access_mode ${String(mode)} is unknown`);
  if (cap.block && cap.mount) throw invalidArgument(`${field}: access_type must be one of block or mount`);
  if (cap.accessType === 'block' || cap.block)
    return { kind: 'block', mode: mode as AccessModeName, fsType: '', mountFlags: [] };
  if (cap.accessType === 'mount' || cap.mount) {
    return {
      kind: 'mount',
      mode: mode as AccessModeName,
      fsType: cap.mount?.fsType ?? '',
      mountFlags: cap.mount?.mountFlags ?? [],
    };
  }
  throw invalidArgument(`${field}.access_type (block or mount) is required`);
}

/** Why this driver cannot honour a well-formed capability, or undefined when it can. */
export function unsupportedReason(c: ParsedCapability): string | undefined {
  if (!SUPPORTED_MODES.has(c.mode)) return `access mode ${c.mode} is not supported by a single-node driver`;
  return undefined;
}

/** Parses a capability list for CreateVolume: all one access kind, all supported. */
export function parseCreateCapabilities(caps: readonly VolumeCapability__Output[]): ParsedCapability[] {
  if (caps.length === 0) throw missing('volume_capabilities');
  const parsed = caps.map((c, i) => parseCapability(c, `volume_capabilities[${i}]`));
  for (const p of parsed) {
    const why = unsupportedReason(p);
    if (why) throw invalidArgument(why);
  }
  if (new Set(parsed.map((p) => p.kind)).size > 1)
    throw invalidArgument('volume_capabilities mix block and mount access types');
  return parsed;
}

export const GiB = 1024 * 1024 * 1024;
/** Size given to a volume when the request names none (the reference hostpath driver uses 1 GiB too). */
export const DEFAULT_VOLUME_BYTES = GiB;
/** Capacities are rounded up to whole 4 KiB pages so a block volume's loop device has no partial sector. */
export const CAPACITY_ALIGN = 4096;

export function roundUp(n: number, to: number): number {
  return Math.ceil(n / to) * to;
}

/**
 * The capacity to allocate for a capacity_range. OUT_OF_RANGE when the range is empty
 * (required > limit) or larger than the driver's whole capacity (`maxBytes`).
 */
export function chooseCapacity(
  range: CapacityRange__Output | null | undefined,
  maxBytes: number | undefined,
  minimum = 0,
): number {
  const required = Number(range?.requiredBytes ?? 0);
  const limit = Number(range?.limitBytes ?? 0);
  if (!Number.isSafeInteger(required) || required < 0)
    throw invalidArgument('capacity_range.required_bytes must not be negative');
  if (!Number.isSafeInteger(limit) || limit < 0)
    throw invalidArgument('capacity_range.limit_bytes must not be negative');
  if (limit > 0 && required > limit)
    throw outOfRange(`capacity_range.required_bytes ${required} exceeds limit_bytes ${limit}`);
  const want = Math.max(required, minimum);
  if (limit > 0 && want > limit)
    throw outOfRange(
      `capacity_range.limit_bytes ${limit} is smaller than the ${minimum} bytes needed (the source's size or the filesystem's minimum)`,
    );
  let size = want > 0 ? roundUp(want, CAPACITY_ALIGN) : DEFAULT_VOLUME_BYTES;
  // Rounding (or the default) must not break the caller's limit; limit >= want here.
  if (limit > 0 && size > limit) size = limit;
  if (maxBytes !== undefined && size > maxBytes)
    throw outOfRange(`${size} bytes exceeds the driver's total capacity of ${maxBytes} bytes`);
  return size;
}

/** Whether an existing volume of `capacity` satisfies a repeated request's range. */
export function capacityCompatible(capacity: number, range: CapacityRange__Output | null | undefined): boolean {
  const required = Number(range?.requiredBytes ?? 0);
  const limit = Number(range?.limitBytes ?? 0);
  return capacity >= required && (limit === 0 || capacity <= limit);
}

/**
 * True when the requirement admits this node: no requisite/preferred list, or one of its
 * topologies carries our segment value (a topology without our key says nothing about us and is
 * not a match).
 */
export function topologyAllows(
  req: TopologyRequirement__Output | null | undefined,
  key: string,
  nodeId: string,
): boolean {
  const all = [...(req?.requisite ?? []), ...(req?.preferred ?? [])];
  if (all.length === 0) return true;
  return all.some((t) => t.segments?.[key] === nodeId);
}

const TOKEN_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * One page of sorted ids. The token is the last id returned; the next page starts after it, so a
 * deleted last entry does not invalidate the token and nothing is listed twice. A token that is
 * not one of our ids → ABORTED (the spec's code for an invalid starting_token).
 */
export function paginate(
  sortedIds: readonly string[],
  maxEntries: number,
  startingToken: string,
): { ids: string[]; nextToken: string } {
  if (maxEntries < 0) throw invalidArgument('max_entries must not be negative');
  let start = 0;
  if (startingToken !== '') {
    if (!TOKEN_RE.test(startingToken)) throw aborted(`starting_token ${JSON.stringify(startingToken)} is not valid`);
    start = sortedIds.findIndex((id) => id > startingToken);
    if (start < 0) start = sortedIds.length;
  }
  const end = maxEntries > 0 ? Math.min(start + maxEntries, sortedIds.length) : sortedIds.length;
  const ids = sortedIds.slice(start, end);
  const nextToken = end < sortedIds.length && ids.length > 0 ? ids[ids.length - 1]! : '';
  return { ids, nextToken };
}
