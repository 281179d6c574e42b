import { describe, expect, it } from 'vitest';
import type { ControllerRevision } from 'kubernetes-types/apps/v1.js';
import {
  hashRevision,
  newRevision,
  planUpdateRevision,
  revisionTemplate,
  revisionsToDelete,
  safeEncodeString,
} from './revision.js';
import { NEW, OLD, set } from './fixtures.test-kit.js';

const withTemplate = (t = NEW.template) => set({ template: t });
const rev = (n: number, t = NEW.template): ControllerRevision => ({
  ...newRevision(withTemplate(t), n, 0),
  metadata: { ...newRevision(withTemplate(t), n, 0).metadata, uid: `r${n}` },
});

describe('ControllerRevisions of a StatefulSet', () => {
  it('names a revision <set>-<safe-encoded hash of its data>, stable across key order', () => {
    const a = newRevision(withTemplate(), 1, 0);
    expect(a.metadata?.name).toMatch(/^web-[bcdfghjklmnpqrstvwxz2456789]+$/);
    const reordered = {
      spec: { template: { spec: NEW.template.spec, metadata: NEW.template.metadata, $patch: 'replace' } },
    };
    expect(hashRevision(reordered, 0)).toBe(a.metadata?.labels?.['controller-revision-hash']);
    expect(hashRevision(reordered, 1)).not.toBe(hashRevision(reordered, 0));
    expect(safeEncodeString('0123')).toBe('4567'); // '0' is byte 48, 48 % 27 = 21
  });

  it('stores the patch that restores the template (what rollout undo sends back)', () => {
    const r = newRevision(withTemplate(), 1, 0);
    expect(r.data).toEqual({ spec: { template: { $patch: 'replace', ...NEW.template } } });
    expect(revisionTemplate(r)).toEqual(NEW.template);
    expect(r.metadata?.ownerReferences).toEqual([
      {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        name: 'web',
        uid: 'set-uid',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
  });

  it.each([
    { name: 'no revision yet: create number 1', owned: [], t: NEW.template, want: { kind: 'create', number: 1 } },
    {
      name: 'the newest revision is the template: nothing to write',
      owned: [rev(1, OLD.template), rev(2)],
      t: NEW.template,
      want: { kind: 'ready', number: 2 },
    },
    {
      name: 'a new template: create the next number',
      owned: [rev(1, OLD.template)],
      t: NEW.template,
      want: { kind: 'create', number: 2 },
    },
    {
      name: 'back to an older template (undo): that revision is renumbered newest',
      owned: [rev(1, OLD.template), rev(2)],
      t: OLD.template,
      want: { kind: 'renumber', number: 3 },
    },
  ])('$name', ({ owned, t, want }) => {
    const plan = planUpdateRevision(withTemplate(t), owned);
    const number =
      plan.kind === 'create' ? plan.revision.revision : plan.kind === 'renumber' ? plan.to : plan.update.revision;
    expect({ kind: plan.kind, number }).toEqual(want);
  });

  it('history beyond revisionHistoryLimit goes, oldest first, never a live revision', () => {
    const owned = [1, 2, 3, 4].map((n) => ({ ...rev(n), metadata: { name: `web-${n}`, uid: `r${n}` } }));
    const s = set({ revisionHistoryLimit: 1 });
    expect(revisionsToDelete(s, owned, new Set(['web-4', 'web-2'])).map((r) => r.metadata?.name)).toEqual(['web-1']);
    expect(revisionsToDelete(set(), owned, new Set(['web-4']))).toEqual([]);
  });
});
