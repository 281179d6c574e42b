/** The READMEs stay true to the tree: every folder is in README.md's layout, and each top folder of src/ has its own README. */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/env.js';

const IGNORED = new Set(['node_modules', 'dist', '.git', 'generated']);

function folders(dir: string, depth: number): string[] {
  if (depth === 0) return [];
  return readdirSync(join(ROOT, dir))
    .filter((e) => !IGNORED.has(e) && statSync(join(ROOT, dir, e)).isDirectory())
    .flatMap((e) => {
      const rel = dir === '.' ? e : `${dir}/${e}`;
      return [rel, ...folders(rel, depth - 1)];
    });
}

/** The folders the Layout block of README.md names, as paths (`src/api/patch`). */
function layoutFolders(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const block = /## Layout[\s\S]*?```\n([\s\S]*?)```/.exec(readme)![1]!;
  const out: string[] = [];
  const stack: string[] = [];
  for (const line of block.split('\n')) {
    const m = /^( *)([^\s/]+)\/(?: |$)/.exec(line);
    if (!m) continue;
    const level = m[1]!.length / 2;
    stack.length = level;
    stack.push(m[2]!);
    out.push(stack.join('/'));
  }
  return out;
}

describe('README layout', () => {
  it('names every top-level folder and every folder two levels into src/, and nothing that is gone', () => {
    const tree = [...folders('.', 1).filter((f) => f !== 'src'), ...folders('src', 2)].sort();
    const layout = layoutFolders()
      .filter((f) => f !== 'src')
      .sort();
    expect(layout).toEqual(tree);
  });

  it('has a README in each top-level folder of src/, in test/ and in bench/', () => {
    const missing = [...folders('src', 1), 'test', 'bench'].filter((f) => !existsSync(join(ROOT, f, 'README.md')));
    expect(missing).toEqual([]);
  });
});
