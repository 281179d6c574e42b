import { describe, expect, it } from 'vitest';
import { jsonEqual } from './jsonequal.js';

describe('jsonEqual', () => {
  it('ignores key order but not array order', () => {
    expect(jsonEqual({ a: 1, b: [1, 2] }, { b: [1, 2], a: 1 })).toBe(true);
    expect(jsonEqual([1, 2], [2, 1])).toBe(false);
  });

  it('treats an undefined member as absent, and undefined as distinct from null', () => {
    expect(jsonEqual({ a: undefined, b: 1 }, { b: 1 })).toBe(true);
    expect(jsonEqual({ a: undefined }, { b: undefined })).toBe(true);
    expect(jsonEqual({ a: null }, {})).toBe(false);
    expect(jsonEqual(undefined, null)).toBe(false);
    expect(jsonEqual(undefined, undefined)).toBe(true);
  });

  it('tells arrays from objects and scalars apart', () => {
    expect(jsonEqual([], {})).toBe(false);
    expect(jsonEqual({ 0: 'x' }, ['x'])).toBe(false);
    expect(jsonEqual('1', 1)).toBe(false);
    expect(jsonEqual({ a: { b: [{ c: 1 }] } }, { a: { b: [{ c: 1 }] } })).toBe(true);
  });
});

describe('jsonEqual (the cases JSON patch relied on)', () => {
  it.each([
    { a: { x: 1, y: [1, { z: null }] }, b: { y: [1, { z: null }], x: 1 }, want: true },
    { a: [1, 2], b: [2, 1], want: false },
    { a: { x: 1 }, b: { x: 1, y: undefined }, want: true },
    { a: { x: 1 }, b: { y: 1 }, want: false },
    { a: [], b: {}, want: false },
    { a: null, b: {}, want: false },
    { a: 1, b: '1', want: false },
    { a: 'a', b: 'a', want: true },
    { a: [[]], b: [[]], want: true },
  ])('$a vs $b → $want', ({ a, b, want }) => {
    expect(jsonEqual(a, b)).toBe(want);
    expect(jsonEqual(b, a)).toBe(want);
  });
});
