import { describe, expect, it } from 'vitest';
import { SortedChunks } from './sorted.js';

describe('SortedChunks', () => {
  it('stays sorted through many inserts and removes across chunk splits', () => {
    const s = new SortedChunks<{ v: number }, { v: number }>((a, b) => a.v - b.v);
    const ref: Array<{ v: number }> = [];
    let x = 12345;
    const rnd = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let i = 0; i < 5000; i++) {
      if (rnd() < 0.7 || ref.length === 0) {
        const item = { v: Math.floor(rnd() * 1000) };
        s.insert(item);
        ref.push(item);
      } else {
        const item = ref.splice(Math.floor(rnd() * ref.length), 1)[0];
        if (item) expect(s.remove(item)).toBe(true);
      }
    }
    const got = s.toArray().map((i) => i.v);
    expect(got).toEqual(ref.map((i) => i.v).sort((a, b) => a - b));
    expect(s.length).toBe(ref.length);
    expect(s.remove({ v: 1 })).toBe(false); // identity, not value
    const first = s.findFrom({ v: 500 }, () => true);
    expect(first?.v).toBe(got.find((v) => v >= 500));
    expect(s.findFrom({ v: 2000 }, () => true)).toBeUndefined();
  });
});
