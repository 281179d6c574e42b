import { describe, expect, it } from 'vitest';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { EXPECTATIONS_TIMEOUT_MS, newExpectations } from './expectations.js';

const pod = (name: string, deleting = false): Pod => ({
  metadata: { name, uid: `uid-${name}`, ...(deleting ? { deletionTimestamp: '2024-05-01T12:00:00Z' } : {}) },
});

describe('expectations', () => {
  it('wait until the cache shows the pods created and the deletions', () => {
    const e = newExpectations();
    expect(e.satisfied('ns/web', [], 0)).toBe(true);
    e.expect('ns/web', { created: ['web-1'], deleted: ['uid-web-2'] }, 0);
    expect(e.satisfied('ns/web', [pod('web-2')], 1)).toBe(false);
    expect(e.satisfied('ns/web', [pod('web-1'), pod('web-2')], 1)).toBe(false);
    expect(e.satisfied('ns/web', [pod('web-1'), pod('web-2', true)], 1)).toBe(true);
    expect(e.satisfied('ns/web', [], 1)).toBe(true); // forgotten once met
  });

  it('hold the owner until every creation and deletion recorded is seen, across several records', () => {
    const e = newExpectations();
    e.expect('ns/rs', { created: ['p-a'] }, 0); // a second creation failed: never recorded, never waited for
    e.expect('ns/rs', { deleted: ['uid-p1'] }, 0);
    expect(e.satisfied('ns/rs', [pod('p1')], 1)).toBe(false);
    expect(e.satisfied('ns/rs', [pod('p-a'), pod('p1')], 1)).toBe(false);
    expect(e.satisfied('ns/rs', [pod('p-a')], 1)).toBe(true); // p1 gone from the cache
  });

  it('give up after the timeout, and are forgotten with their owner', () => {
    const e = newExpectations();
    e.expect('k', { created: ['never'] }, 0);
    expect(e.satisfied('k', [], EXPECTATIONS_TIMEOUT_MS)).toBe(false);
    expect(e.satisfied('k', [], EXPECTATIONS_TIMEOUT_MS + 1)).toBe(true);
    e.expect('ns/other', { created: ['never'] }, 0);
    e.forget('ns/other');
    expect(e.satisfied('ns/other', [], 0)).toBe(true);
  });
});
