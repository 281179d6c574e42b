import type { StorageClass } from 'kubernetes-types/storage/v1.js';
import { describe, expect, it } from 'vitest';
import { capacityKeyString, desiredCapacities, isOurs, keyOfObject, newCapacityObject } from './capacity-decide.js';

const D = 'd';
const cls = (name: string, mode: string, provisioner = D): StorageClass => ({
  metadata: { name },
  provisioner,
  volumeBindingMode: mode,
});
const segs = [{ zone: 'a' }, { zone: 'b' }];

describe('desiredCapacities', () => {
  it('WaitForFirstConsumer classes of this driver × segments', () => {
    const got = desiredCapacities(
      [cls('late', 'WaitForFirstConsumer'), cls('now', 'Immediate'), cls('other', 'WaitForFirstConsumer', 'x')],
      segs,
      D,
      false,
    );
    expect(got.map(capacityKeyString)).toEqual(['late|[["zone","a"]]', 'late|[["zone","b"]]']);
  });
  it('Immediate classes too when asked', () => {
    expect(desiredCapacities([cls('now', 'Immediate')], segs, D, true)).toHaveLength(2);
  });
});

it('an object round-trips to its key and carries our labels', () => {
  const o = newCapacityObject({ className: 'late', segment: { zone: 'a' } }, D, 'ns', '1Gi', '512Mi');
  expect(capacityKeyString(keyOfObject(o))).toBe('late|[["zone","a"]]');
  expect(isOurs(o, D)).toBe(true);
  expect(isOurs(o, 'x')).toBe(false);
  expect(o.maximumVolumeSize).toBe('512Mi');
});
