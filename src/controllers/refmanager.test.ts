import { describe, expect, it } from 'vitest';
import { ConflictError, InternalError, NotFoundError } from '../util/errors.js';
import { adoptPatch, claimAndPatch, claimObjects, controllerKey, releasePatch, type ClaimOwner } from './refmanager.js';

const owner: ClaimOwner = {
  metadata: { namespace: 'ns', uid: 'set' },
  spec: { selector: { matchLabels: { app: 'web' } } },
};
const deletingOwner: ClaimOwner = {
  ...owner,
  metadata: { ...owner.metadata, deletionTimestamp: '2024-05-01T12:00:00Z' },
};
const obj = (
  name: string,
  labels: Record<string, string>,
  controller?: string,
  deleting = false,
  namespace = 'ns',
) => ({
  metadata: {
    name,
    namespace,
    uid: name,
    labels,
    ...(controller
      ? {
          ownerReferences: [
            { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'x', uid: controller, controller: true },
          ],
        }
      : {}),
    ...(deleting ? { deletionTimestamp: '2024-05-01T12:00:00Z' } : {}),
  },
});
const names = (xs: Array<{ metadata: { name: string } }>) => xs.map((x) => x.metadata.name);

describe('claimObjects (ControllerRefManager)', () => {
  it.each([
    {
      name: 'owned and selected: kept',
      o: obj('a', { app: 'web' }, 'set'),
      owner,
      want: { owned: ['a'], adopt: [], release: [] },
    },
    {
      name: 'orphan selected: adopted',
      o: obj('a', { app: 'web' }),
      owner,
      want: { owned: ['a'], adopt: ['a'], release: [] },
    },
    {
      name: 'orphan being deleted: left alone',
      o: obj('a', { app: 'web' }, undefined, true),
      owner,
      want: { owned: [], adopt: [], release: [] },
    },
    {
      name: 'orphan, owner being deleted: left alone',
      o: obj('a', { app: 'web' }),
      owner: deletingOwner,
      want: { owned: [], adopt: [], release: [] },
    },
    {
      name: 'owned and selected, owner being deleted: kept',
      o: obj('a', { app: 'web' }, 'set'),
      owner: deletingOwner,
      want: { owned: ['a'], adopt: [], release: [] },
    },
    {
      name: 'owned, no longer selected: released',
      o: obj('a', { app: 'db' }, 'set'),
      owner,
      want: { owned: [], adopt: [], release: ['a'] },
    },
    {
      name: 'owned, no longer selected, owner being deleted: neither kept nor released',
      o: obj('a', { app: 'db' }, 'set'),
      owner: deletingOwner,
      want: { owned: [], adopt: [], release: [] },
    },
    {
      name: "another controller's: never touched",
      o: obj('a', { app: 'web' }, 'other'),
      owner,
      want: { owned: [], adopt: [], release: [] },
    },
    {
      name: 'orphan of another namespace: never adopted',
      o: obj('a', { app: 'web' }, undefined, false, 'elsewhere'),
      owner,
      want: { owned: [], adopt: [], release: [] },
    },
    {
      name: 'nil selector selects nothing',
      o: obj('a', { app: 'web' }),
      owner: { metadata: owner.metadata, spec: {} },
      want: { owned: [], adopt: [], release: [] },
    },
    {
      name: 'empty selector selects everything',
      o: obj('a', { app: 'web' }),
      owner: { metadata: owner.metadata, spec: { selector: {} } },
      want: { owned: ['a'], adopt: ['a'], release: [] },
    },
    {
      name: 'invalid selector selects nothing',
      o: obj('a', { app: 'web' }),
      owner: { metadata: owner.metadata, spec: { selector: { matchLabels: { 'bad key!': 'x' } } } },
      want: { owned: [], adopt: [], release: [] },
    },
  ])('$name', ({ o, owner: ow, want }) => {
    const d = claimObjects(ow, [o]);
    expect({ owned: names(d.owned), adopt: names(d.adopt), release: names(d.release) }).toEqual(want);
  });

  it('a filter narrows the match: owned non-members are released, orphans not adopted (StatefulSet isMemberOf)', () => {
    const d = claimObjects(
      owner,
      [obj('web-0', { app: 'web' }, 'set'), obj('other', { app: 'web' }, 'set'), obj('stray', { app: 'web' })],
      (o) => o.metadata.name.startsWith('web-'),
    );
    expect({ owned: names(d.owned), adopt: names(d.adopt), release: names(d.release) }).toEqual({
      owned: ['web-0'],
      adopt: [],
      release: ['other'],
    });
  });
});

describe('patches', () => {
  const ref = { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'set' };
  it('adoption makes the owner the controller, blocking its foreground deletion, with the UID as precondition', () => {
    expect(adoptPatch(obj('a', {}), ref)).toEqual({
      metadata: { ownerReferences: [{ ...ref, controller: true, blockOwnerDeletion: true }], uid: 'a' },
    });
  });
  it('release deletes the owner reference by UID, with the UID as precondition', () => {
    expect(releasePatch(obj('a', {}), 'set')).toEqual({
      metadata: { ownerReferences: [{ $patch: 'delete', uid: 'set' }], uid: 'a' },
    });
  });
});

describe('claimAndPatch', () => {
  const ref = {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    name: 'web',
    uid: 'set',
    controller: true,
    blockOwnerDeletion: true,
  };
  const candidates = [
    obj('kept', { app: 'web' }, 'set'),
    obj('orphan', { app: 'web' }),
    obj('gone', { app: 'web' }),
    obj('moved', { app: 'db' }, 'set'),
  ];

  it('patches adoptions and releases; an orphan gone meanwhile is not owned; a re-created or gone object is not released', async () => {
    const calls: string[] = [];
    const owned = await claimAndPatch({
      owner,
      ref,
      candidates,
      patch: async (name) => {
        calls.push(name);
        if (name === 'gone') throw new NotFoundError('gone');
        if (name === 'moved') throw new ConflictError('Precondition failed: UID in precondition');
      },
    });
    expect(calls).toEqual(['orphan', 'gone', 'moved']);
    expect(names(owned)).toEqual(['kept', 'orphan']);
  });

  it('other write errors fail the claim', async () => {
    await expect(
      claimAndPatch({ owner, ref, candidates, patch: async () => Promise.reject(new InternalError('boom')) }),
    ).rejects.toThrow('boom');
  });
});

it('controllerKey names the controller of the given kind only', () => {
  expect(controllerKey(obj('a', {}, 'set'), 'StatefulSet')).toBe('ns/x');
  expect(controllerKey(obj('a', {}, 'set'), 'Job')).toBeUndefined();
  expect(controllerKey(obj('a', {}), 'StatefulSet')).toBeUndefined();
});
