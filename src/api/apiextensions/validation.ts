/**
 * CustomResourceDefinition validation (apiextensions' ValidateCustomResourceDefinition) with
 * kube's field paths and messages. What Stowage does not implement is refused here with a clear
 * message: Webhook conversion and CEL `x-kubernetes-validations`.
 */
import type { FieldCause } from '../../util/errors.js';
import { duplicate, FIELD_IMMUTABLE, forbidden, invalid, notSupported, required } from '../resources/fielderrors.js';
import { isDNS1123Subdomain, maxLenError, regexError } from '../resources/names.js';
import { validateStructuralSchema } from './schema/structural.js';
import type { CRD, CRDNames, CRDVersion, PrinterColumn } from './types.js';

const DNS1035_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const DNS1035_RE = new RegExp(`^${DNS1035_FMT}$`);

/** Go's IsDNS1035Label. */
export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push(maxLenError(63));
  if (!DNS1035_RE.test(value))
    errs.push(
      regexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
        DNS1035_FMT,
        'my-name',
        'abc-123',
      ),
    );
  return errs;
}

/** Groups under k8s.io and kubernetes.io need the API review's approval annotation (kube's rule). */
const APPROVAL_ANNOTATION = 'api-approved.kubernetes.io';
function isProtectedGroup(group: string): boolean {
  return ['k8s.io', 'kubernetes.io'].some((d) => group === d || group.endsWith(`.${d}`));
}

const PRINTER_TYPES = ['integer', 'number', 'string', 'boolean', 'date'];
const PRINTER_FORMATS = ['int32', 'int64', 'float', 'double', 'byte', 'date', 'date-time', 'password'];

function label(value: string | undefined, field: string, out: FieldCause[], requiredMsg = ''): void {
  if (!value) {
    out.push(required(field, requiredMsg));
    return;
  }
  for (const m of isDNS1035Label(value)) out.push(invalid(field, value, m));
}

/** ValidateCustomResourceDefinitionNames (for spec.names and status.acceptedNames). */
export function validateNames(names: CRDNames | undefined, field: string): FieldCause[] {
  const out: FieldCause[] = [];
  if (!names) return [required(field)];
  label(names.plural, `${field}.plural`, out);
  if (names.singular) label(names.singular, `${field}.singular`, out);
  if (!names.kind) out.push(required(`${field}.kind`));
  else for (const m of isDNS1035Label(names.kind.toLowerCase())) out.push(invalid(`${field}.kind`, names.kind, m));
  if (names.listKind) {
    for (const m of isDNS1035Label(names.listKind.toLowerCase()))
      out.push(invalid(`${field}.listKind`, names.listKind, m));
    if (names.listKind === names.kind)
      out.push(invalid(`${field}.listKind`, names.listKind, 'kind and listKind may not be the same'));
  }
  (names.shortNames ?? []).forEach((s, i) => {
    for (const m of isDNS1035Label(s)) out.push(invalid(`${field}.shortNames[${i}]`, s, m));
  });
  (names.categories ?? []).forEach((c, i) => {
    for (const m of isDNS1035Label(c)) out.push(invalid(`${field}.categories[${i}]`, c, m));
  });
  return out;
}

function validatePrinterColumns(cols: readonly PrinterColumn[], field: string, out: FieldCause[]): void {
  cols.forEach((c, i) => {
    const f = `${field}[${i}]`;
    if (!c.name) out.push(required(`${f}.name`));
    if (!c.type) out.push(required(`${f}.type`));
    else if (!PRINTER_TYPES.includes(c.type)) out.push(notSupported(`${f}.type`, c.type, PRINTER_TYPES));
    if (c.format && !PRINTER_FORMATS.includes(c.format))
      out.push(notSupported(`${f}.format`, c.format, PRINTER_FORMATS));
    if (!c.jsonPath) out.push(required(`${f}.jsonPath`));
    if ((c.priority ?? 0) < 0)
      out.push(invalid(`${f}.priority`, c.priority ?? 0, 'must be greater than or equal to 0'));
  });
}

function validateScale(v: CRDVersion, field: string, out: FieldCause[]): void {
  const s = v.subresources?.scale;
  if (!s) return;
  if (!s.specReplicasPath) out.push(required(`${field}.specReplicasPath`));
  else if (!s.specReplicasPath.startsWith('.spec.'))
    out.push(invalid(`${field}.specReplicasPath`, s.specReplicasPath, 'should be a json path under .spec'));
  if (!s.statusReplicasPath) out.push(required(`${field}.statusReplicasPath`));
  else if (!s.statusReplicasPath.startsWith('.status.'))
    out.push(invalid(`${field}.statusReplicasPath`, s.statusReplicasPath, 'should be a json path under .status'));
  if (s.labelSelectorPath && !/^\.(spec|status)\./.test(s.labelSelectorPath))
    out.push(
      invalid(`${field}.labelSelectorPath`, s.labelSelectorPath, 'should be a json path under either .spec or .status'),
    );
}

function validateVersions(versions: readonly CRDVersion[] | undefined, out: FieldCause[]): void {
  if (!versions?.length) {
    out.push(
      invalid(
        'spec.versions',
        { rendered: '[]apiextensions.CustomResourceDefinitionVersion(nil)' },
        'must have exactly one version marked as storage version',
      ),
    );
    return;
  }
  const seen = new Set<string>();
  versions.forEach((v, i) => {
    const f = `spec.versions[${i}]`;
    label(v.name, `${f}.name`, out);
    if (seen.has(v.name)) out.push(duplicate(`spec.versions[${i}].name`, v.name));
    seen.add(v.name);
    const schema = v.schema?.openAPIV3Schema;
    if (!schema) out.push(required(`${f}.schema.openAPIV3Schema`, 'schemas are required'));
    else out.push(...validateStructuralSchema(schema, `${f}.schema.openAPIV3Schema`));
    validatePrinterColumns(v.additionalPrinterColumns ?? [], `${f}.additionalPrinterColumns`, out);
    validateScale(v, `${f}.subresources.scale`, out);
    if (v.deprecationWarning !== undefined && !v.deprecated)
      out.push(invalid(`${f}.deprecationWarning`, v.deprecationWarning, 'can only be set for deprecated versions'));
    if (v.deprecationWarning && v.deprecationWarning.length > 256)
      out.push(invalid(`${f}.deprecationWarning`, v.deprecationWarning, 'must be <= 256 characters long'));
  });
  const rendered = {
    rendered: `[]apiextensions.CustomResourceDefinitionVersion{${versions.map((v) => `"${v.name}"`).join(', ')}}`,
  };
  if (versions.filter((v) => v.storage).length !== 1)
    out.push(invalid('spec.versions', rendered, 'must have exactly one version marked as storage version'));
  if (!versions.some((v) => v.served))
    out.push(invalid('spec.versions', rendered, 'must have at least one version marked as served'));
}

function validateConversion(crd: CRD, out: FieldCause[]): void {
  const strategy = crd.spec.conversion?.strategy ?? 'None';
  if (strategy === 'Webhook')
    out.push(
      forbidden(
        'spec.conversion.strategy',
        'Webhook conversion is not supported by this server (Stowage converts with strategy None only: apiVersion is rewritten)',
      ),
    );
  else if (strategy !== 'None') out.push(notSupported('spec.conversion.strategy', strategy, ['None', 'Webhook']));
}

/** The spec rules shared by create and update. */
export function validateCRDSpec(crd: CRD): FieldCause[] {
  const out: FieldCause[] = [];
  const spec = crd.spec;
  if (!spec.group) out.push(required('spec.group'));
  else {
    for (const m of isDNS1123Subdomain(spec.group)) out.push(invalid('spec.group', spec.group, m));
    if (!spec.group.includes('.'))
      out.push(invalid('spec.group', spec.group, 'should be a domain with at least one dot'));
  }
  if (!spec.scope) out.push(required('spec.scope'));
  else if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster')
    out.push(notSupported('spec.scope', spec.scope, ['Cluster', 'Namespaced']));
  out.push(...validateNames(spec.names, 'spec.names'));
  validateVersions(spec.versions, out);
  validateConversion(crd, out);
  if (spec.preserveUnknownFields)
    out.push(invalid('spec.preserveUnknownFields', true, 'must be false in order to use defaults in the schema'));
  if (spec.group && isProtectedGroup(spec.group) && !crd.metadata.annotations?.[APPROVAL_ANNOTATION])
    out.push(
      required(
        `metadata.annotations[${APPROVAL_ANNOTATION}]`,
        `protected groups must have approval annotation "${APPROVAL_ANNOTATION}", see https://github.com/kubernetes/enhancements/pull/1111`,
      ),
    );
  const name = crd.metadata.name ?? '';
  if (spec.names?.plural && spec.group && name !== `${spec.names.plural}.${spec.group}`)
    out.push(invalid('metadata.name', name, 'must be spec.names.plural+"."+spec.group'));
  return out;
}

/** status.storedVersions: each listed version exists, and the storage version is listed. */
export function validateStoredVersions(crd: CRD): FieldCause[] {
  const stored = crd.status?.storedVersions;
  if (!stored) return [];
  const out: FieldCause[] = [];
  const names = new Set(crd.spec.versions.map((v) => v.name));
  stored.forEach((s, i) => {
    if (!names.has(s)) out.push(invalid(`status.storedVersions[${i}]`, s, 'must appear in spec.versions'));
  });
  const storage = crd.spec.versions.find((v) => v.storage)?.name;
  if (stored.length && storage && !stored.includes(storage))
    out.push(
      invalid(
        'status.storedVersions',
        { rendered: `[]string{${stored.map((s) => JSON.stringify(s)).join(', ')}}` },
        `must have the storage version ${storage}`,
      ),
    );
  return out;
}

/** Update rules: group and scope are immutable; stored versions may not be dropped from spec. */
export function validateCRDUpdate(crd: CRD, old: CRD): FieldCause[] {
  const out = validateCRDSpec(crd);
  if (crd.spec.group !== old.spec.group) out.push(invalid('spec.group', crd.spec.group, FIELD_IMMUTABLE));
  if (crd.spec.scope !== old.spec.scope) out.push(invalid('spec.scope', crd.spec.scope, FIELD_IMMUTABLE));
  out.push(...validateStoredVersions(crd));
  return out;
}
