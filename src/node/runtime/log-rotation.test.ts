import { describe, expect, it } from 'vitest';
import { planRotation, rotationSuffix } from './log-rotation.js';

const NOW = Date.UTC(2026, 10, 28, 1, 2, 3);
const policy = { maxSizeBytes: 100, maxFiles: 5 };
const plan = (sizeBytes: number, siblings: string[], p = policy) =>
  planRotation({ log: '0.log', sizeBytes, siblings, nowMs: NOW, policy: p });

describe('container log rotation plan (the kubelet container log manager)', () => {
  it('names rotated files <log>.YYYYMMDD-hhmmss in UTC', () => {
    expect(rotationSuffix(NOW)).toBe('20261128-010203');
  });
  it.each([
    {
      name: 'below the size: nothing',
      size: 99,
      siblings: ['0.log.20261127-000000'],
      want: { remove: [], compress: [] },
    },
    {
      name: 'at the size: rotate; the previous rotated file is compressed',
      size: 100,
      siblings: ['0.log.20261127-000000'],
      want: { remove: [], compress: ['0.log.20261127-000000'], rotateTo: '0.log.20261128-010203' },
    },
    {
      name: 'leftovers go: .tmp files and a plain file whose .gz exists',
      size: 100,
      siblings: ['0.log.20261127-000000', '0.log.20261127-000000.gz', '0.log.20261127-000001.gz.tmp'],
      want: {
        remove: ['0.log.20261127-000000', '0.log.20261127-000001.gz.tmp'],
        compress: [],
        rotateTo: '0.log.20261128-010203',
      },
    },
    {
      name: 'at most maxFiles: the oldest rotated files go to leave room for the new one and the live log',
      size: 100,
      siblings: [
        '0.log.20261101-000000.gz',
        '0.log.20261102-000000.gz',
        '0.log.20261103-000000.gz',
        '0.log.20261104-000000',
      ],
      want: {
        remove: ['0.log.20261101-000000.gz'],
        compress: ['0.log.20261104-000000'],
        rotateTo: '0.log.20261128-010203',
      },
    },
    {
      name: "another container's files are not touched",
      size: 100,
      siblings: ['1.log.20261101-000000', '0.log'],
      want: { remove: [], compress: [], rotateTo: '0.log.20261128-010203' },
    },
  ])('$name', ({ size, siblings, want }) => {
    expect(plan(size, siblings)).toEqual(want);
  });
  it('maxFiles 2 keeps no older rotated file', () => {
    expect(plan(100, ['0.log.20261101-000000'], { maxSizeBytes: 100, maxFiles: 2 }).remove).toEqual([
      '0.log.20261101-000000',
    ]);
  });
});
