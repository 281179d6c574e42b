import { describe, expect, it } from 'vitest';
import { keyOf, nameOf, namespaceOf, uidOf } from './meta.js';

describe('meta accessors', () => {
  it('read the fields, "" when unset', () => {
    const pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u1' } };
    expect([nameOf(pod), namespaceOf(pod), uidOf(pod), keyOf(pod)]).toEqual(['p', 'ns', 'u1', 'ns/p']);
    expect([nameOf({}), namespaceOf({}), uidOf({}), keyOf({})]).toEqual(['', '', '', '']);
  });

  it('keys a cluster-scoped object by its name alone', () => {
    expect(keyOf({ metadata: { name: 'pv-1' } })).toBe('pv-1');
  });
});
