import { describe, expect, it } from 'vitest';

import { BadRequestError, UnsupportedMediaTypeError } from '../../util/errors.js';

import {
  applyPatch,
  PATCH_CONTENT_TYPES,
  PatchNotApplicableError,
  patchKindOf,
  type PatchMetaLookup,
} from './index.js';

const lookup: PatchMetaLookup = (p) =>
  p.join('.') === 'metadata.finalizers' ? { strategy: 'merge' } : { strategy: 'replace' };
const doc = { metadata: { name: 'c', finalizers: ['a'] }, spec: { accessModes: ['ReadWriteOnce'] } };

describe('applyPatch', () => {
  it.each([
    {
      type: 'application/json-patch+json',
      patch: [{ op: 'add', path: '/metadata/finalizers/-', value: 'b' }],
      want: { metadata: { name: 'c', finalizers: ['a', 'b'] }, spec: { accessModes: ['ReadWriteOnce'] } },
    },
    {
      type: 'application/merge-patch+json',
      patch: { metadata: { finalizers: ['b'] } },
      want: { metadata: { name: 'c', finalizers: ['b'] }, spec: { accessModes: ['ReadWriteOnce'] } },
    },
    {
      type: 'application/strategic-merge-patch+json',
      patch: { metadata: { finalizers: ['b'] } },
      want: { metadata: { name: 'c', finalizers: ['b', 'a'] }, spec: { accessModes: ['ReadWriteOnce'] } },
    },
    {
      type: 'application/merge-patch+json; charset=utf-8',
      patch: { spec: null },
      want: { metadata: { name: 'c', finalizers: ['a'] } },
    },
    {
      type: ' Application/Strategic-Merge-Patch+JSON ;charset=UTF-8',
      patch: { spec: { accessModes: ['ReadWriteMany'] } },
      want: { metadata: { name: 'c', finalizers: ['a'] }, spec: { accessModes: ['ReadWriteMany'] } },
    },
  ])('$type', ({ type, patch, want }) => {
    expect(applyPatch(type, doc, patch, lookup)).toEqual(want);
  });

  it.each(['application/json', 'application/apply-patch+cbor', 'text/plain', '', 'application/merge-patch+jsonx'])(
    'refuses %j with 415 and kube’s message',
    (type) => {
      let caught: unknown;
      try {
        applyPatch(type, doc, {}, lookup);
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(UnsupportedMediaTypeError);
      expect((caught as UnsupportedMediaTypeError).code).toBe('UnsupportedMediaType');
      expect((caught as Error).message).toBe(
        'the body of the request was in an unknown format - accepted media types include: ' +
          'application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml',
      );
    },
  );

  it.each([
    { type: 'application/json-patch+json', patch: [{ op: 'replace', path: '', value: 5 }] },
    { type: 'application/merge-patch+json', patch: ['not', 'an', 'object'] },
  ])('a $type result that is not an object is 422', ({ type, patch }) => {
    expect(() => applyPatch(type, doc, patch, lookup)).toThrow(PatchNotApplicableError);
  });

  it.each([null, 'str', 5, true])('a %j merge patch is 400 Invalid JSON Patch, as kube', (patch) => {
    expect(() => applyPatch('application/merge-patch+json', doc, patch, lookup)).toThrow(
      new BadRequestError('Invalid JSON Patch'),
    );
  });

  it('passes malformed patches through as 400', () => {
    expect(() => applyPatch('application/json-patch+json', doc, {}, lookup)).toThrow(BadRequestError);
    expect(() => applyPatch('application/strategic-merge-patch+json', doc, [], lookup)).toThrow(BadRequestError);
  });

  it('maps every content type to its kind', () => {
    expect(Object.entries(PATCH_CONTENT_TYPES).map(([t]) => patchKindOf(t))).toEqual([
      'json',
      'merge',
      'strategic',
      'apply',
    ]);
  });
});
