import { describe, expect, it } from 'vitest';
import { findUnknownFields, strictDecodingBadRequestMessage, strictDecodingMessage } from './strict.js';

const pod = (extra: Record<string, unknown> = {}, container: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', labels: { anything: 'goes' }, annotations: { 'a/b': 'c' } },
  spec: { containers: [{ name: 'c', image: 'busybox', ...container }], ...extra },
});

describe('findUnknownFields', () => {
  it.each([
    ['a valid pod', pod(), []],
    ['unknown spec field', pod({ foo: 1 }), ['spec.foo']],
    ['unknown field inside a list item', pod({}, { bogus: true }), ['spec.containers[0].bogus']],
    [
      'unknown field deep inside',
      pod({}, { resources: { limits: { cpu: '1' }, limitz: {} } }),
      ['spec.containers[0].resources.limitz'],
    ],
    ['unknown metadata field', { ...pod(), metadata: { name: 'p', labelz: {} } }, ['metadata.labelz']],
    ['unknown top-level field', { ...pod(), extra: 1 }, ['extra']],
    ['several, in document order', pod({ a: 1, b: 2 }), ['spec.a', 'spec.b']],
    ['map values are free keys', pod({ nodeSelector: { 'x/y': 'z' } }), []],
    ['null values are skipped', pod({ nodeName: null }), []],
  ] as const)('%s', (_name, obj, want) => {
    expect(findUnknownFields(obj, '', 'v1', 'Pod')).toEqual(want);
  });

  it('managedFields fieldsV1 preserves unknown fields', () => {
    const obj = {
      metadata: { name: 'x', managedFields: [{ manager: 'kubectl', fieldsV1: { 'f:spec': { 'f:x': {} } } }] },
    };
    expect(findUnknownFields(obj, '', 'v1', 'ConfigMap')).toEqual([]);
  });

  it('map of objects checks the values', () => {
    const pvc = {
      metadata: { name: 'x' },
      status: { capacity: { storage: '1Gi' } },
      spec: { resources: { requests: { storage: '1Gi' } } },
    };
    expect(findUnknownFields(pvc, '', 'v1', 'PersistentVolumeClaim')).toEqual([]);
  });

  it('storage kinds are checked too', () => {
    const sc = { metadata: { name: 'fast' }, provisioner: 'x', parameters: { any: 'thing' }, bogus: 1 };
    expect(findUnknownFields(sc, 'storage.k8s.io', 'v1', 'StorageClass')).toEqual(['bogus']);
    const csinode = { metadata: { name: 'n' }, spec: { drivers: [{ name: 'd', nodeID: 'n', extra: 1 }] } };
    expect(findUnknownFields(csinode, 'storage.k8s.io', 'v1', 'CSINode')).toEqual(['spec.drivers[0].extra']);
  });

  it('scalars in place of objects are not unknown fields', () => {
    expect(findUnknownFields({ metadata: 'oops', spec: 3 }, '', 'v1', 'Pod')).toEqual([]);
  });
});

describe('messages', () => {
  it('formats like kube-apiserver', () => {
    expect(strictDecodingMessage(['spec.foo'])).toBe('strict decoding error: unknown field "spec.foo"');
    expect(strictDecodingMessage(['a', 'b.c'])).toBe('strict decoding error: unknown field "a", unknown field "b.c"');
    expect(strictDecodingBadRequestMessage('Pod', 'v1', ['spec.foo'])).toBe(
      'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.foo"',
    );
  });
});
