import { describe, expect, it } from 'vitest';
import { CsiTraceHub, type CsiCallInput } from './tracehub.js';

const call = (o: Partial<CsiCallInput> & { method: string }): CsiCallInput => ({
  startMs: 1000,
  durationMs: 1,
  code: 'OK',
  driver: 'd.csi',
  caller: 'kubelet',
  request: {},
  ...o,
});

describe('CsiTraceHub', () => {
  it('keeps a bounded ring per volume and forgets the least recently called volume', () => {
    const hub = new CsiTraceHub({ perVolume: 2, volumes: 2, other: 1 });
    for (const m of ['a', 'b', 'c']) hub.record(call({ method: m, volumeId: 'v1' }));
    hub.record(call({ method: 'x', volumeId: 'v2' }));
    hub.record(call({ method: 'y', volumeId: 'v1' })); // v1 is now the most recent
    hub.record(call({ method: 'z', volumeId: 'v3' })); // v2 goes
    hub.record(call({ method: 'p1' }));
    hub.record(call({ method: 'p2' }));
    expect(hub.query({ volumeIds: new Set(['v1']) }).map((c) => c.method)).toEqual(['c', 'y']);
    expect(hub.query({ volumeIds: new Set(['v2']) })).toEqual([]);
    expect(hub.query().map((c) => c.method)).toEqual(['c', 'y', 'z', 'p2']);
    expect(hub.lastId()).toBe(8);
  });

  it.each([
    { name: 'driver', f: { driver: 'other.csi' }, want: ['o'] },
    { name: 'failed only', f: { failedOnly: true }, want: ['f'] },
    { name: 'since', f: { sinceMs: 2000 }, want: ['late'] },
    { name: 'after a resource version', f: { afterId: 3 }, want: ['late', 'o', 'pod'] },
    { name: 'the object a call was for', f: { object: { kind: 'Pod', namespace: 'ns', name: 'p' } }, want: ['pod'] },
    { name: 'the name a request gives', f: { requestNames: new Set(['pvc-u1']) }, want: ['create'] },
  ])('filters by $name', ({ f, want }) => {
    const hub = new CsiTraceHub();
    hub.record(call({ method: 'create', request: { name: 'pvc-u1' } }));
    hub.record(call({ method: 'ok', volumeId: 'v' }));
    hub.record(call({ method: 'f', volumeId: 'v', code: 'INTERNAL', error: 'boom' }));
    hub.record(call({ method: 'late', volumeId: 'v', startMs: 3000 }));
    hub.record(call({ method: 'o', driver: 'other.csi' }));
    hub.record(call({ method: 'pod', volumeId: 'w', object: { kind: 'Pod', namespace: 'ns', name: 'p' } }));
    expect(hub.query(f).map((c) => c.method)).toEqual(want);
  });

  it('tells subscribers of every call until they unsubscribe, surviving a throwing one', () => {
    const hub = new CsiTraceHub();
    const seen: string[] = [];
    hub.subscribe(() => {
      throw new Error('subscriber bug');
    });
    const stop = hub.subscribe((c) => seen.push(c.method));
    hub.record(call({ method: 'a' }));
    stop();
    hub.record(call({ method: 'b' }));
    expect(seen).toEqual(['a']);
  });
});
