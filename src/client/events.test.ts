import type { Event } from 'kubernetes-types/core/v1.js';
import { describe, expect, it } from 'vitest';
import { EventCorrelator, aggregateKey, eventKey, metaTime, referenceTo, spamKey, type Correlated } from './events.js';

function notSkipped(r: Correlated): Exclude<Correlated, { action: 'skip' }> {
  if (r.action === 'skip') throw new Error('unexpectedly skipped');
  return r;
}

const ev = (over: Partial<Event> = {}, obj: Partial<Event['involvedObject']> = {}): Event => ({
  metadata: { name: 'claim1.1', namespace: 'ns' },
  involvedObject: {
    kind: 'PersistentVolumeClaim',
    namespace: 'ns',
    name: 'claim1',
    uid: 'u1',
    apiVersion: 'v1',
    ...obj,
  },
  type: 'Normal',
  reason: 'ExternalProvisioning',
  message: 'waiting for a volume to be created',
  source: { component: 'persistentvolume-controller' },
  count: 1,
  firstTimestamp: '2026-01-01T00:00:00Z',
  lastTimestamp: '2026-01-01T00:00:00Z',
  ...over,
});

describe('event keys', () => {
  it.each([
    { name: 'message', change: ev({ message: 'other' }), sameAggregate: true },
    { name: 'reason', change: ev({ reason: 'ProvisioningFailed' }), sameAggregate: false },
    { name: 'type', change: ev({ type: 'Warning' }), sameAggregate: false },
    { name: 'uid', change: ev({}, { uid: 'u2' }), sameAggregate: false },
    { name: 'namespace', change: ev({}, { namespace: 'other' }), sameAggregate: false },
    { name: 'source component', change: ev({ source: { component: 'x' } }), sameAggregate: false },
    {
      name: 'source host',
      change: ev({ source: { component: 'persistentvolume-controller', host: 'h1' } }),
      sameAggregate: false,
    },
  ])('a different $name is a different event', ({ change, sameAggregate }) => {
    expect(eventKey(change)).not.toBe(eventKey(ev()));
    expect(aggregateKey(change) === aggregateKey(ev())).toBe(sameAggregate);
  });

  it('the key ignores name, timestamps and count', () => {
    expect(eventKey(ev({ metadata: { name: 'other' }, count: 5, lastTimestamp: 'x' }))).toBe(eventKey(ev()));
  });
});

describe('EventCorrelator', () => {
  const t0 = Date.parse('2026-01-01T00:00:00Z');

  it('the first event is created; an identical one patches count and lastTimestamp of the stored Event', () => {
    const c = new EventCorrelator();
    const first = notSkipped(c.correlate(ev(), t0));
    expect(first.action).toBe('create');
    c.observe(first.key, { ...first.event, metadata: { name: 'claim1.stored', namespace: 'ns' } }, t0);
    const second = notSkipped(
      c.correlate(ev({ metadata: { name: 'claim1.2' }, lastTimestamp: metaTime(t0 + 5000) }), t0 + 5000),
    );
    expect(second).toMatchObject({
      action: 'patch',
      patch: { count: 2, lastTimestamp: '2026-01-01T00:00:05Z', message: 'waiting for a volume to be created' },
    });
    expect(second.event.metadata?.name).toBe('claim1.stored');
    expect(second.event.firstTimestamp).toBe('2026-01-01T00:00:00Z');
    c.observe(second.key, { ...second.event, count: 2 }, t0 + 5000);
    const third = c.correlate(ev(), t0 + 6000);
    expect(third.action === 'patch' && third.patch.count).toBe(3);
  });

  it('a different message on the same object is a new Event', () => {
    const c = new EventCorrelator();
    const a = notSkipped(c.correlate(ev(), t0));
    c.observe(a.key, a.event, t0);
    expect(c.correlate(ev({ message: 'something else' }), t0).action).toBe('create');
  });

  it('outside a configured dedup window the same event starts over as a new Event', () => {
    const c = new EventCorrelator({ dedupWindowMs: 600_000 });
    const a = notSkipped(c.correlate(ev(), t0));
    c.observe(a.key, a.event, t0);
    expect(c.correlate(ev(), t0 + 600_001).action).toBe('create');
  });

  it('ten similar events with distinct messages are combined into one aggregate Event', () => {
    const c = new EventCorrelator();
    const results = [];
    for (let i = 0; i < 12; i++) {
      const r = notSkipped(c.correlate(ev({ message: `attempt ${i}` }), t0 + i));
      c.observe(r.key, { ...r.event, count: r.action === 'patch' ? r.patch.count : 1 }, t0 + i);
      results.push(r);
    }
    expect(results.slice(0, 9).every((r) => r.action === 'create')).toBe(true);
    expect(results[9]).toMatchObject({
      action: 'create',
      event: { message: '(combined from similar events): attempt 9' },
    });
    expect(results[10]).toMatchObject({
      action: 'patch',
      patch: { count: 2, message: '(combined from similar events): attempt 10' },
    });
    expect(results[11]).toMatchObject({ action: 'patch', patch: { count: 3 } });
  });

  it('by default (client-go) an identical event patches however long ago the first was', () => {
    const c = new EventCorrelator();
    const a = notSkipped(c.correlate(ev(), t0));
    c.observe(a.key, a.event, t0);
    expect(c.correlate(ev(), t0 + 86_400_000).action).toBe('patch');
  });

  it('the spam filter allows a burst of 25 events per source and object, then one per 5 minutes', () => {
    const c = new EventCorrelator();
    const actions = [];
    for (let i = 0; i < 27; i++) actions.push(c.correlate(ev({ reason: `R${i}` }), t0).action);
    expect(actions.filter((a) => a === 'skip')).toHaveLength(2);
    expect(actions.slice(0, 25).every((a) => a !== 'skip')).toBe(true);
    expect(c.correlate(ev({}, { name: 'other-claim' }), t0).action).toBe('create'); // separate budget
    expect(c.correlate(ev({ reason: 'later' }), t0 + 299_000).action).toBe('skip');
    expect(c.correlate(ev({ reason: 'later' }), t0 + 301_000).action).toBe('create');
    expect(spamKey(ev({ reason: 'x', message: 'y' }))).toBe(spamKey(ev()));
  });

  it('forgets the least recently used keys beyond the cache size', () => {
    const c = new EventCorrelator({ cacheSize: 2 });
    for (const m of ['a', 'b', 'c']) {
      const r = notSkipped(c.correlate(ev({ message: m }), t0));
      c.observe(r.key, r.event, t0);
    }
    expect(c.correlate(ev({ message: 'a' }), t0).action).toBe('create');
    expect(c.correlate(ev({ message: 'c' }), t0).action).toBe('patch');
  });
});

describe('referenceTo', () => {
  it('takes kind/apiVersion from the object, or from the kind table when a list item lacks them', () => {
    const pvc = { metadata: { name: 'c', namespace: 'ns', uid: 'u', resourceVersion: '7' } };
    expect(referenceTo(pvc, 'PersistentVolumeClaim')).toEqual({
      kind: 'PersistentVolumeClaim',
      apiVersion: 'v1',
      name: 'c',
      namespace: 'ns',
      uid: 'u',
      resourceVersion: '7',
    });
    expect(referenceTo({ kind: 'VolumeAttachment', metadata: { name: 'va' } })).toMatchObject({
      apiVersion: 'storage.k8s.io/v1',
    });
  });
});

describe('metaTime', () => {
  it('is RFC 3339 with second precision', () => {
    expect(metaTime(Date.parse('2026-03-04T05:06:07.891Z'))).toBe('2026-03-04T05:06:07Z');
  });
});
