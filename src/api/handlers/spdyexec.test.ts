import { describe, expect, it } from 'vitest';
import { expectedStreams } from './spdyexec.js';

describe("client-go's stream order", () => {
  it.each([
    ['stdout=true&stderr=true', ['error', 'stdout', 'stderr']],
    ['stdin=true&stdout=true&stderr=true', ['error', 'stdin', 'stdout', 'stderr']],
    ['stdin=true&stdout=true&stderr=true&tty=true', ['error', 'stdin', 'stdout', 'resize']],
    ['stdout=1', ['error', 'stdout']],
  ])('%s → %j', (q, want) => expect(expectedStreams(new URLSearchParams(q))).toEqual(want));
});
