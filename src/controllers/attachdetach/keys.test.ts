import { describe, expect, it } from 'vitest';
import { nodeKey, pairKey, parseAttachKey } from './keys.js';

describe('attach/detach queue keys', () => {
  it.each([
    { key: pairKey('pv-1', 'node.a'), want: { kind: 'pair', pvName: 'pv-1', nodeName: 'node.a' } },
    { key: nodeKey('node.a'), want: { kind: 'node', nodeName: 'node.a' } },
    { key: 'volume/pv-1', want: undefined },
    { key: 'node/', want: undefined },
    { key: 'other/x', want: undefined },
  ])('$key', ({ key, want }) => expect(parseAttachKey(key)).toEqual(want));
});
