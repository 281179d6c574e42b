import { describe, it, expect } from 'vitest';
import { compareVersions, highestSupportedV1, parseVersion } from './versions.js';

describe('CSI versions', () => {
  it.each([
    { versions: ['1.0.0'], want: '1.0.0' },
    { versions: ['0.3.0', '1.0.0', 'v1.2.0'], want: 'v1.2.0' },
    { versions: ['1.10.0', '1.9.0'], want: '1.10.0' },
    { versions: ['1'], want: '1' },
    { versions: ['0.3.0'], want: undefined },
    { versions: ['2.0.0'], want: undefined },
    { versions: [], want: undefined },
    { versions: ['banana'], want: undefined },
  ])('highest 1.x of $versions is $want', ({ versions, want }) => {
    expect(highestSupportedV1(versions)?.text).toBe(want);
  });

  it('compares numerically', () => {
    const v = (s: string) => parseVersion(s) ?? { major: -1, minor: 0, patch: 0, text: s };
    expect(compareVersions(v('1.10.0'), v('1.9.9'))).toBeGreaterThan(0);
    expect(compareVersions(v('1.0.0'), v('v1.0'))).toBe(0);
    expect(compareVersions(v('1.0.1'), v('1.1.0'))).toBeLessThan(0);
  });
});
