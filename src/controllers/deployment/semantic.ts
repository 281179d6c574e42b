/**
 * A pod template as kube's controllers compare and hash it: the Go struct the JSON decodes into,
 * after the apiserver's protobuf storage round trip. Two JSON spellings that decode to the same
 * struct (a `resources: {}` kubectl's `rollout undo` writes back vs no `resources`, a
 * `creationTimestamp: null`, an empty list or map vs none) are the same template here, so the
 * pod-template-hash and FindNewReplicaSet (apiequality.Semantic.DeepEqual, which takes nil and
 * empty slices and maps as equal) see them as kube does. Pure.
 */
import type { PodTemplateSpec } from 'kubernetes-types/core/v1.js';

type Json = unknown;

/** Map-typed fields of the PodTemplateSpec tree: an empty map is a nil map after storage. */
const MAP_FIELDS = new Set([
  'labels',
  'annotations',
  'nodeSelector',
  'overhead',
  'limits',
  'requests',
  'volumeAttributes',
  'matchLabels',
]);

/**
 * Non-pointer struct fields: an empty object decodes to the zero struct, the same as absence.
 * `metadata` and `spec` (of the template and of an ephemeral volume's claim template) and a
 * container's `resources`. The pod-level `spec.resources` is a pointer: `{}` there is kept.
 */
const VALUE_STRUCT_FIELDS = new Set(['metadata', 'spec', 'resources']);

function isEmptyObject(v: Json): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0;
}

function clean(v: Json, podSpec: boolean): Json {
  if (Array.isArray(v)) return v.map((e) => clean(e, false));
  if (typeof v !== 'object' || v === null) return v;
  const out: Record<string, Json> = {};
  for (const [k, raw] of Object.entries(v)) {
    if (raw === null || raw === undefined) continue; // null decodes to a nil pointer/slice/map or a zero struct
    if (Array.isArray(raw) && raw.length === 0) continue;
    const value = clean(raw, false);
    if (isEmptyObject(value)) {
      if (MAP_FIELDS.has(k)) continue;
      if (VALUE_STRUCT_FIELDS.has(k) && !(podSpec && k === 'resources')) continue;
    }
    out[k] = value;
  }
  return out;
}

/** The template reduced to what Go's decoded struct distinguishes (a fresh object). */
export function semanticTemplate(t: PodTemplateSpec | undefined): Json {
  const { spec, ...rest } = t ?? {};
  const root = clean(rest, false) as Record<string, Json>;
  const podSpec = spec ? clean(spec, true) : undefined;
  if (podSpec !== undefined && !isEmptyObject(podSpec)) root.spec = podSpec;
  return root;
}
