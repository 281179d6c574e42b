import { describe, expect, it } from 'vitest';
import { EXPECTATIONS_TIMEOUT_MS, newExpectations } from './expectations.js';

describe('expectations', () => {
  it('hold the owner until every creation and deletion is observed', () => {
    const e = newExpectations();
    e.expect('ns/rs', 2, ['ns/p1'], 0);
    expect(e.satisfied('ns/rs', 1)).toBe(false);
    e.creationObserved('ns/rs');
    e.creationFailed('ns/rs'); // a failed create will never be seen
    expect(e.satisfied('ns/rs', 1)).toBe(false);
    e.deletionObserved('ns/rs', 'ns/p1');
    expect(e.satisfied('ns/rs', 1)).toBe(true);
  });

  it('expire after kube’s five minutes, and are forgotten with their owner', () => {
    const e = newExpectations();
    e.expect('ns/rs', 1, [], 0);
    expect(e.satisfied('ns/rs', EXPECTATIONS_TIMEOUT_MS)).toBe(false);
    expect(e.satisfied('ns/rs', EXPECTATIONS_TIMEOUT_MS + 1)).toBe(true);
    e.expect('ns/other', 1, [], 0);
    e.forget('ns/other');
    expect(e.satisfied('ns/other', 0)).toBe(true);
  });
});
