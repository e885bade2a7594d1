// The runtime in dist/: a few bundled ES modules instead of one file per source module (Node's ESM loader costs
// ~100 kB of RSS per module; see bench/import.mjs). tsc still emits the per-file .d.ts files next to them
// (tsconfig.build.json, emitDeclarationOnly). `npm run build:ts` runs this first (it empties dist/), then tsc.
//
// - Entries: the two package.json "exports" (libpanto, libpanto/media), the bin, and the Lua worker thread's script
//   (src/lua/worker-backend.ts starts dist/lua/lua-worker.js by path).
// - Code shared by entries lands in shared chunks (dist/chunks/), so `libpanto` and `libpanto/media` hand out the
//   same module instances; our own `import()`s become lazy chunks, still loaded on first use.
// - Every bare specifier (node: builtins, package.json dependencies/optionalDependencies) stays external: loaded from
//   node_modules at run time, lazily where the source imports it lazily. A bare specifier that is neither fails the
//   build (it would be missing from an installed package).
// - Source maps point at src/ (run with --enable-source-maps for stack traces in the TypeScript sources).
// - Paths: bundled code must not locate files relative to its own module; src/package-root.ts does it.

import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { defineConfig } from 'rolldown';

const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));
const runtimeDeps = Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies });

/** `@scope/name/sub/path` -> `@scope/name`, `name/sub` -> `name`. */
const packageName = (id) => id.split('/').slice(0, id.startsWith('@') ? 2 : 1).join('/');

function isExternal(id) {
  if (id.startsWith('.') || id.startsWith('/') || id.startsWith('\0')) return false;
  if (id.startsWith('node:') || builtinModules.includes(id)) return true;
  if (runtimeDeps.includes(packageName(id))) return true;
  throw new Error(`src imports '${id}', which is not in package.json dependencies or optionalDependencies`);
}

export default defineConfig({
  input: {
    index: 'src/index.ts',
    'media/index': 'src/media/index.ts',
    'cli/main': 'src/cli/main.ts',
    'lua/lua-worker': 'src/lua/lua-worker.ts',
  },
  platform: 'node',
  external: isExternal,
  tsconfig: 'tsconfig.build.json',
  output: {
    dir: 'dist',
    cleanDir: true,
    format: 'esm',
    entryFileNames: '[name].js',
    chunkFileNames: 'chunks/[name].js',
    sourcemap: true,
    // As tsc's maps were: paths into src/, no copy of the sources in the package.
    sourcemapExcludeSources: true,
    // No keepNames: it adds a runtime-helper chunk (one more module for every entry) to keep the `name` of the few
    // functions renamed on a collision (e.g. a second module-local `describe`). Error classes set `name` themselves.
    codeSplitting: {
      groups: [
        // The media pipeline and what it imports: the whole of `libpanto/media` in one chunk (measured: one file
        // costs the same RSS as the media entry bundled alone). Everything else shares it (errors.ts lives here).
        { name: 'media', test: /[\\/]src[\\/](media[\\/]|errors\.ts$|package-root\.ts$)/ },
      ],
    },
  },
});
