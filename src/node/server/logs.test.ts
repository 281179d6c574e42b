import { appendFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LogFormatter, parseCriLine, rfc3339Nano, streamContainerLog, tailStartOffset } from './logs.js';

const line = (s: string): Buffer => Buffer.from(s);
const T1 = '2026-01-02T03:04:05.100000000Z';
const T2 = '2026-01-02T03:04:06.000000000Z';

describe('CRI log lines', () => {
  it('parses timestamp, stream, tag and text', () => {
    const e = parseCriLine(line(`${T1} stderr F hello world`));
    expect(e).toMatchObject({ timestamp: T1, stream: 'stderr', partial: false, timeMs: Date.parse(T1) });
    expect(e?.content.toString()).toBe('hello world');
    expect(parseCriLine(line(`${T1} stdout P `))?.partial).toBe(true);
    expect(parseCriLine(line(`${T1} stdout F`))?.content.length).toBe(0);
  });
  it.each(['garbage', `${T1} stdin F x`, 'yesterday stdout F x'])('refuses %j', (s) =>
    expect(parseCriLine(line(s))).toBeUndefined(),
  );
  it.each([
    ['2026-01-02T03:04:05.100000000Z', '2026-01-02T03:04:05.1Z'],
    ['2026-01-02T03:04:05.000000000Z', '2026-01-02T03:04:05Z'],
    ['2026-01-02T03:04:05.123456789+02:00', '2026-01-02T03:04:05.123456789+02:00'],
  ])('prints %s as Go RFC3339Nano %s', (a, b) => expect(rfc3339Nano(a)).toBe(b));
});

describe('LogFormatter', () => {
  const run = (opts: ConstructorParameters<typeof LogFormatter>[0], lines: string[]): string => {
    const f = new LogFormatter(opts);
    return lines.map((l) => f.format(line(l)).toString()).join('');
  };
  const file = [`${T1} stdout P hel`, `${T1} stdout F lo`, `${T2} stderr F oops`];
  it('joins partial pieces and merges both streams', () =>
    expect(run({ timestamps: false }, file)).toBe('hello\noops\n'));
  it('stamps the first piece of a line only', () =>
    expect(run({ timestamps: true }, file)).toBe('2026-01-02T03:04:05.1Z hello\n2026-01-02T03:04:06Z oops\n'));
  it('drops entries before sinceTime', () =>
    expect(run({ timestamps: false, sinceMs: Date.parse(T2) }, file)).toBe('oops\n'));
  it('cuts the output at limitBytes', () => {
    const f = new LogFormatter({ timestamps: false, limitBytes: 7 });
    expect(file.map((l) => f.format(line(l)).toString()).join('')).toBe('hello\no');
    expect(f.done).toBe(true);
  });
});

describe('reading a log file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'logs-test-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, '0.log');
  writeFileSync(path, ['a', 'b', 'c'].map((s) => `${T1} stdout F ${s}\n`).join(''));

  it.each([
    [0, ''],
    [1, 'c\n'],
    [2, 'b\nc\n'],
    [5, 'a\nb\nc\n'],
  ])('tailLines=%i', async (n, want) => {
    const f = await open(path, 'r');
    const size = (await f.stat()).size;
    const off = await tailStartOffset(f, size, n);
    await f.close();
    const got: Buffer[] = [];
    await streamContainerLog(
      path,
      { follow: false, timestamps: false, tailLines: n },
      { write: async (b) => void got.push(b), signal: new AbortController().signal },
      async () => false,
    );
    expect(Buffer.concat(got).toString()).toBe(want);
    expect(off).toBeLessThanOrEqual(size);
  });
});

describe('following a log across a rotation', () => {
  const dir = mkdtempSync(join(tmpdir(), 'stowage-logrot-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the rest of the renamed file, then the new one from its start', async () => {
    const path = join(dir, '0.log');
    writeFileSync(path, `${T1} stdout F one\n`);
    const got: string[] = [];
    let running = true;
    let seen: (() => void) | undefined;
    const done = streamContainerLog(
      path,
      { follow: true, timestamps: false },
      {
        write: async (b) => {
          got.push(b.toString());
          seen?.();
        },
        signal: new AbortController().signal,
      },
      async () => running,
      50,
    );
    const until = (n: number): Promise<void> =>
      new Promise((resolve) => {
        seen = () => got.length >= n && resolve();
        seen();
      });
    await until(1);
    appendFileSync(path, `${T1} stdout F two\n`);
    renameSync(path, `${path}.20260102-030405`);
    appendFileSync(`${path}.20260102-030405`, `${T1} stdout F three\n`); // written before the reopen
    writeFileSync(path, `${T2} stdout F four\n`);
    await until(4);
    running = false;
    await done;
    expect(got.join('')).toBe('one\ntwo\nthree\nfour\n');
  });
});
