import { describe, expect, it } from 'vitest';
import { finalizersOnDelete, type PropagationOptions } from './gcfinalizers.js';

describe('finalizersOnDelete (kube-apiserver deletionFinalizersForGarbageCollection)', () => {
  it.each<{ name: string; current: string[]; o: PropagationOptions; want: string[] }>([
    { name: 'default policy is background: nothing added', current: [], o: {}, want: [] },
    {
      name: 'Background removes earlier GC finalizers',
      current: ['a', 'orphan'],
      o: { propagationPolicy: 'Background' },
      want: ['a'],
    },
    { name: 'Orphan adds orphan', current: ['a'], o: { propagationPolicy: 'Orphan' }, want: ['a', 'orphan'] },
    {
      name: 'Foreground adds foregroundDeletion',
      current: [],
      o: { propagationPolicy: 'Foreground' },
      want: ['foregroundDeletion'],
    },
    {
      name: 'Foreground replaces orphan',
      current: ['orphan'],
      o: { propagationPolicy: 'Foreground' },
      want: ['foregroundDeletion'],
    },
    {
      name: 'orphanDependents: true adds orphan',
      current: ['foregroundDeletion'],
      o: { orphanDependents: true },
      want: ['orphan'],
    },
    {
      name: 'orphanDependents: false removes both',
      current: ['orphan', 'foregroundDeletion'],
      o: { orphanDependents: false },
      want: [],
    },
    { name: 'no choice keeps an earlier orphan', current: ['orphan'], o: {}, want: ['orphan'] },
    {
      name: 'no choice keeps an earlier foreground',
      current: ['x', 'foregroundDeletion'],
      o: {},
      want: ['x', 'foregroundDeletion'],
    },
  ])('$name', ({ current, o, want }) => expect(finalizersOnDelete(current, o)).toEqual(want));
});
