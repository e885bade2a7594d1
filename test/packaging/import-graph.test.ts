/**
 * The layout stays as docs/architecture.md draws it: the src/ import graph (static, type-only and dynamic imports, as
 * TypeScript's own pre-processor reads them) has no cycle, and no import runs back up the layers of the doc's
 * `layers` block (a module imports from its own unit or from a lower layer; units on one line never import each
 * other). Every file of src/ belongs to a unit of that block.
 */

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const src = path.join(repo, 'src');

/** The doc's layers, lowest first: each a list of units (`media/` a folder, `tool.ts` a file), relative to src/. */
function layersOfDoc(): string[][] {
  const doc = readFileSync(path.join(repo, 'docs', 'architecture.md'), 'utf8');
  const block = /```layers\n([\s\S]*?)```/.exec(doc)?.[1];
  if (block === undefined) throw new Error('docs/architecture.md has no ```layers block');
  return block
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim())
    .filter((line) => line !== '')
    .map((line) => line.split(/\s+/));
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sourceFiles(p));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** Every file's relative imports (static, `export … from`, `import type`, `import()`), resolved to src/ files. */
function importGraph(): { graph: Map<string, string[]>; unresolved: string[] } {
  const files = sourceFiles(src).map((f) => path.relative(src, f).split(path.sep).join('/'));
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  const unresolved: string[] = [];
  for (const file of files) {
    const text = readFileSync(path.join(src, file), 'utf8');
    const deps: string[] = [];
    for (const ref of ts.preProcessFile(text, true, true).importedFiles) {
      if (!ref.fileName.startsWith('.')) continue;
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), ref.fileName));
      const ts_ = target.replace(/\.js$/, '.ts');
      if (known.has(ts_)) deps.push(ts_);
      else unresolved.push(`${file} imports ${ref.fileName}`);
    }
    graph.set(file, deps);
  }
  return { graph, unresolved };
}

/** The import cycles (strongly connected components of more than one file, or a file importing itself). */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop() as string;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)?.includes(v)) out.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

describe('the src/ import graph', () => {
  const layers = layersOfDoc();
  const { graph, unresolved } = importGraph();
  const units = layers.flat();
  const layerOf = new Map<string, number>();
  layers.forEach((line, i) => {
    for (const unit of line) layerOf.set(unit, i);
  });
  /** The unit a file belongs to: the longest unit that is the file or a folder holding it. */
  const unitOf = (file: string): string | undefined => {
    let best: string | undefined;
    for (const unit of units) {
      const holds = unit.endsWith('/') ? file.startsWith(unit) : file === unit;
      if (holds && (best === undefined || unit.length > best.length)) best = unit;
    }
    return best;
  };

  it('resolves every relative import to a file of src/', () => {
    expect(unresolved).toEqual([]);
  });

  it('has no import cycle', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('places every file in a unit of the docs/architecture.md layers', () => {
    expect([...graph.keys()].filter((f) => unitOf(f) === undefined)).toEqual([]);
  });

  it('has no import that runs back up the layers or across units of one layer', () => {
    const bad: string[] = [];
    for (const [file, deps] of graph) {
      const from = unitOf(file);
      if (from === undefined) continue;
      for (const dep of deps) {
        const to = unitOf(dep);
        if (to === undefined || to === from) continue;
        if ((layerOf.get(to) as number) >= (layerOf.get(from) as number)) bad.push(`${file} -> ${dep}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('sees a cycle and an upward import when there is one (the checks can fail)', () => {
    const probe = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['a.ts']],
      ['c.ts', []],
    ]);
    expect(cycles(probe)).toEqual([['a.ts', 'b.ts']]);
    expect(unitOf('providers/common/safe-string.ts')).toBe('providers/common/');
    expect(layerOf.get('providers/common/') as number).toBeLessThan(layerOf.get('providers/') as number);
  });
});
