import { describe, expect, it } from 'vitest';
import { ObjectCache, metaNamespaceKey, splitKey } from './cache.js';

interface Obj {
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; resourceVersion?: string };
  spec?: { volumeName?: string };
}
const o = (name: string, namespace?: string, volumeName?: string, rv = '1'): Obj => ({
  metadata: { name, namespace, resourceVersion: rv },
  spec: { volumeName },
});
const byVolume = (x: Obj): string[] => (x.spec?.volumeName ? [x.spec.volumeName] : []);

describe('metaNamespaceKey', () => {
  it.each([
    { obj: o('a', 'ns'), key: 'ns/a' },
    { obj: o('pv1'), key: 'pv1' },
  ])('$key', ({ obj, key }) => {
    expect(metaNamespaceKey(obj)).toBe(key);
    expect(splitKey(key)).toEqual(obj.metadata.namespace ? { namespace: 'ns', name: 'a' } : { name: 'pv1' });
  });
});

describe('ObjectCache', () => {
  it('gets by namespace/name and by name, and lists by namespace', () => {
    const c = new ObjectCache<Obj>();
    c.upsert(o('a', 'ns1'));
    c.upsert(o('b', 'ns2'));
    c.upsert(o('pv'));
    expect(c.get('ns1', 'a')?.metadata.name).toBe('a');
    expect(c.get('pv')?.metadata.name).toBe('pv');
    expect(c.get('ns2', 'a')).toBeUndefined();
    expect(c.list('ns1').map((x) => x.metadata.name)).toEqual(['a']);
    expect(c.list().length).toBe(3);
  });

  it('keeps indexes current across update and delete', () => {
    const c = new ObjectCache<Obj>();
    c.addIndexer('volume', byVolume);
    c.upsert(o('c1', 'ns', 'pv1'));
    c.upsert(o('c2', 'ns', 'pv1'));
    expect(
      c
        .byIndex('volume', 'pv1')
        .map((x) => x.metadata.name)
        .sort(),
    ).toEqual(['c1', 'c2']);
    c.upsert(o('c1', 'ns', 'pv2', '2'));
    expect(c.byIndex('volume', 'pv1').map((x) => x.metadata.name)).toEqual(['c2']);
    expect(c.byIndex('volume', 'pv2').map((x) => x.metadata.name)).toEqual(['c1']);
    c.delete('ns/c2');
    expect(c.byIndex('volume', 'pv1')).toEqual([]);
    expect(() => c.byIndex('nope', 'x')).toThrow();
  });

  it('an indexer added late indexes existing objects', () => {
    const c = new ObjectCache<Obj>();
    c.upsert(o('c1', 'ns', 'pv1'));
    c.addIndexer('volume', byVolume);
    expect(c.byIndex('volume', 'pv1')).toHaveLength(1);
    expect(() => c.addIndexer('volume', byVolume)).toThrow();
  });

  it('replace reports added, updated and deleted', () => {
    const c = new ObjectCache<Obj>();
    c.upsert(o('keep'));
    c.upsert(o('gone'));
    const r = c.replace([o('keep', undefined, undefined, '5'), o('new')]);
    expect(r.added.map((x) => x.metadata.name)).toEqual(['new']);
    expect(r.updated.map(([a, b]) => [a.metadata.resourceVersion, b.metadata.resourceVersion])).toEqual([['1', '5']]);
    expect(r.deleted.map(([k]) => k)).toEqual(['gone']);
    expect(c.keys().sort()).toEqual(['keep', 'new']);
  });

  it('list returns a fresh array each call', () => {
    const c = new ObjectCache<Obj>();
    c.upsert(o('a'));
    const l = c.list();
    l.pop();
    expect(c.list()).toHaveLength(1);
  });
});
