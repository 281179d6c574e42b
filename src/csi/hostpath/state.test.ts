import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { dataLayout, parseState, STATE_FILE, StateStore } from './state.js';

describe('StateStore', () => {
  let dir = '';
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('starts empty, persists atomically, and reloads what was saved', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'stowage-hp-state-'));
    const a = await StateStore.open(dir);
    expect(a.data).toEqual({ version: 1, volumes: {}, snapshots: {} });
    a.data.volumes.v1 = {
      id: 'v1',
      name: 'n',
      kind: 'block',
      capacityBytes: 4096,
      createdAtMs: 1,
      parameters: {},
      attachments: {},
      staged: {},
      published: { '/t': { targetPath: '/t', readOnly: true, stagingPath: '/s', mountFlags: [] } },
    };
    // Concurrent saves serialize; the last one on disk includes every change.
    await Promise.all([a.save(), a.save(), a.save()]);
    expect(await readdir(dir)).toEqual([STATE_FILE]);
    const b = await StateStore.open(dir);
    expect(b.data).toEqual(a.data);
  });

  it('refuses a file that is not its format instead of starting empty', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'stowage-hp-state-'));
    await writeFile(path.join(dir, STATE_FILE), '{"version":2}');
    await expect(StateStore.open(dir)).rejects.toThrow(/version 1/);
    expect(await readFile(path.join(dir, STATE_FILE), 'utf8')).toBe('{"version":2}');
  });

  it.each([
    {
      name: 'volume id mismatch',
      text: '{"version":1,"volumes":{"a":{"id":"b","name":"x","kind":"mount","capacityBytes":1}},"snapshots":{}}',
    },
    {
      name: 'unknown kind',
      text: '{"version":1,"volumes":{"a":{"id":"a","name":"x","kind":"tape","capacityBytes":1}},"snapshots":{}}',
    },
    { name: 'bad snapshot', text: '{"version":1,"volumes":{},"snapshots":{"s":{"id":"s"}}}' },
    { name: 'not JSON', text: 'garbage' },
    {
      name: 'non-string fsType',
      text: '{"version":1,"volumes":{"a":{"id":"a","name":"x","kind":"mount","capacityBytes":1,"fsType":4}},"snapshots":{}}',
    },
  ])('parseState rejects $name', ({ text }) => {
    expect(() => parseState(text)).toThrow();
  });

  it('loads a state file from before filesystem volumes: a record without fsType is a directory volume', () => {
    const st = parseState(
      '{"version":1,"volumes":{"a":{"id":"a","name":"x","kind":"mount","capacityBytes":1}},"snapshots":{}}',
    );
    expect(st.volumes.a!.fsType).toBeUndefined();
    expect(dataLayout(st.volumes.a!)).toBe('directory');
    expect(dataLayout({ kind: 'mount', fsType: 'ext4' })).toBe('file');
    expect(dataLayout({ kind: 'block' })).toBe('file');
  });
});
