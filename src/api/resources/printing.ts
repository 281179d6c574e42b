import type { TableColumn } from './types.js';
import { resolveRef, schemaFor } from '../openapi/schemas.js';
import { humanDuration } from './common.js';

/**
 * Table printing helpers of the core kinds: ages of arbitrary timestamps, and column definitions
 * whose descriptions are the fields' documentation, as kube-apiserver's printers declare them.
 */

// One implementation of kube's `duration.HumanDuration` in the project: common.ts owns it.
export { humanDuration };

/** kube's `translateTimestampSince`: `<unknown>` for a missing/unparseable time, else its age. */
export function timestampSince(ts: unknown, now: number): string {
  if (typeof ts !== 'string' || ts === '') return '<unknown>';
  const t = Date.parse(ts);
  if (Number.isNaN(t)) return '<unknown>';
  return humanDuration(now - t);
}

/** The AGE cell of an object: the age of metadata.creationTimestamp. */
export function age(obj: { metadata?: { creationTimestamp?: unknown } }, now: number): string {
  return timestampSince(obj.metadata?.creationTimestamp, now);
}

/** Description of a field in the schemas (kube's column descriptions are the fields' docs). */
export function fieldDoc(group: string, kind: string, path: readonly string[]): string {
  let s = schemaFor(group, 'v1', kind);
  for (const [i, p] of path.entries()) {
    const next = resolveRef(s).properties?.[p];
    if (!next) return '';
    if (i === path.length - 1) return next.description ?? '';
    s = resolveRef(next.items ?? next);
  }
  return '';
}

const META_NAME_DOC = (): string => fieldDoc('', 'ConfigMap', ['metadata', 'name']);
const META_AGE_DOC = (): string => fieldDoc('', 'ConfigMap', ['metadata', 'creationTimestamp']);

/** A column definition; `wide` columns only show with `-o wide` (priority 1). */
export function column(
  name: string,
  description: string,
  opts: { type?: TableColumn['type']; wide?: boolean; format?: string } = {},
): TableColumn {
  return { name, type: opts.type ?? 'string', format: opts.format ?? '', description, priority: opts.wide ? 1 : 0 };
}
/** The NAME column as kube declares it. */
export function nameColumn(opts: { wide?: boolean } = {}): TableColumn {
  return column('Name', META_NAME_DOC(), { format: 'name', ...opts });
}
/** The AGE column as kube declares it. */
export function ageColumn(): TableColumn {
  return column('Age', META_AGE_DOC());
}
