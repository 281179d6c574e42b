import { describe, expect, it } from 'vitest';
import { BadRequestError, ExpiredError, UnavailableError } from '../util/errors.js';
import { WatchDecoder, parseWatchLine } from './watch.js';

const ev = (type: string, name: string, rv: string): string =>
  JSON.stringify({ type, object: { kind: 'PersistentVolume', metadata: { name, resourceVersion: rv } } }) + '\n';

describe('WatchDecoder', () => {
  it('decodes events split across chunks at every byte position', () => {
    const body = ev('ADDED', 'pv-ä', '1') + ev('MODIFIED', 'pv-ä', '2') + ev('DELETED', 'pv-ä', '3');
    const bytes = Buffer.from(body);
    for (let cut = 0; cut <= bytes.length; cut++) {
      const d = new WatchDecoder<{ metadata: { name: string } }>();
      const out = [...d.push(bytes.subarray(0, cut)), ...d.push(bytes.subarray(cut)), ...d.end()];
      expect(out.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
      expect(out.map((e) => (e.type === 'ERROR' ? '' : e.object.metadata.name))).toEqual(['pv-ä', 'pv-ä', 'pv-ä']);
    }
  });

  it('returns nothing for a partial line until its newline arrives', () => {
    const d = new WatchDecoder();
    const line = ev('BOOKMARK', 'x', '9');
    expect(d.push(line.slice(0, 10))).toEqual([]);
    expect(d.push(line.slice(10))).toHaveLength(1);
  });

  it('treats an unterminated last line as an event at end of stream', () => {
    const d = new WatchDecoder();
    expect(d.push(ev('ADDED', 'a', '1').trimEnd())).toEqual([]);
    expect(d.end().map((e) => e.type)).toEqual(['ADDED']);
  });

  it('skips blank lines', () => {
    const d = new WatchDecoder();
    expect(d.push('\n\n' + ev('ADDED', 'a', '1') + '\r\n')).toHaveLength(1);
  });
});

describe('parseWatchLine', () => {
  it.each([
    { name: '410 Expired → ExpiredError', code: 410, reason: 'Expired', want: ExpiredError },
    { name: '410 Gone → ExpiredError', code: 410, reason: 'Gone', want: ExpiredError },
    { name: '500 → UnavailableError', code: 500, reason: 'InternalError', want: UnavailableError },
  ])('ERROR event: $name', ({ code, reason, want }) => {
    const line = JSON.stringify({
      type: 'ERROR',
      object: {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        code,
        reason,
        message: 'too old resource version: 1 (5)',
      },
    });
    const e = parseWatchLine(line);
    expect(e.type).toBe('ERROR');
    if (e.type === 'ERROR') {
      expect(e.error).toBeInstanceOf(want);
      expect(e.error.message).toContain('too old');
    }
  });

  it.each([
    { name: 'not JSON', line: '{"type":' },
    { name: 'no object', line: '{"type":"ADDED"}' },
    { name: 'unknown type', line: '{"type":"EXPLODED","object":{}}' },
  ])('rejects $name', ({ line }) => {
    expect(() => parseWatchLine(line)).toThrow(BadRequestError);
  });
});
