import { describe, expect, it } from 'vitest';
import { ctx, NOW, obj, texts } from './core.test-kit.js';
import { configMapResource as cm } from './configmap.js';

const mk = (rest: Record<string, unknown> = {}) => obj('ConfigMap', 'c', rest, 'default');

describe('configmap', () => {
  it('discovery shape', () => {
    expect(cm).toMatchObject({ plural: 'configmaps', shortNames: ['cm'], namespaced: true, hasStatus: false });
  });

  it.each([
    ['valid', { data: { 'a.conf': 'x' }, binaryData: { bin: Buffer.from('y').toString('base64') } }, []],
    ['bad key', { data: { '..x': 'x' } }, ['data[..x]: Invalid value: "..x": must not start with \'..\'']],
    [
      'key in both maps',
      { data: { k: 'x' }, binaryData: { k: 'eA==' } },
      ['binaryData[k]: Invalid value: "k": duplicate of key present in data'],
    ],
    [
      'binary not base64',
      { binaryData: { k: '%%%' } },
      ['binaryData[k]: Invalid value: "<value omitted>": must be base64-encoded bytes'],
    ],
  ])('validation: %s', (_n, rest, want) => {
    expect(texts(cm.validateCreate(mk(rest), ctx()))).toEqual(want);
  });

  it('immutable configmaps keep their data', () => {
    const old = mk({ data: { a: '1' }, immutable: true });
    expect(texts(cm.validateUpdate(mk({ data: { a: '2' }, immutable: true }), old, ctx()))).toEqual([
      'data: Forbidden: field is immutable when `immutable` is set',
    ]);
    expect(texts(cm.validateUpdate(mk({ data: { a: '1' } }), old, ctx()))).toEqual([
      'immutable: Forbidden: field is immutable when `immutable` is set',
    ]);
    expect(cm.validateUpdate(mk({ data: { a: '1' }, immutable: true }), old, ctx())).toEqual([]);
  });

  it('prints NAME DATA AGE counting both maps', () => {
    expect(cm.columns.map((c) => c.name)).toEqual(['Name', 'Data', 'Age']);
    expect(cm.row(mk({ data: { a: '1' }, binaryData: { b: 'eA==' } }), NOW)).toEqual(['c', 2, '5m']);
  });
});
