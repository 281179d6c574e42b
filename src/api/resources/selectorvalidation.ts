import type { FieldCause } from '../../util/errors.js';
import { duplicate, forbidden, invalid, required } from './fielderrors.js';
import { isQualifiedName, isValidLabelValue, nameIsDNSSubdomain, validateLabels, validateWith } from './names.js';

/** Label selectors, node selectors and topology selector terms, validated as Kubernetes does. */

type Json = Record<string, unknown>;

function asObj(v: unknown): Json | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : undefined;
}
function asList(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}
function asStr(v: unknown): string {
  return typeof v === 'string' ? v : '';
}
function strings(v: unknown): string[] {
  return asList(v).map(asStr);
}

/** metav1 `ValidateLabelSelector` (matchLabels + matchExpressions). */
export function validateLabelSelector(selector: unknown, field: string): FieldCause[] {
  const sel = asObj(selector);
  if (!sel) return [];
  const out: FieldCause[] = [];
  const matchLabels = asObj(sel.matchLabels) as Record<string, string> | undefined;
  out.push(...validateLabels(matchLabels, `${field}.matchLabels`));
  asList(sel.matchExpressions).forEach((e, i) => {
    const p = `${field}.matchExpressions[${i}]`;
    const req = asObj(e) ?? {};
    const values = strings(req.values);
    const op = asStr(req.operator);
    if (op === 'In' || op === 'NotIn') {
      if (values.length === 0)
        out.push(required(`${p}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
    } else if (op === 'Exists' || op === 'DoesNotExist') {
      if (values.length > 0)
        out.push(forbidden(`${p}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
    } else {
      out.push(invalid(`${p}.operator`, op, 'not a valid selector operator'));
    }
    out.push(...validateWith(isQualifiedName, asStr(req.key), `${p}.key`));
    values.forEach((v, j) => out.push(...validateWith(isValidLabelValue, v, `${p}.values[${j}]`)));
  });
  return out;
}

function validateNodeSelectorRequirement(req: Json, p: string, allowInvalidLabelValue: boolean): FieldCause[] {
  const out: FieldCause[] = [];
  const values = strings(req.values);
  const op = asStr(req.operator);
  switch (op) {
    case 'In':
    case 'NotIn':
      if (values.length === 0)
        out.push(required(`${p}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0)
        out.push(forbidden(`${p}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
      break;
    case 'Gt':
    case 'Lt':
      if (values.length !== 1)
        out.push(required(`${p}.values`, "must be specified single value when `operator` is 'Lt' or 'Gt'"));
      break;
    default:
      out.push(invalid(`${p}.operator`, op, 'not a valid selector operator'));
  }
  out.push(...validateWith(isQualifiedName, asStr(req.key), `${p}.key`));
  if (!allowInvalidLabelValue) {
    values.forEach((v, j) => out.push(...validateWith(isValidLabelValue, v, `${p}.values[${j}]`)));
  }
  return out;
}

function validateNodeFieldSelectorRequirement(req: Json, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  const values = strings(req.values);
  const op = asStr(req.operator);
  if (op === 'In' || op === 'NotIn') {
    if (values.length !== 1) {
      out.push(
        required(`${p}.values`, "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"),
      );
    }
  } else {
    out.push(invalid(`${p}.operator`, op, 'not a valid selector operator'));
  }
  if (asStr(req.key) !== 'metadata.name') {
    out.push(invalid(`${p}.key`, asStr(req.key), 'not a valid field selector key'));
  } else {
    values.forEach((v, j) => {
      for (const m of nameIsDNSSubdomain(v, false)) out.push(invalid(`${p}.values[${j}]`, v, m));
    });
  }
  return out;
}

/** core `ValidateNodeSelector`: at least one term; each term's expressions and fields. */
export function validateNodeSelector(selector: unknown, field: string, allowInvalidLabelValue = false): FieldCause[] {
  const sel = asObj(selector) ?? {};
  const termsPath = `${field}.nodeSelectorTerms`;
  const terms = asList(sel.nodeSelectorTerms);
  if (terms.length === 0) return [required(termsPath, 'must have at least one node selector term')];
  const out: FieldCause[] = [];
  terms.forEach((t, i) => {
    const term = asObj(t) ?? {};
    const p = `${termsPath}[${i}]`;
    asList(term.matchExpressions).forEach((e, j) =>
      out.push(
        ...validateNodeSelectorRequirement(asObj(e) ?? {}, `${p}.matchExpressions[${j}]`, allowInvalidLabelValue),
      ),
    );
    asList(term.matchFields).forEach((e, j) =>
      out.push(...validateNodeFieldSelectorRequirement(asObj(e) ?? {}, `${p}.matchFields[${j}]`)),
    );
  });
  return out;
}

/**
 * core `ValidateTopologySelectorTerm`. Returns the key → values map too, which StorageClass uses
 * to spot duplicate terms.
 */
export function validateTopologySelectorTerm(
  term: unknown,
  field: string,
): { exprs: Map<string, Set<string>>; causes: FieldCause[] } {
  const causes: FieldCause[] = [];
  const exprs = new Map<string, Set<string>>();
  asList(asObj(term)?.matchLabelExpressions).forEach((e, i) => {
    const req = asObj(e) ?? {};
    const p = `${field}.matchLabelExpressions[${i}]`;
    const values = strings(req.values);
    const set = new Set<string>();
    if (values.length === 0) causes.push(required(`${p}.values`));
    values.forEach((v, j) => {
      if (set.has(v)) causes.push(duplicate(`${p}.values[${j}]`, v));
      set.add(v);
    });
    const key = asStr(req.key);
    causes.push(...validateWith(isQualifiedName, key, `${p}.key`));
    if (exprs.has(key)) causes.push(duplicate(`${p}.key`, key));
    exprs.set(key, set);
  });
  return { exprs, causes };
}
