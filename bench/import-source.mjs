// Imports modules of src/ that the package does not export, for a bench that measures an internal layer (e.g. both
// media backends side by side behind the addon contract). dist/ holds bundles (rolldown.config.mjs), not one file per
// module, so this bundles the given src/ files with rolldown (the package build's externals; shared chunks, so the
// files share module instances) into .bench-tmp/src-modules/ and imports them. Needs the devDependencies.
//
//   const [addon, policy] = await importSource('src/media/native-addon.ts', 'src/media/policy.ts');

import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { rolldown } from 'rolldown';
import config from '../rolldown.config.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(repo, '.bench-tmp', 'src-modules');

/** The namespaces of `files` (paths from the repository root, e.g. `src/media/policy.ts`), in order. */
export async function importSource(...files) {
  const name = (f) => f.replace(/^src\//, '').replace(/\.ts$/, '');
  const bundle = await rolldown({
    input: Object.fromEntries(files.map((f) => [name(f), path.join(repo, f)])),
    cwd: repo,
    platform: config.platform,
    external: config.external,
    tsconfig: path.join(repo, config.tsconfig),
  });
  try {
    await bundle.write({
      dir: out,
      cleanDir: true,
      format: 'esm',
      entryFileNames: '[name].js',
      chunkFileNames: 'chunks/[name].js',
    });
  } finally {
    await bundle.close();
  }
  return Promise.all(files.map((f) => import(pathToFileURL(path.join(out, `${name(f)}.js`)).href)));
}
