import { describe, expect, it } from 'vitest';
import { claimObjects, type RefOwner } from './refmanager.js';

const owner: RefOwner = { uid: 'set', selector: { matchLabels: { app: 'web' } }, deleting: false };
const obj = (name: string, labels: Record<string, string>, controller?: string, deleting = false) => ({
  metadata: {
    name,
    uid: name,
    labels,
    ...(controller ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'x', uid: controller, controller: true }] } : {}),
    ...(deleting ? { deletionTimestamp: '2024-05-01T12:00:00Z' } : {}),
  },
});

describe('claimObjects (ControllerRefManager)', () => {
  it.each([
    { name: 'owned and selected: kept', o: obj('a', { app: 'web' }, 'set'), owner, want: { owned: ['a'], adopt: [], release: [] } },
    { name: 'orphan selected: adopted', o: obj('a', { app: 'web' }), owner, want: { owned: ['a'], adopt: ['a'], release: [] } },
    { name: 'orphan being deleted: left alone', o: obj('a', { app: 'web' }, undefined, true), owner, want: { owned: [], adopt: [], release: [] } },
    { name: 'orphan, owner being deleted: left alone', o: obj('a', { app: 'web' }), owner: { ...owner, deleting: true }, want: { owned: [], adopt: [], release: [] } },
    { name: 'owned, no longer selected: released', o: obj('a', { app: 'db' }, 'set'), owner, want: { owned: [], adopt: [], release: ['a'] } },
    { name: "another controller's: never touched", o: obj('a', { app: 'web' }, 'other'), owner, want: { owned: [], adopt: [], release: [] } },
  ])('$name', ({ o, owner: ow, want }) => {
    const d = claimObjects(ow, [o]);
    const names = (xs: Array<{ metadata: { name: string } }>) => xs.map((x) => x.metadata.name);
    expect({ owned: names(d.owned), adopt: names(d.adopt), release: names(d.release) }).toEqual(want);
  });
});
