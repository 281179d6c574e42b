import { describe, expect, it } from 'vitest';
import { age, ageColumn, fieldDoc, humanDuration, nameColumn, timestampSince } from './printing.js';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

describe('humanDuration', () => {
  it.each([
    [-3 * S, '<invalid>'],
    [-1 * S, '0s'],
    [0, '0s'],
    [5 * S, '5s'],
    [119 * S, '119s'],
    [2 * M, '2m'],
    [3 * M + 2 * S, '3m2s'],
    [10 * M + 30 * S, '10m'],
    [179 * M, '179m'],
    [3 * H, '3h'],
    [4 * H + 5 * M, '4h5m'],
    [8 * H + 5 * M, '8h'],
    [47 * H, '47h'],
    [2 * D + 3 * H, '2d3h'],
    [7 * D, '7d'],
    [8 * D + 5 * H, '8d'],
    [729 * D, '729d'],
    [2 * 365 * D + 3 * D, '2y3d'],
    [9 * 365 * D, '9y'],
  ])('%d ms → %s', (ms, want) => expect(humanDuration(ms)).toBe(want));
});

describe('timestamps', () => {
  const now = Date.parse('2024-05-01T12:00:00Z');
  it.each([
    [undefined, '<unknown>'],
    ['', '<unknown>'],
    ['garbage', '<unknown>'],
    ['2024-05-01T11:55:00Z', '5m'],
    ['2024-04-29T09:00:00Z', '2d3h'],
  ])('%s → %s', (ts, want) => {
    expect(timestampSince(ts, now)).toBe(want);
    expect(age({ metadata: { creationTimestamp: ts } }, now)).toBe(want);
  });
});

describe('columns', () => {
  it('NAME and AGE carry ObjectMeta docs', () => {
    expect(nameColumn()).toMatchObject({ name: 'Name', type: 'string', format: 'name', priority: 0 });
    expect(nameColumn().description).toMatch(/^Name must be unique within a namespace/);
    expect(ageColumn().description).toMatch(/^CreationTimestamp is a timestamp/);
    expect(nameColumn({ wide: true }).priority).toBe(1);
  });
  it('fieldDoc walks nested fields and answers "" for unknown ones', () => {
    expect(fieldDoc('', 'Pod', ['spec', 'nodeName'])).toMatch(/NodeName/i);
    expect(fieldDoc('', 'Pod', ['spec', 'containers', 'image'])).toMatch(/image/i);
    expect(fieldDoc('', 'Pod', ['spec', 'nope'])).toBe('');
  });
});
