import type { KubeObject } from './types.js';
import { base64ErrorAt } from '../decode/base64.js';

/**
 * Small helpers shared by the core kinds (namespace, node, pod, event, secret, configmap, lease):
 * safe reads of untyped object JSON, structural equality, and the status/spec hand-over rules of
 * Kubernetes' strategies. Field errors and name rules come from fielderrors.ts and names.ts.
 */

/** `obj[key]` as a plain object (records only), or undefined. */
export function objectAt(obj: unknown, key: string): Record<string, unknown> | undefined {
  if (!obj || typeof obj !== 'object') return undefined;
  const v = (obj as Record<string, unknown>)[key];
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}
/** `obj[key]` as an array of plain objects (non-objects dropped), or []. */
export function listAt(obj: unknown, key: string): Array<Record<string, unknown>> {
  if (!obj || typeof obj !== 'object') return [];
  const v = (obj as Record<string, unknown>)[key];
  return Array.isArray(v)
    ? v.filter((x): x is Record<string, unknown> => !!x && typeof x === 'object' && !Array.isArray(x))
    : [];
}
/** `obj[key]` if it is a string, else ''. */
export function strAt(obj: unknown, key: string): string {
  if (!obj || typeof obj !== 'object') return '';
  const v = (obj as Record<string, unknown>)[key];
  return typeof v === 'string' ? v : '';
}
/** Ensures `obj[key]` is an object and returns it. */
export function ensureObject(obj: Record<string, unknown>, key: string): Record<string, unknown> {
  const cur = objectAt(obj, key);
  if (cur) return cur;
  const fresh: Record<string, unknown> = {};
  obj[key] = fresh;
  return fresh;
}

/** Keeps `old`'s status on a main-resource update (kinds with a /status subresource). */
export function keepStatus(obj: KubeObject, old: KubeObject): void {
  if (old.status === undefined) delete obj.status;
  else obj.status = structuredClone(old.status);
}

/**
 * On a /status update the spec stays `old`'s (Kubernetes' status strategies for namespaces, nodes
 * and pods copy the old spec; metadata changes pass, the generic layer guards the fields it owns).
 */
export function keepSpec(obj: KubeObject, old: KubeObject): void {
  if (old.spec === undefined) delete obj.spec;
  else obj.spec = structuredClone(old.spec);
}

const CONFIG_KEY = '[-._a-zA-Z0-9]+';
const CONFIG_KEY_RE = new RegExp(`^${CONFIG_KEY}$`);

/** IsConfigMapKey (keys of ConfigMap and Secret data): problems, [] when valid. */
export function configKeyErrors(key: string): string[] {
  const errs: string[] = [];
  if (key.length > 253) errs.push('must be no more than 253 characters');
  if (!CONFIG_KEY_RE.test(key)) {
    errs.push(
      "a valid config key must consist of alphanumeric characters, '-', '_' or '.' " +
        `(e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '${CONFIG_KEY}')`,
    );
  }
  if (key === '.') errs.push("must not be '.'");
  else if (key === '..') errs.push("must not be '..'");
  else if (key.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

/** Secrets and ConfigMaps may hold at most 1 MiB of data (corev1.MaxSecretSize). */
export const MAX_DATA_SIZE = 1024 * 1024;

/** Bytes of standard, padded base64 (what Go's encoding/json accepts for []byte; CR/LF ignored), or undefined. */
export function decodeBase64(s: string): Buffer | undefined {
  return base64ErrorAt(s) < 0 ? Buffer.from(s.replace(/[\r\n]/g, ''), 'base64') : undefined;
}

/** String-valued entries of a map field, or {}. */
export function stringMapAt(obj: unknown, key: string): Record<string, unknown> {
  return objectAt(obj, key) ?? {};
}
