/**
 * Topology decisions of the external-provisioner (non-strict mode):
 * - requisite = the class's allowedTopologies (expanded), or else every topology the driver
 *   reports through CSINode topology keys and Node labels;
 * - preferred = requisite rotated so that the selected node's topology (WaitForFirstConsumer)
 *   comes first, or, without a selected node, rotated by a hash of the claim name to spread volumes;
 * - a selected node outside allowedTopologies is an error;
 * - PV node affinity = one node selector term per accessible topology of the created volume.
 */
import type { Node, TopologySelectorTerm, VolumeNodeAffinity } from 'kubernetes-types/core/v1.js';
import type { CSINode } from 'kubernetes-types/storage/v1.js';
import type { Topology, TopologyRequirement } from '../proto/types.js';
import { InvalidError } from '../../util/errors.js';

export type Segments = Readonly<Record<string, string>>;

function canonical(s: Segments): string {
  return JSON.stringify(
    Object.keys(s)
      .sort()
      .map((k) => [k, s[k]]),
  );
}

function dedupSorted(list: readonly Segments[]): Segments[] {
  const m = new Map<string, Segments>();
  for (const s of list) m.set(canonical(s), s);
  return [...m.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, s]) => s);
}

/** allowedTopologies terms as segments: each term is the cross product of its expressions' values. */
export function allowedTopologySegments(terms: readonly TopologySelectorTerm[] | undefined): Segments[] {
  const out: Segments[] = [];
  for (const term of terms ?? []) {
    let acc: Record<string, string>[] = [{}];
    for (const e of term.matchLabelExpressions ?? []) {
      acc = acc.flatMap((s) => e.values.map((v) => ({ ...s, [e.key]: v })));
    }
    if ((term.matchLabelExpressions ?? []).length > 0) out.push(...acc);
  }
  return dedupSorted(out);
}

/** The driver's topology keys on a node (from its CSINode entry); undefined when it is not registered. */
export function driverTopologyKeys(csiNode: CSINode | undefined, driver: string): readonly string[] | undefined {
  const d = csiNode?.spec?.drivers?.find((x) => x.name === driver);
  return d ? (d.topologyKeys ?? []) : undefined;
}

/** A node's topology for the driver: its labels for the driver's topology keys. */
export function nodeSegments(node: Node, keys: readonly string[]): Segments {
  const out: Record<string, string> = {};
  for (const k of keys) {
    const v = node.metadata?.labels?.[k];
    if (v === undefined) throw new InvalidError(`topology label ${k} not found on node ${node.metadata?.name ?? ''}`);
    out[k] = v;
  }
  return out;
}

function containsAll(outer: Segments, inner: Segments): boolean {
  return Object.entries(inner).every(([k, v]) => outer[k] === v);
}

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619) >>> 0;
  return h;
}

export interface TopologyInput {
  readonly allowed: readonly Segments[];
  /** Every topology where the driver runs (from CSINodes + Node labels). */
  readonly cluster: readonly Segments[];
  /** The selected node's topology, for WaitForFirstConsumer. */
  readonly selected?: Segments;
  readonly selectedNode?: string;
  readonly claimName: string;
}

/** CreateVolume's accessibility_requirements; undefined when there is no topology to speak of. */
export function accessibilityRequirements(i: TopologyInput): TopologyRequirement | undefined {
  let requisite: Segments[];
  if (i.allowed.length > 0) {
    requisite = dedupSorted(i.allowed);
    if (i.selected && !requisite.some((r) => containsAll(i.selected!, r))) {
      throw new InvalidError(
        `topology ${canonical(i.selected)} of selected node "${i.selectedNode ?? ''}" is not in allowed topologies`,
      );
    }
  } else {
    requisite = dedupSorted(i.selected ? [...i.cluster, i.selected] : i.cluster);
  }
  if (requisite.length === 0) return undefined;
  let start: number;
  if (i.selected) {
    start = requisite.findIndex((r) => containsAll(i.selected!, r));
  } else {
    start = hash(i.claimName) % requisite.length;
  }
  const preferred = [...requisite.slice(start), ...requisite.slice(0, start)];
  const toTopo = (s: Segments): Topology => ({ segments: { ...s } });
  return { requisite: requisite.map(toTopo), preferred: preferred.map(toTopo) };
}

/** PV node affinity from CreateVolume's accessible_topology: any of the topologies (OR of terms). */
export function nodeAffinityFrom(
  accessible: readonly { segments?: Record<string, string> | null }[] | undefined,
): VolumeNodeAffinity | undefined {
  const terms = (accessible ?? [])
    .map((t) => Object.entries(t.segments ?? {}).sort(([a], [b]) => (a < b ? -1 : 1)))
    .filter((e) => e.length > 0)
    .map((entries) => ({ matchExpressions: entries.map(([key, v]) => ({ key, operator: 'In', values: [v] })) }));
  if (terms.length === 0) return undefined;
  return { required: { nodeSelectorTerms: terms } };
}
