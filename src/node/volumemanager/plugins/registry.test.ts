import type { PersistentVolume, Volume } from 'kubernetes-types/core/v1.js';
import { describe, expect, it } from 'vitest';
import type { SpecSource } from './plugin.js';
import { findPluginBySpec } from './registry.js';

const inline = (v: Omit<Volume, 'name'>): SpecSource => ({ kind: 'inline', volume: { name: 'v', ...v } });
const pv = (spec: PersistentVolume['spec']): SpecSource => ({
  kind: 'pv',
  pv: { metadata: { name: 'pv' }, spec },
  claim: { metadata: { name: 'c' } },
  volume: { name: 'v', persistentVolumeClaim: { claimName: 'c' } },
});
const name = (s: SpecSource): string => {
  const m = findPluginBySpec(s);
  return 'plugin' in m ? m.plugin.name : 'none' in m ? 'none' : `many:${m.many.join(',')}`;
};

describe('findPluginBySpec: one place picks the plugin', () => {
  it.each([
    { src: inline({ emptyDir: {} }), want: 'kubernetes.io/empty-dir' },
    { src: inline({ emptyDir: { medium: 'Memory' } }), want: 'kubernetes.io/empty-dir' },
    { src: inline({ hostPath: { path: '/x' } }), want: 'kubernetes.io/host-path' },
    { src: inline({ configMap: { name: 'c' } }), want: 'kubernetes.io/configmap' },
    { src: inline({ secret: { secretName: 's' } }), want: 'kubernetes.io/secret' },
    { src: inline({ downwardAPI: {} }), want: 'kubernetes.io/downward-api' },
    { src: inline({ projected: { sources: [] } }), want: 'kubernetes.io/projected' },
    { src: inline({ csi: { driver: 'd' } }), want: 'kubernetes.io/csi' },
    { src: inline({ gitRepo: { repository: 'r' } }), want: 'none' },
    {
      src: inline({ emptyDir: {}, hostPath: { path: '/x' } }),
      want: 'many:kubernetes.io/empty-dir,kubernetes.io/host-path',
    },
    { src: pv({ csi: { driver: 'd', volumeHandle: 'h' } }), want: 'kubernetes.io/csi' },
    { src: pv({ hostPath: { path: '/x' } }), want: 'kubernetes.io/host-path' },
    { src: pv({ local: { path: '/x' } }), want: 'kubernetes.io/local-volume' },
    { src: pv({ nfs: { server: 's', path: '/p' } }), want: 'none' },
  ])('$want', ({ src, want }) => expect(name(src)).toBe(want));
});
