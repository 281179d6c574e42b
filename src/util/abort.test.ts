import { describe, expect, it } from 'vitest';
import { childAbortController } from './abort.js';

describe('childAbortController', () => {
  it('aborts with its parent, with the parent reason', () => {
    const parent = new AbortController();
    const child = childAbortController(parent.signal);
    expect(child.signal.aborted).toBe(false);
    parent.abort('bye');
    expect(child.signal.aborted).toBe(true);
    expect(child.signal.reason).toBe('bye');
  });

  it('is aborted at once when the parent already is', () => {
    const parent = new AbortController();
    parent.abort('early');
    expect(childAbortController(parent.signal).signal.reason).toBe('early');
  });

  it('can be aborted alone without touching the parent', () => {
    const parent = new AbortController();
    const child = childAbortController(parent.signal);
    child.abort();
    expect(child.signal.aborted).toBe(true);
    expect(parent.signal.aborted).toBe(false);
  });
});

describe('childAbortController detaching', () => {
  it('leaves no listener on the parent once aborted on its own', () => {
    const parent = new AbortController();
    let added = 0;
    let removed = 0;
    const add = parent.signal.addEventListener.bind(parent.signal);
    const remove = parent.signal.removeEventListener.bind(parent.signal);
    parent.signal.addEventListener = ((...a: Parameters<typeof add>) => (added++, add(...a))) as typeof add;
    parent.signal.removeEventListener = ((...a: Parameters<typeof remove>) => (
      removed++,
      remove(...a)
    )) as typeof remove;
    childAbortController(parent.signal).abort();
    expect(added).toBe(1);
    expect(removed).toBe(1);
  });
});
