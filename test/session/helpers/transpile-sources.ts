/**
 * Transpile the session and compaction sources (and what they import) to plain ESM JavaScript in `outDir`, so a
 * spawned `node` child can run the real code without a build step. Returns the path of `session/index.js`.
 */

import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const SRC = join(dirname(fileURLToPath(import.meta.url)), '../../../src');

function sourceFiles(): string[] {
  const files = [
    'conversation.ts',
    'errors.ts',
    'media/stored-media.ts',
    'package-root.ts',
    'regular-file.ts',
    'tool.ts',
  ].map((f) => join(SRC, f));
  for (const dir of ['session', 'compaction']) {
    for (const f of readdirSync(join(SRC, dir))) if (f.endsWith('.ts')) files.push(join(SRC, dir, f));
  }
  return files;
}

export function transpileSources(outDir: string): { session: string; compaction: string } {
  for (const file of sourceFiles()) {
    const out = join(outDir, relative(SRC, file)).replace(/\.ts$/, '.js');
    const { outputText } = ts.transpileModule(readFileSync(file, 'utf8'), {
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        verbatimModuleSyntax: true,
      },
    });
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, outputText);
  }
  writeFileSync(join(outDir, 'package.json'), '{"type":"module"}\n');
  return { session: join(outDir, 'session/index.js'), compaction: join(outDir, 'compaction/index.js') };
}
