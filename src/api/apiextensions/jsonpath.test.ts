import { describe, expect, it } from 'vitest';
import { evalJsonPath, JsonPathError, parseJsonPath } from './jsonpath.js';

const obj = {
  metadata: { name: 'a', labels: { 'app.kubernetes.io/name': 'x' } },
  spec: { items: [{ n: 1 }, { n: 2 }] },
  status: {
    conditions: [
      { type: 'Ready', status: 'True' },
      { type: 'Synced', status: 'False' },
    ],
  },
};

describe('printer-column JSONPath', () => {
  it.each([
    { path: '.metadata.name', want: ['a'] },
    { path: '{.metadata.name}', want: ['a'] },
    { path: ".metadata.labels['app.kubernetes.io/name']", want: ['x'] },
    { path: '.spec.items[1].n', want: [2] },
    { path: '.spec.items[-1].n', want: [2] },
    { path: '.spec.items[*].n', want: [1, 2] },
    { path: '.status.conditions[?(@.type=="Ready")].status', want: ['True'] },
    { path: '.status.missing', want: [] },
  ])('$path', ({ path, want }) => expect(evalJsonPath(obj, path)).toEqual(want));

  it('refuses syntax it does not know', () => {
    expect(() => parseJsonPath('.a..b')).toThrow(JsonPathError);
  });
});
