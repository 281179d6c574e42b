import { describe, expect, it } from 'vitest';
import { metaTime, microTime } from './metatime.js';

describe('metav1 times', () => {
  const ms = Date.UTC(2026, 10, 22, 15, 4, 5, 678);
  it('Time drops the sub-second part', () => expect(metaTime(ms)).toBe('2026-11-22T15:04:05Z'));
  it('MicroTime keeps microseconds', () => expect(microTime(ms)).toBe('2026-11-22T15:04:05.678000Z'));
});
