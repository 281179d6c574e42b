import type { ControllerRevision, DaemonSet } from 'kubernetes-types/apps/v1.js';
import { describe, expect, it } from 'vitest';
import { newFailedPodBackoff } from './failedbackoff.js';
import { historyToDelete, newDaemonRevision, planDaemonRevision, revisionHash } from './revision.js';

const ds = (image: string, limit?: number): DaemonSet => ({
  metadata: { name: 'agent', namespace: 'default', uid: 'u', annotations: { a: 'b' } },
  spec: {
    selector: { matchLabels: { app: 'agent' } },
    revisionHistoryLimit: limit,
    template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'c', image }] } },
  },
});
const rev = (image: string, n: number, uid = `r${n}`): ControllerRevision => ({
  ...newDaemonRevision(ds(image), n),
  metadata: { ...newDaemonRevision(ds(image), n).metadata, uid },
});

describe('DaemonSet revisions', () => {
  it('a revision: <set>-<hash>, the hash labelling it beside the template labels, the set’s annotations, a replace patch', () => {
    const r = newDaemonRevision(ds('img:1'), 1);
    const hash = revisionHash(r);
    expect(r.metadata?.name).toBe(`agent-${hash}`);
    expect(r.metadata?.labels).toEqual({ app: 'agent', 'controller-revision-hash': hash });
    expect(r.metadata?.annotations).toEqual({ a: 'b' });
    expect(r.metadata?.ownerReferences).toMatchObject([{ kind: 'DaemonSet', name: 'agent', controller: true }]);
    expect(r.data).toMatchObject({ spec: { template: { $patch: 'replace' } } });
    expect(revisionHash(newDaemonRevision(ds('img:2'), 1))).not.toBe(hash);
  });

  it('plans: ready when the newest matches, a renumber on rollback, a create for a new template', () => {
    const owned = [rev('img:1', 1), rev('img:2', 2)];
    expect(planDaemonRevision(ds('img:2'), owned)).toMatchObject({ kind: 'ready', update: owned[1] });
    expect(planDaemonRevision(ds('img:1'), owned)).toMatchObject({ kind: 'renumber', revision: owned[0], to: 3 });
    expect(planDaemonRevision(ds('img:3'), owned)).toMatchObject({ kind: 'create', revision: { revision: 3 } });
    expect(planDaemonRevision(ds('img:1'), [])).toMatchObject({ kind: 'create', revision: { revision: 1 } });
  });

  it('trims the oldest history beyond the limit, never the current one nor one a live pod uses', () => {
    const owned = [rev('a', 1), rev('b', 2), rev('c', 3), rev('d', 4)];
    const current = owned[3]!;
    const names = (rs: ControllerRevision[]) => rs.map((r) => r.revision);
    expect(names(historyToDelete(ds('d', 1), owned, current, new Set()))).toEqual([1, 2]);
    expect(names(historyToDelete(ds('d', 1), owned, current, new Set([revisionHash(owned[0]!)])))).toEqual([2, 3]);
    expect(names(historyToDelete(ds('d', 0), owned, current, new Set()))).toEqual([1, 2, 3]);
    expect(names(historyToDelete(ds('d'), owned, current, new Set()))).toEqual([]);
  });
});

describe('failed pod backoff', () => {
  it('1 s, doubling up to the cap, starting over after twice the cap idle', () => {
    const b = newFailedPodBackoff(1000, 8000);
    expect(b.remaining('k', 0)).toBeUndefined();
    b.next('k', 0);
    expect(b.remaining('k', 400)).toBe(600);
    expect(b.remaining('k', 1000)).toBeUndefined();
    b.next('k', 1000);
    expect(b.remaining('k', 1000)).toBe(2000);
    for (const t of [3000, 7000, 15000]) b.next('k', t);
    expect(b.remaining('k', 15000)).toBe(8000);
    b.next('k', 15000 + 16001);
    expect(b.remaining('k', 15000 + 16001)).toBe(1000);
  });
});
