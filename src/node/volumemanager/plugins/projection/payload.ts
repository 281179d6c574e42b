import { createHash } from 'node:crypto';
import { cpus, totalmem } from 'node:os';
import type { ConfigMap, DownwardAPIVolumeFile, KeyToPath, Pod, Secret } from 'kubernetes-types/core/v1.js';
import { quantityNanos } from '../../../../kube/quantity.js';
import type { PayloadFile } from '../../types.js';

/** The mode of files without their own (ConfigMapVolumeSourceDefaultMode & co.: 0644). */
export const DEFAULT_MODE = 0o644;

export interface PayloadLookups {
  configMap(namespace: string, name: string): ConfigMap | undefined;
  secret(namespace: string, name: string): Secret | undefined;
}

/** A payload that cannot be built: the kubelet's message (e.g. `configmap "x" not found`). */
export class PayloadError extends Error {}

/** kubelet atomic_writer validatePath: relative, no `..` element, not starting with `..`. */
export function validPayloadPath(p: string): string | undefined {
  if (p === '') return 'invalid path: must not be empty';
  if (p.startsWith('/')) return `invalid path: must be relative path: ${p}`;
  if (p.split('/').includes('..')) return `invalid path: must not contain '..': ${p}`;
  if (p.startsWith('..')) return `invalid path: must not start with '..': ${p}`;
  return undefined;
}

type Files = Map<string, PayloadFile>;
const put = (out: Files, path: string, data: Buffer, mode: number): void => {
  const bad = validPayloadPath(path);
  if (bad) throw new PayloadError(bad);
  out.set(path, { path, data, mode });
};

/** Keys → files: every key at its own name, or only the listed items at their paths (kubelet MakePayload). */
function keyed(
  out: Files,
  kind: 'configmap' | 'secret',
  data: ReadonlyMap<string, Buffer>,
  items: readonly KeyToPath[] | undefined,
  defaultMode: number,
  optional: boolean,
): void {
  if (!items?.length) {
    for (const [k, v] of data) put(out, k, v, defaultMode);
    return;
  }
  for (const it of items) {
    const v = data.get(it.key);
    if (v === undefined) {
      if (optional) continue;
      throw new PayloadError(
        `${kind === 'configmap' ? 'configmap' : 'secret'} references non-existent ${kind === 'configmap' ? 'config' : 'secret'} key: ${it.key}`,
      );
    }
    put(out, it.path, v, it.mode ?? defaultMode);
  }
}

export function configMapFiles(
  out: Files,
  ns: string,
  src: { name?: string; items?: KeyToPath[]; optional?: boolean },
  defaultMode: number,
  l: PayloadLookups,
): void {
  const cm = l.configMap(ns, src.name ?? '');
  if (!cm) {
    if (src.optional) return;
    throw new PayloadError(`configmap "${src.name ?? ''}" not found`);
  }
  const data = new Map<string, Buffer>();
  for (const [k, v] of Object.entries(cm.data ?? {})) data.set(k, Buffer.from(v, 'utf8'));
  for (const [k, v] of Object.entries(cm.binaryData ?? {})) data.set(k, Buffer.from(v, 'base64'));
  keyed(out, 'configmap', data, src.items, defaultMode, src.optional === true);
}

export function secretFiles(
  out: Files,
  ns: string,
  src: { name?: string; secretName?: string; items?: KeyToPath[]; optional?: boolean },
  defaultMode: number,
  l: PayloadLookups,
): void {
  const name = src.secretName ?? src.name ?? '';
  const s = l.secret(ns, name);
  if (!s) {
    if (src.optional) return;
    throw new PayloadError(`secret "${name}" not found`);
  }
  const data = new Map<string, Buffer>();
  for (const [k, v] of Object.entries(s.data ?? {})) data.set(k, Buffer.from(v, 'base64'));
  for (const [k, v] of Object.entries(s.stringData ?? {})) data.set(k, Buffer.from(v, 'utf8'));
  keyed(out, 'secret', data, src.items, defaultMode, src.optional === true);
}

/** fieldpath.FormatMap: `key="value"` lines sorted by key. */
export function formatMap(m: Readonly<Record<string, string>> | undefined): string {
  return Object.keys(m ?? {})
    .sort()
    .map((k) => `${k}=${JSON.stringify(m![k])}`)
    .join('\n');
}

const SUBSCRIPT = /^metadata\.(labels|annotations)\['(.+)'\]$/;

function fieldValue(pod: Pod, fieldPath: string): string {
  const md = pod.metadata ?? {};
  const sub = SUBSCRIPT.exec(fieldPath);
  if (sub) return (sub[1] === 'labels' ? md.labels : md.annotations)?.[sub[2]!] ?? '';
  switch (fieldPath) {
    case 'metadata.name':
      return md.name ?? '';
    case 'metadata.namespace':
      return md.namespace ?? '';
    case 'metadata.uid':
      return md.uid ?? '';
    case 'metadata.labels':
      return formatMap(md.labels);
    case 'metadata.annotations':
      return formatMap(md.annotations);
    default:
      throw new PayloadError(`unsupported fieldPath: ${fieldPath}`);
  }
}

/** resourceFieldRef: the container's limit or request over the divisor, rounded up; an unset limit is the node's capacity. */
function resourceValue(pod: Pod, ref: { containerName?: string; resource: string; divisor?: string }): string {
  const c = (pod.spec?.containers ?? []).find((x) => x.name === ref.containerName);
  if (!c) throw new PayloadError(`container ${ref.containerName ?? ''} not found in pod`);
  const [kind, res] = ref.resource.split('.', 2) as [string, string];
  const q = (kind === 'limits' ? c.resources?.limits : c.resources?.requests)?.[res];
  const node = BigInt(res === 'cpu' ? cpus().length : totalmem()) * 1_000_000_000n;
  const value = q !== undefined ? quantityNanos(q) : kind === 'requests' ? 0n : node;
  const divisor = quantityNanos(ref.divisor ?? '1');
  return String((value + divisor - 1n) / divisor);
}

export function downwardFiles(
  out: Files,
  pod: Pod,
  items: readonly DownwardAPIVolumeFile[] | undefined,
  defaultMode: number,
): void {
  for (const it of items ?? []) {
    let v: string;
    if (it.fieldRef) v = fieldValue(pod, it.fieldRef.fieldPath);
    else if (it.resourceFieldRef) v = resourceValue(pod, it.resourceFieldRef);
    else throw new PayloadError(`downwardAPI item ${it.path} has neither fieldRef nor resourceFieldRef`);
    put(out, it.path, Buffer.from(v, 'utf8'), it.mode ?? defaultMode);
  }
}

/** Digest of paths, modes and contents: equal digests mean nothing to write. */
export function payloadDigest(files: readonly PayloadFile[]): string {
  const h = createHash('sha256');
  for (const f of [...files].sort((a, b) => (a.path < b.path ? -1 : 1)))
    h.update(`${f.path}\0${f.mode}\0${f.data.length}\0`).update(f.data);
  return h.digest('hex');
}

export type { Files };
