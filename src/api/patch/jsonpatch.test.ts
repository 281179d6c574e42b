import { describe, expect, it } from 'vitest';
import { BadRequestError, InvalidError } from '../../util/errors.js';
import { applyJsonPatch, MAX_JSON_PATCH_OPERATIONS } from './jsonpatch.js';
import { PATCH_NOT_APPLICABLE_MESSAGE, PatchNotApplicableError } from './types.js';

const pv = {
  metadata: { name: 'pv1', labels: { a: '1', 'x/y': 's', 'm~n': 't' } },
  spec: { accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' }, claimRef: null },
};

function valueAt(doc: unknown, at: string | string[]): unknown {
  const keys = Array.isArray(at) ? at : at === '' ? [] : at.split('.');
  let cur = doc;
  for (const k of keys) {
    if (typeof cur !== 'object' || cur === null || !Object.prototype.hasOwnProperty.call(cur, k)) return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur;
}

describe('applyJsonPatch: operations', () => {
  // `at` names a value in the result by dotted path; `want: undefined` means it must be absent.
  it.each([
    {
      name: 'add a key',
      patch: [{ op: 'add', path: '/metadata/labels/b', value: '2' }],
      at: 'metadata.labels.b',
      want: '2',
    },
    {
      name: 'add replaces an existing key',
      patch: [{ op: 'add', path: '/metadata/name', value: 'z' }],
      at: 'metadata.name',
      want: 'z',
    },
    {
      name: 'add with ~1 escape',
      patch: [{ op: 'add', path: '/metadata/labels/c~1d', value: 'v' }],
      at: ['metadata', 'labels', 'c/d'],
      want: 'v',
    },
    {
      name: 'add with ~0 escape',
      patch: [{ op: 'add', path: '/metadata/labels/c~0d', value: 'v' }],
      at: ['metadata', 'labels', 'c~d'],
      want: 'v',
    },
    {
      name: '~01 is "~1", not "/"',
      patch: [{ op: 'add', path: '/metadata/labels/~01', value: 'v' }],
      at: ['metadata', 'labels', '~1'],
      want: 'v',
    },
    {
      name: 'add appends with -',
      patch: [{ op: 'add', path: '/spec/accessModes/-', value: 'ReadOnlyMany' }],
      at: 'spec.accessModes',
      want: ['ReadWriteOnce', 'ReadOnlyMany'],
    },
    {
      name: 'add inserts at an index',
      patch: [{ op: 'add', path: '/spec/accessModes/0', value: 'X' }],
      at: 'spec.accessModes',
      want: ['X', 'ReadWriteOnce'],
    },
    {
      name: 'add at index == length appends',
      patch: [{ op: 'add', path: '/spec/accessModes/1', value: 'X' }],
      at: 'spec.accessModes',
      want: ['ReadWriteOnce', 'X'],
    },
    { name: 'add null value', patch: [{ op: 'add', path: '/spec/x', value: null }], at: 'spec.x', want: null },
    { name: 'add the whole document', patch: [{ op: 'add', path: '', value: { a: 1 } }], at: '', want: { a: 1 } },
    {
      name: 'remove a key',
      patch: [{ op: 'remove', path: '/metadata/labels/a' }],
      at: 'metadata.labels',
      want: { 'x/y': 's', 'm~n': 't' },
    },
    {
      name: 'remove an escaped key',
      patch: [{ op: 'remove', path: '/metadata/labels/x~1y' }],
      at: 'metadata.labels',
      want: { a: '1', 'm~n': 't' },
    },
    {
      name: 'remove a null-valued key',
      patch: [{ op: 'remove', path: '/spec/claimRef' }],
      at: 'spec',
      want: { accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' } },
    },
    {
      name: 'remove an array item',
      patch: [{ op: 'remove', path: '/spec/accessModes/0' }],
      at: 'spec.accessModes',
      want: [],
    },
    {
      name: 'replace a value',
      patch: [{ op: 'replace', path: '/spec/capacity/storage', value: '2Gi' }],
      at: 'spec.capacity.storage',
      want: '2Gi',
    },
    {
      name: 'replace an array item',
      patch: [{ op: 'replace', path: '/spec/accessModes/0', value: 'RWX' }],
      at: 'spec.accessModes',
      want: ['RWX'],
    },
    {
      name: 'replace the whole document',
      patch: [{ op: 'replace', path: '', value: { b: 2 } }],
      at: '',
      want: { b: 2 },
    },
    {
      name: 'move a key',
      patch: [{ op: 'move', from: '/metadata/labels/a', path: '/metadata/labels/b' }],
      at: 'metadata.labels',
      want: { b: '1', 'x/y': 's', 'm~n': 't' },
    },
    {
      name: 'move to itself is a no-op',
      patch: [{ op: 'move', from: '/metadata/name', path: '/metadata/name' }],
      at: 'metadata.name',
      want: 'pv1',
    },
    {
      name: 'copy a subtree',
      patch: [{ op: 'copy', from: '/spec/capacity', path: '/spec/copied' }],
      at: 'spec.copied',
      want: { storage: '1Gi' },
    },
    {
      name: 'test passes, ignoring key order',
      patch: [{ op: 'test', path: '/metadata/labels', value: { 'm~n': 't', 'x/y': 's', a: '1' } }],
      at: '',
      want: pv,
    },
    { name: 'test on null', patch: [{ op: 'test', path: '/spec/claimRef', value: null }], at: '', want: pv },
    {
      name: 'ops apply in order',
      patch: [
        { op: 'add', path: '/a', value: [] },
        { op: 'add', path: '/a/-', value: 1 },
        { op: 'test', path: '/a/0', value: 1 },
      ],
      at: 'a',
      want: [1],
    },
    { name: 'empty patch', patch: [], at: '', want: pv },
    // Where kube (evanphx/json-patch v4) is laxer than RFC 6902, we accept what it accepts.
    {
      name: 'kube: ~ not followed by 0 or 1 is literal',
      patch: [{ op: 'add', path: '/metadata/labels/a~2b', value: 'z' }],
      at: ['metadata', 'labels', 'a~2b'],
      want: 'z',
    },
    {
      name: 'kube: add without value adds null',
      patch: [{ op: 'add', path: '/metadata/labels/b' }],
      at: 'metadata.labels.b',
      want: null,
    },
    {
      name: 'kube: leading zeros in an index',
      patch: [{ op: 'add', path: '/spec/accessModes/00', value: 'X' }],
      at: 'spec.accessModes',
      want: ['X', 'ReadWriteOnce'],
    },
    {
      name: 'kube: add at -1 appends',
      patch: [{ op: 'add', path: '/spec/accessModes/-1', value: 'X' }],
      at: 'spec.accessModes',
      want: ['ReadWriteOnce', 'X'],
    },
    {
      name: 'kube: add at -2 inserts before the last',
      patch: [{ op: 'add', path: '/spec/accessModes/-2', value: 'X' }],
      at: 'spec.accessModes',
      want: ['X', 'ReadWriteOnce'],
    },
    {
      name: 'kube: remove -1 removes the last',
      patch: [
        { op: 'add', path: '/spec/accessModes/-', value: 'X' },
        { op: 'remove', path: '/spec/accessModes/-1' },
      ],
      at: 'spec.accessModes',
      want: ['ReadWriteOnce'],
    },
    {
      name: 'kube: replace via a negative index',
      patch: [{ op: 'replace', path: '/spec/accessModes/-1', value: 'X' }],
      at: 'spec.accessModes',
      want: ['X'],
    },
    {
      name: 'kube: test of an absent path against null passes',
      patch: [{ op: 'test', path: '/nope', value: null }],
      at: 'metadata.name',
      want: 'pv1',
    },
    {
      name: 'extra fields are ignored',
      patch: [{ op: 'remove', path: '/spec/claimRef', value: 5, from: 3 }],
      at: 'spec.claimRef',
      want: undefined,
    },
  ])('$name', ({ patch, at, want }) => {
    const before = structuredClone(pv);
    expect(valueAt(applyJsonPatch(pv, patch), at)).toEqual(want);
    expect(pv).toEqual(before); // input untouched
  });

  it('copies values so that the result shares nothing with the patch', () => {
    const value = { nested: [1] };
    const out = applyJsonPatch({}, [{ op: 'add', path: '/v', value }]) as { v: { nested: number[] } };
    out.v.nested.push(2);
    expect(value.nested).toEqual([1]);
  });

  it('copy makes an independent copy', () => {
    const out = applyJsonPatch(pv, [{ op: 'copy', from: '/spec/capacity', path: '/spec/copied' }]) as {
      spec: Record<string, object>;
    };
    expect(out.spec.copied).not.toBe(out.spec.capacity);
  });

  it('a null patch is a no-op, as kube decodes it', () => {
    expect(applyJsonPatch(pv, null)).toEqual(pv);
  });

  it('move within an array removes before inserting', () => {
    expect(applyJsonPatch({ a: [1, 2, 3] }, [{ op: 'move', from: '/a/0', path: '/a/2' }])).toEqual({ a: [2, 3, 1] });
  });

  it('a __proto__ key is stored as data', () => {
    const patch = JSON.parse('[{"op":"add","path":"/__proto__","value":{"polluted":true}}]') as unknown;
    const out = applyJsonPatch({}, patch) as Record<string, unknown>;
    expect(Object.keys(out)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('applyJsonPatch: errors', () => {
  it('413 RequestEntityTooLarge: more operations than kube allows', () => {
    const patch = new Array(MAX_JSON_PATCH_OPERATIONS + 1).fill({ op: 'test', path: '', value: {} });
    expect(() => applyJsonPatch(pv, patch)).toThrow(
      expect.objectContaining({
        httpStatus: 413,
        reason: 'RequestEntityTooLarge',
        message: 'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001',
      }),
    );
  });

  it.each([
    { name: 'patch is an object', patch: { op: 'add' } },
    { name: 'operation is not an object', patch: ['add'] },
    { name: 'operation is an array', patch: [[]] },
    { name: 'value is not JSON', patch: [{ op: 'add', path: '/a', value: undefined }] },
    { name: 'value has a non-finite number', patch: [{ op: 'add', path: '/a', value: [Infinity] }] },
  ])('400 BadRequest: $name', ({ patch }) => {
    expect(() => applyJsonPatch(pv, patch)).toThrow(BadRequestError);
  });

  it.each([
    { name: 'missing op', patch: [{ path: '/a', value: 1 }], detail: '"op" must be a string' },
    { name: 'unknown op', patch: [{ op: 'frobnicate', path: '/a' }], detail: 'unknown op "frobnicate"' },
    { name: 'missing path', patch: [{ op: 'add', value: 1 }], detail: '"path" must be a string' },
    {
      name: 'path without a leading slash',
      patch: [{ op: 'add', path: 'a', value: 1 }],
      detail: 'must be empty or start with "/"',
    },
    {
      name: 'test without value compares with null',
      patch: [{ op: 'test', path: '/metadata' }],
      detail: 'not the expected value',
    },
    { name: 'test of a missing path', patch: [{ op: 'test', path: '/nope', value: 'x' }], detail: 'no value at /nope' },
    {
      name: 'add past the start of an array',
      patch: [{ op: 'add', path: '/spec/accessModes/-3', value: 'x' }],
      detail: 'out of range',
    },
    {
      name: 'remove past the start of an array',
      patch: [{ op: 'remove', path: '/spec/accessModes/-2' }],
      detail: 'out of range',
    },
    {
      name: 'a non-numeric index',
      patch: [{ op: 'replace', path: '/spec/accessModes/x', value: 'x' }],
      detail: 'not an array index',
    },
    {
      name: 'add under a missing parent',
      patch: [{ op: 'add', path: '/nope/a', value: 1 }],
      detail: 'missing the parent of /nope/a',
    },
    {
      name: 'add under a scalar',
      patch: [{ op: 'add', path: '/metadata/name/x', value: 1 }],
      detail: 'neither an object nor an array',
    },
    {
      name: 'add past the end of an array',
      patch: [{ op: 'add', path: '/spec/accessModes/2', value: 'x' }],
      detail: 'out of range',
    },
    {
      name: 'remove a missing key',
      patch: [{ op: 'remove', path: '/metadata/nope' }],
      detail: 'no value at /metadata/nope',
    },
    { name: 'remove a missing index', patch: [{ op: 'remove', path: '/spec/accessModes/1' }], detail: 'out of range' },
    { name: 'remove with -', patch: [{ op: 'remove', path: '/spec/accessModes/-' }], detail: 'not an array index' },
    { name: 'remove the document', patch: [{ op: 'remove', path: '' }], detail: 'cannot remove the whole document' },
    {
      name: 'replace a missing key',
      patch: [{ op: 'replace', path: '/metadata/nope', value: 1 }],
      detail: 'no value at /metadata/nope',
    },
    {
      name: 'replace a missing index',
      patch: [{ op: 'replace', path: '/spec/accessModes/5', value: 1 }],
      detail: 'out of range',
    },
    { name: 'move without from', patch: [{ op: 'move', path: '/a' }], detail: '"from" must be a string' },
    {
      name: 'move from a missing path',
      patch: [{ op: 'move', from: '/nope', path: '/a' }],
      detail: 'no value at "from" /nope',
    },
    {
      name: 'move into its own child',
      patch: [{ op: 'move', from: '/metadata', path: '/metadata/labels/m' }],
      detail: 'into its own child',
    },
    {
      name: 'copy from a missing path',
      patch: [{ op: 'copy', from: '/nope', path: '/a' }],
      detail: 'no value at "from" /nope',
    },
    {
      name: 'test fails',
      patch: [{ op: 'test', path: '/metadata/name', value: 'other' }],
      detail: 'not the expected value',
    },
    {
      name: 'test compares arrays in order',
      patch: [{ op: 'test', path: '/a', value: [2, 1] }],
      detail: 'not the expected value',
      doc: { a: [1, 2] },
    },
    {
      name: 'a later op fails',
      patch: [
        { op: 'add', path: '/x', value: 1 },
        { op: 'test', path: '/x', value: 2 },
      ],
      detail: 'operation 1:',
    },
  ])('422 Invalid: $name', ({ patch, detail, doc }) => {
    const before = structuredClone(doc ?? pv);
    let caught: unknown;
    try {
      applyJsonPatch(doc ?? pv, patch);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(PatchNotApplicableError);
    expect(caught).toBeInstanceOf(InvalidError);
    const err = caught as PatchNotApplicableError;
    expect(err.message).toBe(PATCH_NOT_APPLICABLE_MESSAGE);
    expect(err.detail).toContain(detail);
    expect(doc ?? pv).toEqual(before);
  });
});
