import type { FieldCause } from '../../util/errors.js';
import type { ObjectMeta } from './types.js';
import { FIELD_IMMUTABLE, forbidden, invalid, required, tooLong } from './fielderrors.js';
export {
  DNS1123_LABEL_MAX_LENGTH,
  DNS1123_SUBDOMAIN_MAX_LENGTH,
  TOTAL_ANNOTATION_SIZE_LIMIT_B,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  maxLenError,
  regexError,
} from '../../kube/validation.js';
import {
  TOTAL_ANNOTATION_SIZE_LIMIT_B,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
} from '../../kube/validation.js';

/** A name validator: `prefix` is true for generateName (a trailing dash is then fine). */
export type NameValidator = (name: string, prefix: boolean) => string[];

function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name;
}

export const nameIsDNSSubdomain: NameValidator = (name, prefix) =>
  isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);
export const nameIsDNSLabel: NameValidator = (name, prefix) => isDNS1123Label(prefix ? maskTrailingDash(name) : name);

/** Invalid causes for each problem `check` finds in `value`. */
export function validateWith(check: (v: string) => string[], value: string, field: string): FieldCause[] {
  return check(value).map((m) => invalid(field, value, m));
}

export function validateLabels(labels: Record<string, string> | undefined, field: string): FieldCause[] {
  const out: FieldCause[] = [];
  for (const [k, v] of Object.entries(labels ?? {})) {
    out.push(...validateWith(isQualifiedName, k, field));
    out.push(...validateWith(isValidLabelValue, String(v), field));
  }
  return out;
}

export function validateAnnotations(annotations: Record<string, string> | undefined, field: string): FieldCause[] {
  const out: FieldCause[] = [];
  let size = 0;
  for (const [k, v] of Object.entries(annotations ?? {})) {
    for (const m of isQualifiedName(k.toLowerCase())) out.push(invalid(field, k, m));
    size += Buffer.byteLength(k) + Buffer.byteLength(String(v));
  }
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT_B) out.push(tooLong(field, TOTAL_ANNOTATION_SIZE_LIMIT_B));
  return out;
}

const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

export function validateFinalizers(finalizers: readonly string[] | undefined, field: string): FieldCause[] {
  const out: FieldCause[] = [];
  const list = finalizers ?? [];
  for (const f of list) {
    out.push(...validateWith(isQualifiedName, f, field));
    if (!f.includes('/') && !STANDARD_FINALIZERS.has(f)) {
      out.push(invalid(field, f, 'name is neither a standard finalizer name nor is it fully qualified'));
    }
  }
  if (list.includes('orphan') && list.includes('foregroundDeletion')) {
    out.push(
      invalid(
        field,
        { rendered: `[]string{${list.map((f) => JSON.stringify(f)).join(', ')}}` },
        'finalizer orphan and foregroundDeletion cannot be both set',
      ),
    );
  }
  return out;
}

function validateOwnerReferences(refs: ObjectMeta['ownerReferences'], field: string): FieldCause[] {
  const out: FieldCause[] = [];
  const controllers: string[] = [];
  (refs ?? []).forEach((r, i) => {
    const p = `${field}[${i}]`;
    const apiVersion = typeof r.apiVersion === 'string' ? r.apiVersion : '';
    const version = apiVersion.includes('/') ? (apiVersion.split('/')[1] ?? '') : apiVersion;
    const str = (k: string): string => (typeof r[k] === 'string' ? (r[k] as string) : '');
    if (!version) out.push(invalid(`${p}.apiVersion`, apiVersion, 'version must not be empty'));
    if (!str('kind')) out.push(invalid(`${p}.kind`, str('kind'), 'kind must not be empty'));
    if (!str('name')) out.push(invalid(`${p}.name`, str('name'), 'name must not be empty'));
    if (!str('uid')) out.push(invalid(`${p}.uid`, str('uid'), 'uid must not be empty'));
    if (r.controller === true) controllers.push(`${str('kind')}/${str('name')}`);
  });
  if (controllers.length > 1) {
    out.push(
      invalid(
        field,
        { rendered: '[]v1.OwnerReference{...}' },
        `Only one reference can have Controller set to true. Found "true" in references for ${controllers.join(' and ')}`,
      ),
    );
  }
  return out;
}

export interface ObjectMetaRules {
  /** Namespaced kinds require metadata.namespace; cluster-scoped kinds forbid it. */
  readonly namespaced: boolean;
  /** How metadata.name (and generateName) must look; DNS-1123 subdomain unless told otherwise. */
  readonly nameFn?: NameValidator;
}

/** `ValidateObjectMeta` of core validation: name, namespace, generation, labels, annotations, owners, finalizers. */
export function validateObjectMeta(meta: ObjectMeta, rules: ObjectMetaRules, field = 'metadata'): FieldCause[] {
  const nameFn = rules.nameFn ?? nameIsDNSSubdomain;
  const out: FieldCause[] = [];
  if (meta.generateName) {
    for (const m of nameFn(meta.generateName, true)) out.push(invalid(`${field}.generateName`, meta.generateName, m));
  }
  if (!meta.name) out.push(required(`${field}.name`, 'name or generateName is required'));
  else for (const m of nameFn(meta.name, false)) out.push(invalid(`${field}.name`, meta.name, m));
  if (rules.namespaced) {
    if (!meta.namespace) out.push(required(`${field}.namespace`));
    else
      for (const m of nameIsDNSLabel(meta.namespace, false)) out.push(invalid(`${field}.namespace`, meta.namespace, m));
  } else if (meta.namespace) {
    out.push(forbidden(`${field}.namespace`, 'not allowed on this type'));
  }
  if (typeof meta.generation === 'number' && meta.generation < 0) {
    out.push(invalid(`${field}.generation`, meta.generation, 'must be greater than or equal to 0'));
  }
  out.push(...validateLabels(meta.labels, `${field}.labels`));
  out.push(...validateAnnotations(meta.annotations, `${field}.annotations`));
  out.push(...validateOwnerReferences(meta.ownerReferences, `${field}.ownerReferences`));
  out.push(...validateFinalizers(meta.finalizers, `${field}.finalizers`));
  return out;
}

/**
 * `ValidateObjectMetaUpdate` minus the resourceVersion check (the registry owns resourceVersion):
 * identity fields are immutable, labels/annotations/finalizers stay well-formed, and no finalizer
 * may be added once deletion started.
 */
export function validateObjectMetaUpdate(meta: ObjectMeta, old: ObjectMeta, field = 'metadata'): FieldCause[] {
  const out: FieldCause[] = [];
  if (old.deletionTimestamp) {
    const before = new Set(old.finalizers ?? []);
    for (const f of meta.finalizers ?? []) {
      if (!before.has(f))
        out.push(
          forbidden(
            `${field}.finalizers`,
            `no new finalizers can be added if the object is being deleted, found new finalizers []string{${JSON.stringify(f)}}`,
          ),
        );
    }
  }
  if ((meta.generation ?? 0) < (old.generation ?? 0)) {
    out.push(invalid(`${field}.generation`, meta.generation ?? 0, 'must not be decremented'));
  }
  const immutable = [
    'name',
    'namespace',
    'uid',
    'creationTimestamp',
    'deletionTimestamp',
    'deletionGracePeriodSeconds',
  ] as const;
  for (const k of immutable) {
    const nv = meta[k];
    if ((nv ?? '') !== (old[k] ?? ''))
      out.push(invalid(`${field}.${k}`, (nv as string | number | undefined) ?? '', FIELD_IMMUTABLE));
  }
  out.push(...validateLabels(meta.labels, `${field}.labels`));
  out.push(...validateAnnotations(meta.annotations, `${field}.annotations`));
  out.push(...validateOwnerReferences(meta.ownerReferences, `${field}.ownerReferences`));
  out.push(...validateFinalizers(meta.finalizers, `${field}.finalizers`));
  return out;
}
