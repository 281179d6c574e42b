import { describe, expect, it } from 'vitest';
import { parseTokenAuthFile } from './tokenfile.js';

describe('--token-auth-file', () => {
  it('reads token,user,uid and a quoted group list; skips blanks and comments', () => {
    const m = parseTokenAuthFile('# admins\nt1,alice,1,"system:masters,dev"\n\nt2,bob,2\nt3,carol,3,ops\n');
    expect([...m]).toEqual([
      ['t1', { name: 'alice', groups: ['system:masters', 'dev'] }],
      ['t2', { name: 'bob', groups: [] }],
      ['t3', { name: 'carol', groups: ['ops'] }],
    ]);
  });

  it.each([
    ['t1,alice', /line 1: want token,user,uid/],
    ['ok,a,1\n,bob,2', /line 2: empty token/],
    ['t1,alice,1,"dev', /line 1: unterminated quote/],
  ])('refuses %j', (text, err) => {
    expect(() => parseTokenAuthFile(text)).toThrow(err);
  });
});
