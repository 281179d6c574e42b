// Node module hooks that let a child process run the TypeScript sources directly (the CLI
// processes spawned by test/csi-registration.test.ts): `.js` specifiers fall back to the `.ts`
// file beside them, and `.ts` files are transpiled with TypeScript's transpileModule.
import { readFile } from 'node:fs/promises';
import ts from 'typescript';

export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (e) {
    if (e?.code === 'ERR_MODULE_NOT_FOUND' && specifier.startsWith('.') && specifier.endsWith('.js')) {
      return next(specifier.slice(0, -3) + '.ts', context);
    }
    throw e;
  }
}

export async function load(url, context, next) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return next(url, context);
  const source = await readFile(new URL(url), 'utf8');
  const out = ts.transpileModule(source, {
    fileName: url,
    compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022, sourceMap: false },
  });
  return { format: 'module', source: out.outputText, shortCircuit: true };
}
