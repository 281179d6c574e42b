import type { Pod } from 'kubernetes-types/core/v1.js';
import { describe, expect, it } from 'vitest';
import { configMapFiles, downwardFiles, formatMap, PayloadError, secretFiles, type Files } from './payload.js';

const pod: Pod = {
  metadata: {
    name: 'p',
    namespace: 'ns',
    uid: 'u1',
    labels: { zone: 'a', app: 'web' },
    annotations: { note: 'say "hi"' },
  },
  spec: {
    containers: [{ name: 'c', resources: { limits: { memory: '64Mi', cpu: '500m' }, requests: { cpu: '250m' } } }],
  },
};
const read = (out: Files): Record<string, string> =>
  Object.fromEntries([...out.values()].map((f) => [f.path, `${f.data.toString()}|${f.mode.toString(8)}`]));

describe('payload', () => {
  const l = {
    configMap: (_ns: string, n: string) =>
      n === 'cm'
        ? { metadata: { name: 'cm' }, data: { a: 'A' }, binaryData: { bin: Buffer.from([1, 2]).toString('base64') } }
        : undefined,
    secret: (_ns: string, n: string) =>
      n === 's' ? { metadata: { name: 's' }, data: { pw: Buffer.from('hunter2').toString('base64') } } : undefined,
  };

  it.each([
    { name: 'all keys at default mode', src: { name: 'cm' }, want: { a: 'A|644', bin: '\u0001\u0002|644' } },
    {
      name: 'items at their paths',
      src: { name: 'cm', items: [{ key: 'a', path: 'x/y', mode: 0o600 }] },
      want: { 'x/y': 'A|600' },
    },
    { name: 'missing optional configMap → empty', src: { name: 'nope', optional: true }, want: {} },
    {
      name: 'missing optional key → skipped',
      src: { name: 'cm', optional: true, items: [{ key: 'zz', path: 'z' }] },
      want: {},
    },
  ])('configMap: $name', ({ src, want }) => {
    const out: Files = new Map();
    configMapFiles(out, 'ns', src, 0o644, l);
    expect(read(out)).toEqual(want);
  });

  it.each([
    { src: { name: 'nope' }, error: 'configmap "nope" not found' },
    {
      src: { name: 'cm', items: [{ key: 'zz', path: 'z' }] },
      error: 'configmap references non-existent config key: zz',
    },
    { src: { name: 'cm', items: [{ key: 'a', path: '../a' }] }, error: "invalid path: must not contain '..': ../a" },
  ])('configMap refused: $error', ({ src, error }) => {
    expect(() => configMapFiles(new Map(), 'ns', src, 0o644, l)).toThrow(new PayloadError(error));
  });

  it('secret data is decoded; a missing secret is named', () => {
    const out: Files = new Map();
    secretFiles(out, 'ns', { secretName: 's' }, 0o400, l);
    expect(read(out)).toEqual({ pw: 'hunter2|400' });
    expect(() => secretFiles(new Map(), 'ns', { secretName: 'x' }, 0o644, l)).toThrow('secret "x" not found');
  });

  it.each([
    { ref: { fieldRef: { fieldPath: 'metadata.labels' } }, want: 'app="web"\nzone="a"' },
    { ref: { fieldRef: { fieldPath: 'metadata.annotations' } }, want: 'note="say \\"hi\\""' },
    { ref: { fieldRef: { fieldPath: "metadata.labels['zone']" } }, want: 'a' },
    { ref: { fieldRef: { fieldPath: 'metadata.name' } }, want: 'p' },
    { ref: { fieldRef: { fieldPath: 'metadata.uid' } }, want: 'u1' },
    { ref: { resourceFieldRef: { containerName: 'c', resource: 'limits.memory' } }, want: String(64 * 1024 * 1024) },
    { ref: { resourceFieldRef: { containerName: 'c', resource: 'limits.cpu', divisor: '1m' } }, want: '500' },
    { ref: { resourceFieldRef: { containerName: 'c', resource: 'requests.cpu' } }, want: '1' },
  ])('downwardAPI $ref → $want', ({ ref, want }) => {
    const out: Files = new Map();
    downwardFiles(out, pod, [{ path: 'v', ...ref }], 0o644);
    expect(out.get('v')?.data.toString()).toBe(want);
  });

  it('formatMap sorts keys and quotes values', () => expect(formatMap({ b: '2', a: '1' })).toBe('a="1"\nb="2"'));
});
