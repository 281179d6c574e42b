import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../../util/errors.js';
import { applyMergePatch } from './mergepatch.js';

describe('applyMergePatch', () => {
  // RFC 7386 Appendix A, plus the Kubernetes shapes they stand for.
  it.each([
    { name: 'change a value', doc: { a: 'b' }, patch: { a: 'c' }, want: { a: 'c' } },
    { name: 'add a key', doc: { a: 'b' }, patch: { b: 'c' }, want: { a: 'b', b: 'c' } },
    { name: 'null deletes', doc: { a: 'b' }, patch: { a: null }, want: {} },
    { name: 'null deletes one of two', doc: { a: 'b', b: 'c' }, patch: { a: null }, want: { b: 'c' } },
    { name: 'array replaced by string', doc: { a: ['b'] }, patch: { a: 'c' }, want: { a: 'c' } },
    { name: 'string replaced by array', doc: { a: 'c' }, patch: { a: ['b'] }, want: { a: ['b'] } },
    {
      name: 'nested merge and delete',
      doc: { a: { b: 'c' } },
      patch: { a: { b: 'd', c: null } },
      want: { a: { b: 'd' } },
    },
    { name: 'arrays replace wholesale', doc: { a: [{ b: 'c' }] }, patch: { a: [1] }, want: { a: [1] } },
    { name: 'non-object patch replaces the document', doc: ['a', 'b'], patch: ['c', 'd'], want: ['c', 'd'] },
    { name: 'array patch on an object', doc: { a: 'b' }, patch: ['c'], want: ['c'] },
    { name: 'null patch', doc: { a: 'foo' }, patch: null, want: null },
    { name: 'string patch', doc: { a: 'foo' }, patch: 'bar', want: 'bar' },
    { name: 'document nulls are kept', doc: { e: null }, patch: { a: 1 }, want: { e: null, a: 1 } },
    { name: 'object patch on an array document', doc: [1, 2], patch: { a: 'b', c: null }, want: { a: 'b' } },
    { name: 'new nested object drops nulls', doc: {}, patch: { a: { bb: { ccc: null } } }, want: { a: { bb: {} } } },
    { name: 'nulls inside patch arrays are values', doc: {}, patch: { a: [null] }, want: { a: [null] } },
    { name: 'delete a missing key', doc: { a: 1 }, patch: { b: null }, want: { a: 1 } },
    { name: 'empty patch', doc: { a: { b: 1 } }, patch: {}, want: { a: { b: 1 } } },
    {
      name: 'label a PVC and drop an annotation',
      doc: {
        metadata: { name: 'c', labels: { app: 'x' }, annotations: { old: '1', keep: '2' } },
        spec: { accessModes: ['ReadWriteOnce'] },
      },
      patch: {
        metadata: { labels: { tier: 'db' }, annotations: { old: null } },
        spec: { accessModes: ['ReadWriteMany'] },
      },
      want: {
        metadata: { name: 'c', labels: { app: 'x', tier: 'db' }, annotations: { keep: '2' } },
        spec: { accessModes: ['ReadWriteMany'] },
      },
    },
  ])('$name', ({ doc, patch, want }) => {
    const before = structuredClone(doc);
    expect(applyMergePatch(doc, patch)).toEqual(want);
    expect(doc).toEqual(before);
  });

  it('keeps document key order and appends new keys', () => {
    const out = applyMergePatch({ a: 1, b: 2, c: 3 }, { d: 4, b: 20 }) as object;
    expect(Object.keys(out)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('shares nothing with either input', () => {
    const doc = { untouched: { deep: [1] }, merged: { x: 1 } };
    const patch = { merged: { y: { z: [2] } } };
    const out = applyMergePatch(doc, patch) as { untouched: { deep: number[] }; merged: { y: { z: number[] } } };
    out.untouched.deep.push(9);
    out.merged.y.z.push(9);
    expect(doc.untouched.deep).toEqual([1]);
    expect(patch.merged.y.z).toEqual([2]);
  });

  it.each([
    { name: 'undefined in the patch', doc: {}, patch: { a: undefined } },
    { name: 'NaN in the patch', doc: {}, patch: { a: [NaN] } },
    { name: 'a class instance in the patch', doc: {}, patch: { a: new Date(0) } },
    { name: 'a function in the document', doc: { f: () => 1 }, patch: { a: 1 } },
  ])('400 BadRequest: $name', ({ doc, patch }) => {
    expect(() => applyMergePatch(doc, patch)).toThrow(BadRequestError);
  });

  it('refuses absurd nesting instead of overflowing the stack', () => {
    let patch: unknown = {};
    for (let i = 0; i < 5000; i++) patch = { a: patch };
    expect(() => applyMergePatch({}, patch)).toThrow(/nesting deeper/);
  });
});
