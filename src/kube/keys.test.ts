import { describe, expect, it } from 'vitest';
import { metaNamespaceKey, splitKey, splitNamespacedKey } from './keys.js';

describe('object keys (MetaNamespaceKeyFunc / SplitMetaNamespaceKey)', () => {
  it.each([
    { meta: { namespace: 'ns', name: 'a' }, key: 'ns/a', split: { namespace: 'ns', name: 'a' }, pair: ['ns', 'a'] },
    { meta: { name: 'pv-1' }, key: 'pv-1', split: { name: 'pv-1' }, pair: ['', 'pv-1'] },
  ])('$key', ({ meta, key, split, pair }) => {
    expect(metaNamespaceKey({ metadata: meta })).toBe(key);
    expect(splitKey(key)).toEqual(split);
    expect(splitNamespacedKey(key)).toEqual(pair);
  });
});
