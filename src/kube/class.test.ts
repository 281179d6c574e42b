import { describe, expect, it } from 'vitest';
import { claimClass, claimHasClass, volumeClass, type WithClass } from './class.js';
import { ANN_BETA_STORAGE_CLASS } from './names.js';

const obj = (o: { ann?: string; spec?: string | null }): WithClass => ({
  metadata: o.ann === undefined ? {} : { annotations: { [ANN_BETA_STORAGE_CLASS]: o.ann } },
  spec: o.spec === undefined ? {} : { storageClassName: o.spec },
});

describe('claim and volume class (GetPersistentVolumeClaimClass, GetPersistentVolumeClass)', () => {
  it.each([
    { name: 'annotation wins over the field', o: { ann: 'beta', spec: 'field' }, want: 'beta', has: true },
    { name: 'an empty annotation still wins', o: { ann: '', spec: 'field' }, want: '', has: true },
    { name: 'field alone', o: { spec: 'field' }, want: 'field', has: true },
    { name: 'empty field asks for no class', o: { spec: '' }, want: '', has: true },
    { name: 'null field is no class asked', o: { spec: null }, want: '', has: false },
    { name: 'neither', o: {}, want: '', has: false },
  ])('$name', ({ o, want, has }) => {
    expect(claimClass(obj(o))).toBe(want);
    expect(volumeClass(obj(o))).toBe(want);
    expect(claimHasClass(obj(o))).toBe(has);
  });

  it('reads untyped JSON defensively', () => {
    expect(claimClass({ metadata: {}, spec: { storageClassName: 7 } })).toBe('');
    expect(claimClass({ metadata: {}, spec: 'x' })).toBe('');
    expect(claimClass({})).toBe('');
  });
});
