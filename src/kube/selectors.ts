/**
 * Kubernetes label and field selectors, parsed and matched as kube-apiserver does
 * (k8s.io/apimachinery labels.Parse, fields.ParseSelector, metav1.LabelSelectorAsSelector).
 */
import { BadRequestError, InvalidError } from '../util/errors.js';
import type { FieldCause } from '../util/errors.js';
import { isQualifiedName, isValidLabelValue } from './validation.js';

/** Problems with a label key (a qualified name: optional DNS-subdomain prefix + '/' + name); [] when valid. */
export const validateLabelKey = isQualifiedName;

/** Problems with a label value (empty allowed, ≤63 chars); [] when valid. */
export const validateLabelValue = isValidLabelValue;

export const LABEL_OPERATORS = [
  'In',
  'NotIn',
  'Exists',
  'DoesNotExist',
  'Equals',
  'NotEquals',
  'GreaterThan',
  'LessThan',
] as const;
export type LabelOperator = (typeof LABEL_OPERATORS)[number];

export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  /** Sorted, de-duplicated. One value for Equals/NotEquals/GreaterThan/LessThan, none for (DoesNot)Exist. */
  readonly values: readonly string[];
}

/**
 * Requirements ANDed together. No requirements = selects everything; `nothing` = selects nothing
 * (what Kubernetes makes of a nil metav1.LabelSelector).
 */
export interface LabelSelector {
  readonly requirements: readonly LabelRequirement[];
  readonly nothing?: true;
}

export const EVERYTHING: LabelSelector = Object.freeze({ requirements: Object.freeze([]) });
export const NOTHING: LabelSelector = Object.freeze({ requirements: Object.freeze([]), nothing: true });

export function selectsEverything(sel: LabelSelector): boolean {
  return !sel.nothing && sel.requirements.length === 0;
}

/** Checks a requirement as Kubernetes' NewRequirement does; returns a message or undefined. */
function requirementProblem(r: LabelRequirement): string | undefined {
  const keyErrs = validateLabelKey(r.key);
  if (keyErrs.length) return `Invalid value: ${JSON.stringify(r.key)}: ${keyErrs.join('; ')}`;
  switch (r.operator) {
    case 'In':
    case 'NotIn':
      if (r.values.length === 0)
        return `values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty`;
      break;
    case 'Equals':
    case 'NotEquals':
      if (r.values.length !== 1)
        return 'values: Invalid value: []: exact-match compatibility requires one single value';
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (r.values.length !== 0)
        return 'values: Invalid value: []: values set must be empty for exists and does not exist';
      break;
    case 'GreaterThan':
    case 'LessThan':
      if (r.values.length !== 1)
        return "values: Invalid value: []: for 'Gt', 'Lt' operators, exactly one value is required";
      if (!INTEGER_RE.test(r.values[0]!)) {
        return `values[0]: Invalid value: ${JSON.stringify(r.values[0])}: for 'Gt', 'Lt' operators, the value must be an integer`;
      }
      break;
  }
  for (const v of r.values) {
    const errs = validateLabelValue(v);
    if (errs.length) return `[${r.key}]: Invalid value: ${JSON.stringify(v)}: ${errs.join('; ')}`;
  }
  return undefined;
}

const INTEGER_RE = /^[+-]?\d+$/;

type Tok = { t: 'id' | 'in' | 'notin' | '(' | ')' | ',' | '!' | '=' | '==' | '!=' | '>' | '<' | 'eos'; lit: string };
const SPECIAL = new Set(['=', '!', '(', ')', ',', '>', '<']);
const WHITESPACE = new Set([' ', '\t', '\r', '\n']);
const SYMBOLS = new Set(['=', '==', '!=', '!', '(', ')', ',', '>', '<']);

function lex(s: string): Tok[] {
  const toks: Tok[] = [];
  let i = 0;
  while (true) {
    while (i < s.length && WHITESPACE.has(s[i]!)) i++;
    if (i >= s.length) break;
    if (SPECIAL.has(s[i]!)) {
      // Longest run of special characters that is still a known symbol ("!=" not "!" then "=").
      let j = i + 1;
      while (j < s.length && SPECIAL.has(s[j]!) && SYMBOLS.has(s.slice(i, j + 1))) j++;
      toks.push({ t: s.slice(i, j) as Tok['t'], lit: s.slice(i, j) });
      i = j;
      continue;
    }
    let j = i;
    while (j < s.length && !SPECIAL.has(s[j]!) && !WHITESPACE.has(s[j]!)) j++;
    const word = s.slice(i, j);
    toks.push({ t: word === 'in' || word === 'notin' ? word : 'id', lit: word });
    i = j;
  }
  toks.push({ t: 'eos', lit: '' });
  return toks;
}

class LabelParser {
  private pos = 0;
  constructor(private readonly toks: Tok[]) {}

  /** In value position the keywords are ordinary identifiers: `x in (in)` is legal. */
  private peek(asValue = true): Tok {
    const tok = this.toks[this.pos]!;
    return asValue && (tok.t === 'in' || tok.t === 'notin') ? { t: 'id', lit: tok.lit } : tok;
  }
  private next(asValue = true): Tok {
    const tok = this.peek(asValue);
    this.pos++;
    return tok;
  }

  parse(): LabelRequirement[] {
    const out: LabelRequirement[] = [];
    while (true) {
      const tok = this.peek();
      if (tok.t === 'eos') return out;
      if (tok.t !== 'id' && tok.t !== '!')
        throw new Error(`found '${tok.lit}', expected: !, identifier, or 'end of string'`);
      out.push(this.requirement());
      const sep = this.next();
      if (sep.t === 'eos') return out;
      if (sep.t !== ',') throw new Error(`found '${sep.lit}', expected: ',' or 'end of string'`);
      const after = this.peek();
      if (after.t !== 'id' && after.t !== '!') throw new Error(`found '${after.lit}', expected: identifier after ','`);
    }
  }

  private requirement(): LabelRequirement {
    const bang = this.peek().t === '!';
    if (bang) this.pos++;
    const keyTok = this.next();
    if (keyTok.t !== 'id') throw new RequirementError(`found '${keyTok.lit}', expected: identifier`);
    const key = keyTok.lit;
    const keyErrs = validateLabelKey(key);
    if (keyErrs.length) throw new RequirementError(`Invalid value: ${JSON.stringify(key)}: ${keyErrs.join('; ')}`);
    const la = this.peek().t;
    if (bang || la === 'eos' || la === ',') {
      // `!key` takes no operator; a following token is reported by the caller as unexpected.
      return checked({ key, operator: bang ? 'DoesNotExist' : 'Exists', values: [] });
    }
    const op = this.next(false);
    switch (op.t) {
      case 'in':
      case 'notin':
        return checked({ key, operator: op.t === 'in' ? 'In' : 'NotIn', values: this.valueSet() });
      case '=':
      case '==':
        return checked({ key, operator: 'Equals', values: [this.exactValue()] });
      case '!=':
        return checked({ key, operator: 'NotEquals', values: [this.exactValue()] });
      case '>':
        return checked({ key, operator: 'GreaterThan', values: [this.exactValue()] });
      case '<':
        return checked({ key, operator: 'LessThan', values: [this.exactValue()] });
      default:
        throw new RequirementError(`found '${op.lit}', expected: in, notin, =, ==, !=, gt, lt`);
    }
  }

  private exactValue(): string {
    const la = this.peek();
    if (la.t === 'eos' || la.t === ',') return '';
    const tok = this.next();
    if (tok.t !== 'id') throw new RequirementError(`found '${tok.lit}', expected: identifier`);
    return tok.lit;
  }

  /** `(a,b)`; empty members are the empty value, so `()` and `(a,)` both contain "". */
  private valueSet(): string[] {
    const open = this.next();
    if (open.t !== '(') throw new RequirementError(`found '${open.lit}' expected: '('`);
    const values = new Set<string>();
    let expectValue = true;
    while (true) {
      const tok = this.next();
      if (tok.t === ')') {
        if (expectValue) values.add('');
        return [...values].sort();
      }
      if (tok.t === ',') {
        if (expectValue) values.add('');
        expectValue = true;
      } else if (tok.t === 'id' && expectValue) {
        values.add(tok.lit);
        expectValue = false;
      } else {
        throw new RequirementError(`found '${tok.lit}', expected: ',', ')' or identifier`);
      }
    }
  }
}

class RequirementError extends Error {}

function checked(r: LabelRequirement): LabelRequirement {
  const problem = requirementProblem(r);
  if (problem) throw new RequirementError(problem);
  return r;
}

function byKey(a: LabelRequirement, b: LabelRequirement): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/**
 * Parses a `labelSelector` query parameter. Empty → everything. Throws BadRequestError with
 * Kubernetes' wording (`unable to parse requirement: ...`).
 */
export function parseLabelSelector(s: string): LabelSelector {
  let reqs: LabelRequirement[];
  try {
    reqs = new LabelParser(lex(s)).parse();
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    throw new BadRequestError(e instanceof RequirementError ? `unable to parse requirement: ${msg}` : msg);
  }
  return { requirements: reqs.sort(byKey) };
}

function requirementMatches(r: LabelRequirement, labels: Record<string, string> | undefined): boolean {
  const has = labels !== undefined && Object.prototype.hasOwnProperty.call(labels, r.key);
  const v = has ? labels[r.key]! : undefined;
  switch (r.operator) {
    case 'In':
    case 'Equals':
      return v !== undefined && r.values.includes(v);
    case 'NotIn':
    case 'NotEquals':
      // Kubernetes: an object without the label satisfies a negative requirement.
      return v === undefined || !r.values.includes(v);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'GreaterThan':
    case 'LessThan': {
      if (v === undefined || !INTEGER_RE.test(v)) return false;
      const have = Number(v);
      const want = Number(r.values[0]);
      return r.operator === 'GreaterThan' ? have > want : have < want;
    }
  }
}

export function matchesLabels(sel: LabelSelector, labels: Record<string, string> | undefined): boolean {
  if (sel.nothing) return false;
  for (const r of sel.requirements) if (!requirementMatches(r, labels)) return false;
  return true;
}

/** The canonical string form (`a=b,c in (d,e),!f`), parseable by parseLabelSelector. */
export function formatLabelSelector(sel: LabelSelector): string {
  return sel.requirements
    .map((r) => {
      switch (r.operator) {
        case 'Exists':
          return r.key;
        case 'DoesNotExist':
          return `!${r.key}`;
        case 'Equals':
          return `${r.key}=${r.values[0]}`;
        case 'NotEquals':
          return `${r.key}!=${r.values[0]}`;
        case 'GreaterThan':
          return `${r.key}>${r.values[0]}`;
        case 'LessThan':
          return `${r.key}<${r.values[0]}`;
        case 'In':
          return `${r.key} in (${r.values.join(',')})`;
        case 'NotIn':
          return `${r.key} notin (${r.values.join(',')})`;
      }
    })
    .join(',');
}

/** metav1.LabelSelector as it appears in objects (PVC spec.selector, ...). */
export interface LabelSelectorObject {
  readonly matchLabels?: Readonly<Record<string, string>> | null;
  readonly matchExpressions?: ReadonlyArray<{
    readonly key: string;
    readonly operator: string;
    readonly values?: readonly string[] | null;
  }> | null;
}

const OBJECT_OPERATORS: Readonly<Record<string, LabelOperator>> = {
  In: 'In',
  NotIn: 'NotIn',
  Exists: 'Exists',
  DoesNotExist: 'DoesNotExist',
};

/**
 * metav1.LabelSelectorAsSelector. `{}` selects everything. A missing (null/undefined) selector
 * selects NOTHING by default, as in Kubernetes; callers whose rule differs say so with
 * `nil: 'everything'` — e.g. the PV controller, where a claim without spec.selector may bind any volume.
 * Invalid selectors throw InvalidError whose causes name fields under `fieldPath` (default "selector").
 */
export function labelSelectorFromObject(
  sel: LabelSelectorObject | null | undefined,
  opts: { nil?: 'nothing' | 'everything'; fieldPath?: string } = {},
): LabelSelector {
  if (sel === null || sel === undefined) return opts.nil === 'everything' ? EVERYTHING : NOTHING;
  const path = opts.fieldPath ?? 'selector';
  const causes: FieldCause[] = [];
  const reqs: LabelRequirement[] = [];
  for (const [key, value] of Object.entries(sel.matchLabels ?? {})) {
    const keyErrs = validateLabelKey(key);
    if (keyErrs.length) causes.push(invalid(`${path}.matchLabels`, key, keyErrs));
    const valErrs = validateLabelValue(value);
    if (valErrs.length) causes.push(invalid(`${path}.matchLabels`, value, valErrs));
    reqs.push({ key, operator: 'Equals', values: [value] });
  }
  (sel.matchExpressions ?? []).forEach((e, i) => {
    const at = `${path}.matchExpressions[${i}]`;
    const values = [...new Set(e.values ?? [])].sort();
    const op = OBJECT_OPERATORS[e.operator];
    if (op === undefined) {
      causes.push({
        type: 'FieldValueNotSupported',
        field: `${at}.operator`,
        message: `Unsupported value: ${JSON.stringify(e.operator)}: supported values: "DoesNotExist", "Exists", "In", "NotIn"`,
      });
      return;
    }
    const keyErrs = validateLabelKey(e.key);
    if (keyErrs.length) causes.push(invalid(`${at}.key`, e.key, keyErrs));
    if ((op === 'In' || op === 'NotIn') && values.length === 0) {
      causes.push({
        type: 'FieldValueRequired',
        field: `${at}.values`,
        message: "Required value: must be specified when `operator` is 'In' or 'NotIn'",
      });
    }
    if ((op === 'Exists' || op === 'DoesNotExist') && values.length > 0) {
      causes.push({
        type: 'FieldValueForbidden',
        field: `${at}.values`,
        message: "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
      });
    }
    (e.values ?? []).forEach((v, j) => {
      const errs = validateLabelValue(v);
      if (errs.length) causes.push(invalid(`${at}.values[${j}]`, v, errs));
    });
    reqs.push({ key: e.key, operator: op, values });
  });
  if (causes.length) throw new InvalidError(causes.map((c) => `${c.field}: ${c.message}`).join(', '), causes);
  return { requirements: reqs.sort(byKey) };
}

function invalid(field: string, value: string, errs: string[]): FieldCause {
  return { type: 'FieldValueInvalid', field, message: `Invalid value: ${JSON.stringify(value)}: ${errs.join('; ')}` };
}

// ---------------------------------------------------------------------------------------------
// Field selectors

export interface FieldRequirement {
  readonly field: string;
  readonly operator: '=' | '!=';
  readonly value: string;
}

export interface FieldSelector {
  readonly requirements: readonly FieldRequirement[];
}

/** Splits on commas not preceded by a backslash escape; escapes are kept for unescapeValue. */
function splitTerms(s: string): string[] {
  const terms: string[] = [];
  let start = 0;
  let escaped = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (escaped) escaped = false;
    else if (c === '\\') escaped = true;
    else if (c === ',') {
      terms.push(s.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(s.slice(start));
  return terms;
}

function unescapeValue(v: string): string {
  let out = '';
  let escaped = false;
  for (const c of v) {
    if (escaped) {
      if (c !== '\\' && c !== ',' && c !== '=')
        throw new BadRequestError(`invalid field selector: invalid escape sequence: \\${c}`);
      out += c;
      escaped = false;
    } else if (c === '\\') escaped = true;
    else if (c === ',' || c === '=')
      throw new BadRequestError(`invalid field selector: unescaped character ${JSON.stringify(c)}`);
    else out += c;
  }
  if (escaped) throw new BadRequestError('invalid field selector: invalid escape sequence: \\');
  return out;
}

/**
 * Parses a `fieldSelector` query parameter: `field=value`, `field==value`, `field!=value`, ANDed with
 * commas; `\,` `\=` `\\` escape the value, which may be empty. The field name is taken verbatim
 * (the first operator splits the term). Empty → everything.
 */
export function parseFieldSelector(s: string): FieldSelector {
  const reqs: FieldRequirement[] = [];
  for (const term of splitTerms(s)) {
    if (term === '') continue;
    const m = /!=|==|=/.exec(term);
    if (!m) throw new BadRequestError(`invalid selector: '${s}'; can't understand '${term}'`);
    reqs.push({
      field: term.slice(0, m.index),
      operator: m[0] === '!=' ? '!=' : '=',
      value: unescapeValue(term.slice(m.index + m[0].length)),
    });
  }
  return { requirements: reqs.sort((a, b) => (a.field < b.field ? -1 : a.field > b.field ? 1 : 0)) };
}

/** A field the object does not have reads as "" (Kubernetes fields.Set semantics). */
export function matchesFields(sel: FieldSelector, get: (field: string) => string | undefined): boolean {
  for (const r of sel.requirements) {
    const v = get(r.field) ?? '';
    if ((v === r.value) !== (r.operator === '=')) return false;
  }
  return true;
}

/** The requirements (and so the fields) a selector uses, for rejecting unsupported fields with 400. */
export function fieldSelectorRequirements(sel: FieldSelector): readonly FieldRequirement[] {
  return sel.requirements.map((r) => ({ ...r }));
}

/** The value a selector requires `field` to equal (for index lookups such as spec.nodeName), if any. */
export function fieldSelectorExactValue(sel: FieldSelector, field: string): string | undefined {
  return sel.requirements.find((r) => r.field === field && r.operator === '=')?.value;
}

export function formatFieldSelector(sel: FieldSelector): string {
  const esc = (v: string): string => v.replace(/[\\,=]/g, (c) => `\\${c}`);
  return sel.requirements.map((r) => `${r.field}${r.operator}${esc(r.value)}`).join(',');
}
