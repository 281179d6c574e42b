import type { Pod } from 'kubernetes-types/core/v1.js';
import { describe, expect, it } from 'vitest';
import { memoryVolumeBytes, podMemoryLimitBytes } from './common.js';

const Mi = 1024 * 1024;
const pod = (limits: Array<string | undefined>, init: string[] = []): Pod => ({
  spec: {
    containers: limits.map((l, i) => ({ name: `c${i}`, ...(l ? { resources: { limits: { memory: l } } } : {}) })),
    initContainers: init.map((l, i) => ({ name: `i${i}`, resources: { limits: { memory: l } } })),
  },
});

describe('memory-backed volume size (kubelet calculateEmptyDirMemorySize)', () => {
  it.each([
    { name: 'no limits → node memory', p: pod([undefined]), sizeLimit: undefined, want: 1024 * Mi },
    { name: 'pod limit', p: pod(['64Mi', '32Mi']), sizeLimit: undefined, want: 96 * Mi },
    { name: 'sizeLimit below the pod limit', p: pod(['64Mi']), sizeLimit: 8 * Mi, want: 8 * Mi },
    { name: 'sizeLimit above the pod limit → pod limit', p: pod(['64Mi']), sizeLimit: 512 * Mi, want: 64 * Mi },
    { name: 'init container larger than the sum', p: pod(['16Mi'], ['128Mi']), sizeLimit: undefined, want: 128 * Mi },
  ])('$name', ({ p, sizeLimit, want }) => expect(memoryVolumeBytes(p, sizeLimit, 1024 * Mi)).toBe(want));

  it('no containers → no limit', () => expect(podMemoryLimitBytes({})).toBe(0));
});
