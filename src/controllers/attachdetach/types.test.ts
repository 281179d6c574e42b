import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { attachmentName, uniqueVolumeName } from './types.js';

describe('names', () => {
  it('VolumeAttachment name is csi-<sha256(handle+driver+node)> in lower-case hex', () => {
    const want = 'csi-' + createHash('sha256').update('vol-1hostpath.csi.k8s.ionode-a').digest('hex');
    expect(attachmentName('vol-1', 'hostpath.csi.k8s.io', 'node-a')).toBe(want);
    expect(attachmentName('vol-1', 'hostpath.csi.k8s.io', 'node-a')).toMatch(/^csi-[0-9a-f]{64}$/);
    // a known vector: sha256("") is e3b0c442…
    expect(attachmentName('', '', '')).toBe('csi-e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
  it('unique volume name as the kubelet reports it', () => {
    expect(uniqueVolumeName('hostpath.csi.k8s.io', 'vol-1')).toBe('kubernetes.io/csi/hostpath.csi.k8s.io^vol-1');
  });
});
