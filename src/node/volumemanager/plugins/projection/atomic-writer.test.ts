import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PayloadFile } from '../../types.js';
import { DATA_LINK, writePayloadAtomically } from './atomic-writer.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const vol = (): string => {
  const d = mkdtempSync(path.join(tmpdir(), 'vm-atomic-'));
  dirs.push(d);
  return d;
};
const f = (p: string, data: string, mode = 0o644): PayloadFile => ({ path: p, data: Buffer.from(data), mode });
const timestamped = (d: string): string[] => readdirSync(d).filter((n) => n.startsWith('..') && n !== DATA_LINK);

describe('writePayloadAtomically', () => {
  it('lays out ..<timestamp>, ..data and one link per top-level path, at the modes asked', async () => {
    const d = vol();
    expect(
      await writePayloadAtomically(d, [f('a', '1'), f('conf/x.yaml', '2', 0o400)], new Date('2026-01-02T03:04:05Z')),
    ).toBe(true);
    const [ts] = timestamped(d);
    expect(ts).toMatch(/^\.\.2026_01_02_03_04_05\./);
    expect(readlinkSync(path.join(d, DATA_LINK))).toBe(ts);
    expect(readlinkSync(path.join(d, 'a'))).toBe('..data/a');
    expect(readlinkSync(path.join(d, 'conf'))).toBe('..data/conf');
    expect(readFileSync(path.join(d, 'conf', 'x.yaml'), 'utf8')).toBe('2');
    expect(statSync(path.join(d, ts!, 'conf', 'x.yaml')).mode & 0o777).toBe(0o400);
    expect(statSync(path.join(d, ts!, 'a')).mode & 0o777).toBe(0o644);
  });

  it('an unchanged payload writes nothing; a changed one swaps ..data, drops old paths and the old directory', async () => {
    const d = vol();
    await writePayloadAtomically(d, [f('a', '1'), f('b', '1')]);
    const [first] = timestamped(d);
    expect(await writePayloadAtomically(d, [f('a', '1'), f('b', '1')])).toBe(false);
    expect(timestamped(d)).toEqual([first]);
    expect(await writePayloadAtomically(d, [f('a', '2'), f('c', '3')])).toBe(true);
    const [second] = timestamped(d);
    expect(second).not.toBe(first);
    expect(readFileSync(path.join(d, 'a'), 'utf8')).toBe('2');
    expect(existsSync(path.join(d, 'b'))).toBe(false);
    expect(lstatSync(path.join(d, 'c')).isSymbolicLink()).toBe(true);
    expect(readdirSync(d).sort()).toEqual([second, DATA_LINK, 'a', 'c'].sort());
  });

  it('finishes a write interrupted before the swap: leftovers go, content is the new payload', async () => {
    const d = vol();
    await writePayloadAtomically(d, [f('a', '1')]);
    // what a crash between writing the new directory and the rename leaves behind
    const { mkdirSync, writeFileSync, symlinkSync } = await import('node:fs');
    mkdirSync(path.join(d, '..2026_01_01_00_00_00.123'));
    writeFileSync(path.join(d, '..2026_01_01_00_00_00.123', 'a'), 'half');
    symlinkSync('..2026_01_01_00_00_00.123', path.join(d, '..data_tmp'));
    await writePayloadAtomically(d, [f('a', '2')]);
    expect(readFileSync(path.join(d, 'a'), 'utf8')).toBe('2');
    expect(timestamped(d)).toHaveLength(1);
  });

  it.each(['/abs', '../up', 'a/../../b', '..hidden'])('refuses the path %s', async (p) => {
    await expect(writePayloadAtomically(vol(), [f(p, 'x')])).rejects.toThrow(/invalid path/);
  });
});
