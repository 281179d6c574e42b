/** What the integration tests need from the machine, decided once: a build, root, kubectl. */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BIN = join(ROOT, 'bin', 'stowage');
/** `bin/stowage` runs the build (`npm test` builds first). */
export const built = existsSync(join(ROOT, 'dist', 'src', 'cli', 'main.js'));
export const isRoot = process.getuid?.() === 0;
export const hasKubectl = ((): boolean => {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
