import { describe, expect, it } from 'vitest';
import {
  ageString,
  compareQuantities,
  duplicate,
  formatInvalidMessage,
  formatQuantity,
  forbidden,
  humanDuration,
  invalid,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  keepAllButStatus,
  keepOldStatus,
  notSupported,
  parseQuantity,
  quantityBytes,
  QuantityError,
  required,
  tooLong,
  validateLabelSelector,
  validateNodeSelector,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './common.js';
import type { KubeObject } from './types.js';

describe('field causes', () => {
  it.each([
    { c: required('spec.capacity'), msg: 'Required value', type: 'FieldValueRequired' },
    {
      c: required('spec', 'must specify a volume type'),
      msg: 'Required value: must specify a volume type',
      type: 'FieldValueRequired',
    },
    { c: invalid('metadata.name', 'A', 'bad'), msg: 'Invalid value: "A": bad', type: 'FieldValueInvalid' },
    {
      c: invalid('x', 5, 'must be greater than or equal to 0'),
      msg: 'Invalid value: 5: must be greater than or equal to 0',
      type: 'FieldValueInvalid',
    },
    {
      c: invalid('x', null, 'field is immutable'),
      msg: 'Invalid value: null: field is immutable',
      type: 'FieldValueInvalid',
    },
    {
      c: notSupported('spec.accessModes', 'X', ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod']),
      msg: 'Unsupported value: "X": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
      type: 'FieldValueNotSupported',
    },
    {
      c: forbidden('spec.hostPath', 'may not specify more than 1 volume type'),
      msg: 'Forbidden: may not specify more than 1 volume type',
      type: 'FieldValueForbidden',
    },
    { c: duplicate('spec.drivers[1].name', 'd'), msg: 'Duplicate value: "d"', type: 'FieldValueDuplicate' },
    { c: tooLong('spec.csi.driver', 63), msg: 'Too long: must have at most 63 bytes', type: 'FieldValueTooLong' },
  ])('$msg', ({ c, msg, type }) => {
    expect(c.message).toBe(msg);
    expect(c.type).toBe(type);
  });
});

describe('formatInvalidMessage', () => {
  it('has no brackets for one cause', () => {
    expect(formatInvalidMessage('PersistentVolume', 'pv1', [required('spec.capacity')])).toBe(
      'PersistentVolume "pv1" is invalid: spec.capacity: Required value',
    );
  });
  it('brackets several causes and drops repeated texts', () => {
    const causes = [required('spec.capacity'), required('spec.capacity'), required('spec.accessModes')];
    expect(formatInvalidMessage('PersistentVolume', 'x', causes)).toBe(
      'PersistentVolume "x" is invalid: [spec.capacity: Required value, spec.accessModes: Required value]',
    );
  });
  it('qualifies kinds outside the core group', () => {
    expect(formatInvalidMessage('StorageClass', 'sc', [required('provisioner')])).toBe(
      'StorageClass.storage.k8s.io "sc" is invalid: provisioner: Required value',
    );
    expect(formatInvalidMessage('Thing', 'a', [required('b')], 'example.com')).toBe(
      'Thing.example.com "a" is invalid: b: Required value',
    );
  });
});

describe('names', () => {
  it("DNS-1123 subdomain message is kube's", () => {
    expect(isDNS1123Subdomain('Foo')).toEqual([
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ]);
    expect(isDNS1123Subdomain('a.b-c')).toEqual([]);
    expect(isDNS1123Subdomain('a'.repeat(254))[0]).toBe('must be no more than 253 characters');
  });
  it("DNS-1123 label message keeps the double space of Go's RegexError", () => {
    expect(isDNS1123Label('a.b')).toEqual([
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ]);
  });
  it.each([
    { v: 'example.com/MyName', errs: 0 },
    { v: 'simple', errs: 0 },
    { v: '/x', first: 'prefix part must be non-empty' },
    {
      v: 'a/b/c',
      first:
        "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    },
    { v: 'x/', first: 'name part must be non-empty' },
  ])('qualified name $v', ({ v, errs, first }) => {
    const got = isQualifiedName(v);
    if (errs !== undefined) expect(got).toHaveLength(errs);
    if (first) expect(got[0]).toBe(first);
  });
  it('label values may be empty but not start with a dash', () => {
    expect(isValidLabelValue('')).toEqual([]);
    expect(isValidLabelValue('-a')).toHaveLength(1);
  });
});

describe('validateObjectMeta', () => {
  it('requires a name and forbids a namespace on cluster-scoped kinds', () => {
    const got = validateObjectMeta({ namespace: 'ns' }, { namespaced: false });
    expect(got.map((c) => `${c.field}: ${c.message}`)).toEqual([
      'metadata.name: Required value: name or generateName is required',
      'metadata.namespace: Forbidden: not allowed on this type',
    ]);
  });
  it('requires a namespace on namespaced kinds', () => {
    expect(validateObjectMeta({ name: 'a' }, { namespaced: true })).toEqual([required('metadata.namespace')]);
  });
  it('validates labels, annotations and finalizers', () => {
    const got = validateObjectMeta(
      { name: 'a', labels: { 'bad key!': 'v' }, annotations: { 'a/b/c': '' }, finalizers: ['plain'] },
      { namespaced: false },
    );
    expect(got.map((c) => c.field)).toEqual(['metadata.labels', 'metadata.annotations', 'metadata.finalizers']);
    expect(got[2]!.message).toBe(
      'Invalid value: "plain": name is neither a standard finalizer name nor is it fully qualified',
    );
  });
  it('update: name is immutable', () => {
    expect(validateObjectMetaUpdate({ name: 'b' }, { name: 'a' })).toEqual([
      invalid('metadata.name', 'b', 'field is immutable'),
    ]);
  });
});

describe('selectors', () => {
  it('node selector needs a term', () => {
    expect(validateNodeSelector({ nodeSelectorTerms: [] }, 'spec.nodeAffinity.required')).toEqual([
      required('spec.nodeAffinity.required.nodeSelectorTerms', 'must have at least one node selector term'),
    ]);
  });
  it('node selector requirement operators', () => {
    const got = validateNodeSelector(
      {
        nodeSelectorTerms: [
          {
            matchExpressions: [
              { key: 'k', operator: 'In' },
              { key: 'k', operator: 'Foo' },
            ],
          },
        ],
      },
      'r',
    );
    expect(got).toEqual([
      required(
        'r.nodeSelectorTerms[0].matchExpressions[0].values',
        "must be specified when `operator` is 'In' or 'NotIn'",
      ),
      invalid('r.nodeSelectorTerms[0].matchExpressions[1].operator', 'Foo', 'not a valid selector operator'),
    ]);
  });
  it('label selector Exists with values', () => {
    expect(
      validateLabelSelector({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }, 'spec.selector'),
    ).toEqual([
      forbidden(
        'spec.selector.matchExpressions[0].values',
        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
      ),
    ]);
  });
});

describe('quantity', () => {
  it.each([
    { s: '1Gi', bytes: 1073741824n, canon: '1Gi' },
    { s: '1.5Gi', bytes: 1610612736n, canon: '1536Mi' },
    { s: '1024Mi', bytes: 1073741824n, canon: '1Gi' },
    { s: '1000Mi', bytes: 1048576000n, canon: '1000Mi' },
    { s: '1G', bytes: 1000000000n, canon: '1G' },
    { s: '1500M', bytes: 1500000000n, canon: '1500M' },
    { s: '1e3', bytes: 1000n, canon: '1e3' },
    { s: '1E3', bytes: 1000n, canon: '1e3' },
    { s: '100', bytes: 100n, canon: '100' },
    { s: '0.5', bytes: 1n, canon: '500m' },
    { s: '500m', bytes: 1n, canon: '500m' },
    { s: '1k', bytes: 1000n, canon: '1k' },
    { s: '1Ki', bytes: 1024n, canon: '1Ki' },
    { s: '512Ki', bytes: 524288n, canon: '512Ki' },
    { s: '1536', bytes: 1536n, canon: '1536' },
    { s: '1Ei', bytes: 1152921504606846976n, canon: '1Ei' },
    { s: '2E', bytes: 2000000000000000000n, canon: '2E' },
    { s: '0', bytes: 0n, canon: '0' },
    { s: '-1Gi', bytes: -1073741824n, canon: '-1Gi' },
    { s: '1n', bytes: 1n, canon: '1n' },
    { s: '+1Mi', bytes: 1048576n, canon: '1Mi' },
  ])('$s', ({ s, bytes, canon }) => {
    expect(quantityBytes(s)).toBe(bytes);
    expect(formatQuantity(parseQuantity(s))).toBe(canon);
  });
  it.each(['', 'abc', '1Gb', '1.2.3', 'Gi', '1e', '--1'])('rejects %j', (s) => {
    expect(() => parseQuantity(s)).toThrow(QuantityError);
  });
  it('compares across suffixes', () => {
    expect(compareQuantities(parseQuantity('1Gi'), parseQuantity('1073741824'))).toBe(0);
    expect(compareQuantities(parseQuantity('1G'), parseQuantity('1Gi'))).toBe(-1);
    expect(compareQuantities(parseQuantity('2Gi'), parseQuantity('1.5Gi'))).toBe(1);
  });
  it('accepts JSON numbers', () => {
    expect(quantityBytes(parseQuantity(10))).toBe(10n);
  });
});

describe('AGE', () => {
  const S = 1000;
  it.each([
    { ms: -3 * S, want: '<invalid>' },
    { ms: -1 * S, want: '0s' },
    { ms: 0, want: '0s' },
    { ms: 119 * S, want: '119s' },
    { ms: 120 * S, want: '2m' },
    { ms: 192 * S, want: '3m12s' },
    { ms: 15 * 60 * S, want: '15m' },
    { ms: 3 * 3600 * S, want: '3h' },
    { ms: (3 * 3600 + 5 * 60) * S, want: '3h5m' },
    { ms: 10 * 3600 * S, want: '10h' },
    { ms: (2 * 24 + 5) * 3600 * S, want: '2d5h' },
    { ms: 30 * 24 * 3600 * S, want: '30d' },
    { ms: (3 * 365 + 10) * 24 * 3600 * S, want: '3y10d' },
    { ms: 9 * 365 * 24 * 3600 * S, want: '9y' },
  ])('$ms ms → $want', ({ ms, want }) => expect(humanDuration(ms)).toBe(want));
  it('ageString', () => {
    expect(ageString('2026-01-01T00:00:00Z', Date.parse('2026-01-01T00:01:00Z'))).toBe('60s');
    expect(ageString(undefined, 0)).toBe('<unknown>');
  });
});

describe('status strategy helpers', () => {
  const old: KubeObject = { metadata: { name: 'a', labels: { x: '1' } }, spec: { a: 1 }, status: { phase: 'Old' } };
  it('keepOldStatus', () => {
    const o: KubeObject = { metadata: { name: 'a' }, spec: { a: 2 }, status: { phase: 'New' } };
    keepOldStatus(o, old);
    expect(o).toEqual({ metadata: { name: 'a' }, spec: { a: 2 }, status: { phase: 'Old' } });
  });
  it('keepAllButStatus keeps new metadata unless reset', () => {
    const o: KubeObject = {
      metadata: { name: 'a', labels: { y: '2' } },
      spec: { a: 2 },
      extra: true,
      status: { phase: 'New' },
    };
    keepAllButStatus(o, old);
    expect(o).toEqual({ metadata: { name: 'a', labels: { y: '2' } }, spec: { a: 1 }, status: { phase: 'New' } });
    keepAllButStatus(o, old, { resetMeta: true });
    expect(o.metadata.labels).toEqual({ x: '1' });
  });
});
