import { describe, expect, it } from 'vitest';
import { findMount, mountsOfSource, mountsUnder, parseMountInfo, unescapeMountField } from './mountinfo.js';

const SAMPLE = [
  '22 27 0:21 / /proc rw,relatime - proc proc rw',
  '36 35 98:0 /mnt1 /mnt/parent\\040dir rw,noatime master:1 shared:7 - ext3 /dev/root rw,errors=continue',
  '40 27 0:39 / /tmp/a\\011b ro,relatime - tmpfs my\\040src rw,size=10k',
  '41 40 0:39 /sub /tmp/a\\011b/inner rw - tmpfs tmpfs rw',
  '42 40 0:40 / /tmp/a\\011b rw - tmpfs second rw',
].join('\n');

describe('unescapeMountField', () => {
  it.each([
    { in: 'a\\040b', want: 'a b' },
    { in: 'tab\\011x', want: 'tab\tx' },
    { in: 'nl\\012', want: 'nl\n' },
    { in: 'back\\134slash', want: 'back\\slash' },
    { in: 'plain', want: 'plain' },
  ])('$in → $want', ({ in: s, want }) => expect(unescapeMountField(s)).toBe(want));
});

describe('parseMountInfo', () => {
  const entries = parseMountInfo(SAMPLE);

  it('parses every field, optional fields up to the separator', () => {
    expect(entries).toHaveLength(5);
    expect(entries[1]).toEqual({
      id: 36,
      parentId: 35,
      device: '98:0',
      root: '/mnt1',
      mountPoint: '/mnt/parent dir',
      mountOptions: ['rw', 'noatime'],
      optionalFields: ['master:1', 'shared:7'],
      fsType: 'ext3',
      source: '/dev/root',
      superOptions: ['rw', 'errors=continue'],
    });
  });

  it('decodes escapes in mount point and source', () => {
    expect(entries[2]!.mountPoint).toBe('/tmp/a\tb');
    expect(entries[2]!.source).toBe('my src');
    expect(entries[2]!.mountOptions).toContain('ro');
    expect(entries[0]!.optionalFields).toEqual([]);
  });

  it('rejects a malformed line', () => {
    expect(() => parseMountInfo('1 2 3')).toThrow(/malformed/);
  });

  it('findMount returns the topmost mount at a point', async () => {
    const m = await findMount('/tmp/a\tb', entries);
    expect(m?.source).toBe('second');
    expect(await findMount('/tmp/a\tb/none', entries)).toBeUndefined();
  });

  it('mountsUnder lists deepest first and excludes siblings with a shared prefix', async () => {
    const under = await mountsUnder('/tmp/a\tb', [
      ...entries,
      ...parseMountInfo('50 27 0:41 / /tmp/a\\011bc rw - tmpfs x rw'),
    ]);
    expect(under.map((e) => e.mountPoint)).toEqual(['/tmp/a\tb/inner', '/tmp/a\tb', '/tmp/a\tb']);
    expect(under[1]!.source).toBe('second');
  });

  it('mountsOfSource lists every mount of one source', async () => {
    expect((await mountsOfSource('second', entries)).map((e) => e.mountPoint)).toEqual(['/tmp/a\tb']);
    expect((await mountsOfSource('tmpfs', entries)).map((e) => e.mountPoint)).toEqual(['/tmp/a\tb/inner']);
    expect(await mountsOfSource('/dev/loop9', entries)).toEqual([]);
  });
});
