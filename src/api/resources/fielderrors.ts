import type { FieldCause } from '../../util/errors.js';

/**
 * Kubernetes field errors (`k8s.io/apimachinery/pkg/util/validation/field`) as StatusCauses:
 * `type` is the CauseType, `message` is what `field.Error.ErrorBody()` prints, `field` the path.
 */

export const CAUSE_TYPES = {
  Required: 'FieldValueRequired',
  Invalid: 'FieldValueInvalid',
  NotSupported: 'FieldValueNotSupported',
  Forbidden: 'FieldValueForbidden',
  Duplicate: 'FieldValueDuplicate',
  TooLong: 'FieldValueTooLong',
  TooMany: 'FieldValueTooMany',
  NotFound: 'FieldValueNotFound',
} as const;
export type CauseType = (typeof CAUSE_TYPES)[keyof typeof CAUSE_TYPES];

const TYPE_TEXT: Record<CauseType, string> = {
  FieldValueRequired: 'Required value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  FieldValueNotFound: 'Not found',
};

/** A bad value already rendered the way Go's `%#v` would print it (structs, maps). */
export interface RenderedValue {
  readonly rendered: string;
}

/** What a cause may report as its bad value. */
export type BadValue = string | number | bigint | boolean | null | undefined | RenderedValue | object;

/** Go's `strconv.Quote` for the strings we meet (JSON escaping is the same for printable ASCII). */
export function goQuote(s: string): string {
  return JSON.stringify(s);
}

function renderValue(v: BadValue): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  if (typeof v === 'object' && 'rendered' in v && typeof (v as RenderedValue).rendered === 'string') {
    return (v as RenderedValue).rendered;
  }
  return JSON.stringify(v);
}

function cause(type: CauseType, field: string, body: string, detail: string): FieldCause {
  return { type, field, message: detail ? `${body}: ${detail}` : body };
}

export function required(field: string, detail = ''): FieldCause {
  return cause(CAUSE_TYPES.Required, field, TYPE_TEXT.FieldValueRequired, detail);
}

export function forbidden(field: string, detail: string): FieldCause {
  return cause(CAUSE_TYPES.Forbidden, field, TYPE_TEXT.FieldValueForbidden, detail);
}

export function invalid(field: string, value: BadValue, detail: string): FieldCause {
  return cause(CAUSE_TYPES.Invalid, field, `${TYPE_TEXT.FieldValueInvalid}: ${renderValue(value)}`, detail);
}

/** ValidateNonnegativeField of an optional integer field: nothing when it is absent. */
export function nonNegativeField(value: unknown, field: string): FieldCause[] {
  if (value === undefined || value === null) return [];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    return [invalid(field, value as number, 'must be greater than or equal to 0')];
  return [];
}

export function duplicate(field: string, value: BadValue): FieldCause {
  return cause(CAUSE_TYPES.Duplicate, field, `${TYPE_TEXT.FieldValueDuplicate}: ${renderValue(value)}`, '');
}

export function notFound(field: string, value: BadValue): FieldCause {
  return cause(CAUSE_TYPES.NotFound, field, `${TYPE_TEXT.FieldValueNotFound}: ${renderValue(value)}`, '');
}

/** `field.NotSupported`: the valid values are quoted and listed in the order given. */
export function notSupported(field: string, value: BadValue, validValues: readonly string[]): FieldCause {
  const detail = validValues.length ? `supported values: ${validValues.map(goQuote).join(', ')}` : '';
  return cause(CAUSE_TYPES.NotSupported, field, `${TYPE_TEXT.FieldValueNotSupported}: ${renderValue(value)}`, detail);
}

/** `field.TooLong`: the value itself is never printed. */
export function tooLong(field: string, maxLength: number): FieldCause {
  return cause(CAUSE_TYPES.TooLong, field, TYPE_TEXT.FieldValueTooLong, `must have at most ${maxLength} bytes`);
}

/** `field.ValidateImmutableField`'s message. */
export const FIELD_IMMUTABLE = 'field is immutable';

/** The error text of one cause, as `field.Error.Error()` prints it. */
export function causeText(c: FieldCause): string {
  return `${c.field}: ${c.message}`;
}

/** Kind → API group for the kinds Stowage serves outside the core group (for qualified kinds). */
const KIND_GROUPS: Readonly<Record<string, string>> = {
  StorageClass: 'storage.k8s.io',
  CSIDriver: 'storage.k8s.io',
  CSINode: 'storage.k8s.io',
  VolumeAttachment: 'storage.k8s.io',
  CSIStorageCapacity: 'storage.k8s.io',
  VolumeAttributesClass: 'storage.k8s.io',
  Lease: 'coordination.k8s.io',
  Deployment: 'apps',
  ReplicaSet: 'apps',
  EndpointSlice: 'discovery.k8s.io',
  Scale: 'autoscaling',
};

/**
 * The message of a 422 Invalid Status exactly as `apierrors.NewInvalid` builds it:
 * `<Kind[.group]> "<name>" is invalid: <aggregate>`, where the aggregate drops repeated texts and is
 * bracketed only when more than one remains. `group` defaults from the kinds Stowage serves.
 */
export function formatInvalidMessage(
  kind: string,
  name: string,
  causes: readonly FieldCause[],
  group?: string,
): string {
  const g = group ?? KIND_GROUPS[kind] ?? '';
  const qualifiedKind = g ? `${kind}.${g}` : kind;
  const head = `${qualifiedKind} ${goQuote(name)} is invalid`;
  const texts: string[] = [];
  for (const c of causes) {
    const t = causeText(c);
    if (!texts.includes(t)) texts.push(t);
  }
  if (texts.length === 0) return head;
  return `${head}: ${texts.length === 1 ? texts[0] : `[${texts.join(', ')}]`}`;
}
