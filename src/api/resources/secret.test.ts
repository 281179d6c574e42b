import { describe, expect, it } from 'vitest';
import { ctx, NOW, obj, texts } from './core.test-kit.js';
import { secretResource as secret } from './secret.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const mk = (rest: Record<string, unknown> = {}) => obj('Secret', 's', rest, 'default');

describe('secret', () => {
  it('discovery shape', () => {
    expect(secret).toMatchObject({ plural: 'secrets', shortNames: [], namespaced: true, hasStatus: false });
  });

  it('defaults type Opaque and folds stringData into data', () => {
    const s = mk({ data: { a: b64('old'), b: b64('keep') }, stringData: { a: 'new', c: 'x' } });
    secret.prepareForCreate(s, ctx());
    expect(s).toMatchObject({ type: 'Opaque', data: { a: b64('new'), b: b64('keep'), c: b64('x') } });
    expect(s.stringData).toBeUndefined();
    expect(secret.validateCreate(s, ctx())).toEqual([]);
  });

  it.each([
    [
      'not base64',
      { data: { k: 'not base64!' } },
      ['data[k]: Invalid value: "<value omitted>": must be base64-encoded bytes'],
    ],
    [
      'bad key',
      { data: { 'a/b': b64('x') } },
      [expect.stringMatching(/^data\[a\/b\]: Invalid value: "a\/b": a valid config key must consist/)],
    ],
    [
      'tls without key',
      { type: 'kubernetes.io/tls', data: { 'tls.crt': b64('c') } },
      ['data[tls.key]: Required value'],
    ],
    [
      'too big',
      { data: { big: Buffer.alloc(1024 * 1024 + 1).toString('base64') } },
      ['data: Too long: must have at most 1048576 bytes'],
    ],
  ])('validation: %s', (_n, rest, want) => {
    const s = mk(rest);
    secret.prepareForCreate(s, ctx());
    expect(texts(secret.validateCreate(s, ctx()))).toEqual(want);
  });

  it('type and immutable data cannot change', () => {
    const old = mk({ type: 'Opaque', data: { a: b64('1') }, immutable: true });
    const next = mk({ type: 'kubernetes.io/basic-auth', data: { username: b64('2') }, immutable: true });
    secret.prepareForUpdate(next, old, ctx());
    expect(texts(secret.validateUpdate(next, old, ctx()))).toEqual([
      'type: Invalid value: "kubernetes.io/basic-auth": field is immutable',
      'data: Forbidden: field is immutable when `immutable` is set',
    ]);
  });

  it('prints NAME TYPE DATA AGE and selects by type', () => {
    const s = mk({ type: 'Opaque', data: { a: b64('1'), b: b64('2') } });
    expect(secret.columns.map((c) => c.name)).toEqual(['Name', 'Type', 'Data', 'Age']);
    expect(secret.row(s, NOW)).toEqual(['s', 'Opaque', 2, '5m']);
    expect(secret.fieldSelectors.type?.(s)).toBe('Opaque');
  });
});
