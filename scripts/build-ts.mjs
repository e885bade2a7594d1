#!/usr/bin/env node
// `npm run build:ts`: dist/ from src/ (rolldown bundles the runtime, tsc emits the .d.ts files), the CLI made
// executable, then a stamp of the inputs it was built from (dist/.inputs-sha256, written last: a failed build leaves
// none, and rolldown empties dist/ first).
//
// `--if-stale` (the `prepare` script) builds only when the stamp does not match the inputs. `npx panto` in a checkout
// installs the checkout into npx's cache as a link, which runs `prepare` here again: an unconditional rebuild would
// empty dist/ under whatever uses it meanwhile (tests running beside the README's main command) and cost ~10 s.

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const STAMP = join(root, 'dist', '.inputs-sha256');
const INPUT_FILES = [
  'rolldown.config.mjs',
  'tsconfig.json',
  'tsconfig.build.json',
  'package.json',
  'package-lock.json',
];
const OUTPUTS = ['index.js', 'index.d.ts', 'media/index.js', 'cli/main.js', 'lua/lua-worker.js'];

/** Every file below `dir`, recursively. */
function filesIn(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesIn(join(dir, e.name)) : [join(dir, e.name)],
  );
}

/** sha256 over the inputs' paths and contents, in a fixed order. */
function inputsHash() {
  const files = [...filesIn(join(root, 'src')), ...INPUT_FILES.map((f) => join(root, f)).filter(existsSync)];
  const h = createHash('sha256');
  for (const f of files.map((f) => relative(root, f).split('\\').join('/')).sort()) {
    h.update(`${f}\0`);
    h.update(readFileSync(join(root, f)));
    h.update('\0');
  }
  return h.digest('hex');
}

/** Run a package's own bin script (its package.json `bin`) with this node: no shell, no PATH lookup. */
function run(pkg, bin, args) {
  const dir = join(root, 'node_modules', pkg);
  const script = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).bin[bin];
  const r = spawnSync(process.execPath, [join(dir, script), ...args], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const hash = inputsHash();
if (process.argv.includes('--if-stale')) {
  const current =
    existsSync(STAMP) &&
    readFileSync(STAMP, 'utf8').trim() === hash &&
    OUTPUTS.every((f) => existsSync(join(root, 'dist', f)));
  if (current) {
    console.log('build:ts: dist/ is current (its inputs are unchanged): not rebuilt');
    process.exit(0);
  }
}
run('rolldown', 'rolldown', ['-c', 'rolldown.config.mjs']);
run('typescript', 'tsc', ['-p', 'tsconfig.build.json']);
chmodSync(join(root, 'dist', 'cli', 'main.js'), 0o755);
writeFileSync(STAMP, `${hash}\n`);
