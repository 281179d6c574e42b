/** What the host has mounted, for tests that check their mounts are gone. */
import { readFileSync } from 'node:fs';

/** Mount points at or below `dir` (mountinfo's fifth field). */
export function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((m) => m.startsWith(dir));
}
