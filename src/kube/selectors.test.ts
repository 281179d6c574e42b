import { describe, expect, it } from 'vitest';
import { BadRequestError, InvalidError } from '../util/errors.js';
import {
  EVERYTHING,
  NOTHING,
  fieldSelectorExactValue,
  fieldSelectorRequirements,
  formatFieldSelector,
  formatLabelSelector,
  labelSelectorFromObject,
  matchesFields,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
  selectsEverything,
  validateLabelKey,
  validateLabelValue,
} from './selectors.js';
import type { LabelSelectorObject } from './selectors.js';

describe('parseLabelSelector', () => {
  it.each([
    { s: '', want: '' },
    { s: 'a=b', want: 'a=b' },
    { s: 'a==b', want: 'a=b' },
    { s: 'a!=b', want: 'a!=b' },
    { s: 'a', want: 'a' },
    { s: '!a', want: '!a' },
    { s: ' a  in ( y , x ) ,  b notin (z) ', want: 'a in (x,y),b notin (z)' },
    { s: 'x in (foo,,baz),y,z notin ()', want: 'x in (,baz,foo),y,z notin ()' },
    { s: 'in in (in,notin)', want: 'in in (in,notin)' },
    { s: 'a=', want: 'a=' },
    { s: 'a=,b', want: 'a=,b' },
    { s: 'example.com/tier=front-end', want: 'example.com/tier=front-end' },
    { s: 'z=1,a=2', want: 'a=2,z=1' },
    { s: 'a>5,b<10', want: 'a>5,b<10' },
  ])('parses $s', ({ s, want }) => {
    expect(formatLabelSelector(parseLabelSelector(s))).toBe(want);
  });

  it.each([
    { s: 'a=b c', err: "found 'c', expected: ',' or 'end of string'" },
    { s: ',a', err: "found ',', expected: !, identifier, or 'end of string'" },
    { s: 'a,', err: "found '', expected: identifier after ','" },
    { s: 'a in b', err: "unable to parse requirement: found 'b' expected: '('" },
    { s: 'a in (b', err: "unable to parse requirement: found '', expected: ',', ')' or identifier" },
    { s: 'a in (b c)', err: 'unable to parse requirement' },
    { s: 'a notin', err: 'unable to parse requirement' },
    { s: '!a=b', err: "found '=', expected: ',' or 'end of string'" },
    { s: 'a b', err: "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt" },
    { s: 'a=b=c', err: "found '=', expected: ',' or 'end of string'" },
    { s: 'a=(b)', err: "unable to parse requirement: found '(', expected: identifier" },
    { s: 'a b=c', err: 'unable to parse requirement' },
    { s: '-a=b', err: 'unable to parse requirement: Invalid value: "-a": name part must consist of alphanumeric' },
    { s: 'a/b/c=d', err: 'a qualified name must consist' },
    { s: 'Example.com/a=b', err: 'prefix part a lowercase RFC 1123 subdomain' },
    { s: `a=${'x'.repeat(64)}`, err: 'must be no more than 63 characters' },
    { s: 'a=b_', err: 'a valid label must be an empty string' },
    { s: 'a in (ok,-bad)', err: 'Invalid value: "-bad"' },
    // "-1" is an integer but not a valid label value, and Kubernetes checks both.
    { s: 'b<-1', err: 'a valid label must be an empty string' },
    { s: 'a>x', err: "for 'Gt', 'Lt' operators, the value must be an integer" },
  ])('rejects $s', ({ s, err }) => {
    let caught: unknown;
    try {
      parseLabelSelector(s);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(BadRequestError);
    expect((caught as Error).message).toContain(err);
  });
});

describe('matchesLabels', () => {
  const cases: Array<{ sel: string; labels: Record<string, string> | undefined; want: boolean }> = [
    { sel: '', labels: undefined, want: true },
    { sel: 'a=b', labels: { a: 'b' }, want: true },
    { sel: 'a=b', labels: { a: 'c' }, want: false },
    { sel: 'a=b', labels: undefined, want: false },
    { sel: 'a=', labels: { a: '' }, want: true },
    { sel: 'a=', labels: {}, want: false },
    { sel: 'a!=b', labels: { a: 'b' }, want: false },
    { sel: 'a!=b', labels: { a: 'c' }, want: true },
    { sel: 'a!=b', labels: {}, want: true },
    { sel: 'a in (x,y)', labels: { a: 'y' }, want: true },
    { sel: 'a in (x,y)', labels: { a: 'z' }, want: false },
    { sel: 'a in (x,y)', labels: {}, want: false },
    { sel: 'a notin (x)', labels: { a: 'x' }, want: false },
    { sel: 'a notin (x)', labels: { a: 'y' }, want: true },
    { sel: 'a notin (x)', labels: undefined, want: true },
    { sel: 'a', labels: { a: '' }, want: true },
    { sel: 'a', labels: { b: 'a' }, want: false },
    { sel: '!a', labels: { b: 'x' }, want: true },
    { sel: '!a', labels: { a: 'x' }, want: false },
    { sel: 'a=b,c', labels: { a: 'b' }, want: false },
    { sel: 'a=b,c', labels: { a: 'b', c: '1' }, want: true },
    { sel: 'n>5', labels: { n: '6' }, want: true },
    { sel: 'n>5', labels: { n: '5' }, want: false },
    { sel: 'n<5', labels: { n: 'x' }, want: false },
    { sel: 'n<5', labels: {}, want: false },
    { sel: 'toString', labels: {}, want: false },
  ];
  it.each(cases)('$sel on $labels → $want', ({ sel, labels, want }) => {
    expect(matchesLabels(parseLabelSelector(sel), labels)).toBe(want);
  });
});

describe('labelSelectorFromObject', () => {
  it('treats {} as everything and nil as nothing unless told otherwise', () => {
    expect(selectsEverything(labelSelectorFromObject({}))).toBe(true);
    expect(matchesLabels(labelSelectorFromObject({}), undefined)).toBe(true);
    expect(matchesLabels(labelSelectorFromObject(undefined), {})).toBe(false);
    expect(matchesLabels(labelSelectorFromObject(null), { a: 'b' })).toBe(false);
    expect(labelSelectorFromObject(null)).toBe(NOTHING);
    expect(labelSelectorFromObject(undefined, { nil: 'everything' })).toBe(EVERYTHING);
    expect(selectsEverything(NOTHING)).toBe(false);
  });

  it('combines matchLabels and matchExpressions', () => {
    const sel = labelSelectorFromObject({
      matchLabels: { tier: 'gold' },
      matchExpressions: [
        { key: 'zone', operator: 'In', values: ['b', 'a', 'a'] },
        { key: 'legacy', operator: 'DoesNotExist' },
        { key: 'env', operator: 'NotIn', values: ['dev'] },
      ],
    });
    expect(formatLabelSelector(sel)).toBe('env notin (dev),!legacy,tier=gold,zone in (a,b)');
    expect(matchesLabels(sel, { tier: 'gold', zone: 'a' })).toBe(true);
    expect(matchesLabels(sel, { tier: 'gold', zone: 'a', env: 'dev' })).toBe(false);
    expect(matchesLabels(sel, { tier: 'gold', zone: 'c' })).toBe(false);
    expect(matchesLabels(sel, { tier: 'gold', zone: 'a', legacy: '' })).toBe(false);
  });

  const invalidCases: Array<{ sel: LabelSelectorObject; field: string; type: string }> = [
    { sel: { matchLabels: { '-x': 'a' } }, field: 'spec.selector.matchLabels', type: 'FieldValueInvalid' },
    { sel: { matchLabels: { x: 'a b' } }, field: 'spec.selector.matchLabels', type: 'FieldValueInvalid' },
    {
      sel: { matchExpressions: [{ key: 'x', operator: 'Gt', values: ['1'] }] },
      field: 'spec.selector.matchExpressions[0].operator',
      type: 'FieldValueNotSupported',
    },
    {
      sel: { matchExpressions: [{ key: 'x', operator: 'In', values: [] }] },
      field: 'spec.selector.matchExpressions[0].values',
      type: 'FieldValueRequired',
    },
    {
      sel: { matchExpressions: [{ key: 'x', operator: 'Exists', values: ['a'] }] },
      field: 'spec.selector.matchExpressions[0].values',
      type: 'FieldValueForbidden',
    },
    {
      sel: { matchExpressions: [{ key: 'a/b/c', operator: 'Exists' }] },
      field: 'spec.selector.matchExpressions[0].key',
      type: 'FieldValueInvalid',
    },
    {
      sel: { matchExpressions: [{ key: 'x', operator: 'In', values: ['ok', '_bad'] }] },
      field: 'spec.selector.matchExpressions[0].values[1]',
      type: 'FieldValueInvalid',
    },
  ];
  it.each(invalidCases)('rejects $field ($type)', ({ sel, field, type }) => {
    let caught: unknown;
    try {
      labelSelectorFromObject(sel, { fieldPath: 'spec.selector' });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(InvalidError);
    expect((caught as InvalidError).causes).toEqual([expect.objectContaining({ field, type })]);
  });
});

describe('label key and value validation', () => {
  it.each([
    { key: 'a', ok: true },
    { key: 'kubernetes.io/hostname', ok: true },
    { key: 'A.b-c_d', ok: true },
    { key: `${'a'.repeat(63)}`, ok: true },
    { key: `${'a'.repeat(64)}`, ok: false },
    { key: '', ok: false },
    { key: '/a', ok: false },
    { key: 'a/', ok: false },
    { key: 'a_/b', ok: false },
    { key: 'a.', ok: false },
  ])('key $key valid: $ok', ({ key, ok }) => expect(validateLabelKey(key).length === 0).toBe(ok));

  it.each([
    { v: '', ok: true },
    { v: 'a.b_c-D9', ok: true },
    { v: '_a', ok: false },
    { v: 'a b', ok: false },
    { v: 'x'.repeat(64), ok: false },
  ])('value "$v" valid: $ok', ({ v, ok }) => expect(validateLabelValue(v).length === 0).toBe(ok));
});

describe('parseFieldSelector', () => {
  it.each([
    { s: '', want: [] },
    { s: 'metadata.name=foo', want: [{ field: 'metadata.name', operator: '=', value: 'foo' }] },
    { s: 'metadata.name==foo', want: [{ field: 'metadata.name', operator: '=', value: 'foo' }] },
    { s: 'status.phase!=Bound', want: [{ field: 'status.phase', operator: '!=', value: 'Bound' }] },
    { s: 'involvedObject.namespace=', want: [{ field: 'involvedObject.namespace', operator: '=', value: '' }] },
    {
      s: 'b=1,a=2',
      want: [
        { field: 'a', operator: '=', value: '2' },
        { field: 'b', operator: '=', value: '1' },
      ],
    },
    { s: 'a=x\\,y\\=z\\\\', want: [{ field: 'a', operator: '=', value: 'x,y=z\\' }] },
    { s: 'a=b,', want: [{ field: 'a', operator: '=', value: 'b' }] },
  ])('parses $s', ({ s, want }) => {
    expect(fieldSelectorRequirements(parseFieldSelector(s))).toEqual(want);
  });

  it.each([
    { s: 'metadata.name', err: "invalid selector: 'metadata.name'; can't understand 'metadata.name'" },
    { s: 'a=b,c', err: "can't understand 'c'" },
    { s: 'a=b=c', err: 'unescaped character "="' },
    { s: 'a=b\\x', err: 'invalid escape sequence: \\x' },
    { s: 'a=b\\', err: 'invalid escape sequence' },
  ])('rejects $s', ({ s, err }) => {
    expect(() => parseFieldSelector(s)).toThrow(BadRequestError);
    expect(() => parseFieldSelector(s)).toThrow(err);
  });

  it('round-trips escaped values', () => {
    const s = 'a=x\\,y\\=z\\\\,b!=';
    expect(formatFieldSelector(parseFieldSelector(s))).toBe(s);
  });
});

describe('matchesFields', () => {
  const obj: Record<string, string> = {
    'metadata.name': 'pv1',
    'status.phase': 'Bound',
    'spec.claimRef.namespace': '',
  };
  const get = (f: string): string | undefined => obj[f];
  it.each([
    { s: '', want: true },
    { s: 'metadata.name=pv1', want: true },
    { s: 'metadata.name=pv2', want: false },
    { s: 'metadata.name!=pv2', want: true },
    { s: 'metadata.name=pv1,status.phase!=Bound', want: false },
    { s: 'spec.claimRef.namespace=', want: true },
    { s: 'spec.nodeName=', want: true },
    { s: 'spec.nodeName!=', want: false },
  ])('$s → $want', ({ s, want }) => expect(matchesFields(parseFieldSelector(s), get)).toBe(want));

  it('exposes the exact value a field must have', () => {
    const sel = parseFieldSelector('spec.nodeName=n1,status.phase!=Failed');
    expect(fieldSelectorExactValue(sel, 'spec.nodeName')).toBe('n1');
    expect(fieldSelectorExactValue(sel, 'status.phase')).toBeUndefined();
  });
});
