import { describe, it, expect } from 'vitest';
import { TraceRing, type CallTrace } from './trace.js';

const t = (i: number): CallTrace => ({ method: `/m/${i}`, startMs: i, durationMs: 1, code: 'OK' });

describe('TraceRing', () => {
  it.each([
    { name: 'under capacity keeps all, in order', cap: 3, pushes: 2, want: [0, 1] },
    { name: 'exactly full', cap: 3, pushes: 3, want: [0, 1, 2] },
    { name: 'overflow drops the oldest', cap: 3, pushes: 7, want: [4, 5, 6] },
    { name: 'capacity one', cap: 1, pushes: 4, want: [3] },
  ])('$name', ({ cap, pushes, want }) => {
    const r = new TraceRing(cap);
    for (let i = 0; i < pushes; i++) r.push(t(i));
    expect(r.list().map((x) => x.startMs)).toEqual(want);
  });

  it('returns a fresh array', () => {
    const r = new TraceRing(2);
    r.push(t(0));
    const a = r.list() as CallTrace[];
    a.push(t(9));
    expect(r.list()).toHaveLength(1);
  });

  it('notifies subscribers until they unsubscribe, surviving a throwing listener', () => {
    const r = new TraceRing(2);
    const seen: number[] = [];
    r.subscribe(() => {
      throw new Error('listener bug');
    });
    const off = r.subscribe((x) => seen.push(x.startMs));
    r.push(t(1));
    off();
    r.push(t(2));
    expect(seen).toEqual([1]);
  });

  it('rejects a non-positive capacity', () => {
    expect(() => new TraceRing(0)).toThrow(RangeError);
  });
});
