/**
 * The one place that locates files shipped with the package (package.json, lua/, dist/lua/lua-worker.js, build/,
 * prebuilds/). A module's own `import.meta.url` says nothing stable about the package layout: the same code runs from
 * src/<dir>/ (vitest on the TypeScript sources) and from a bundled chunk in dist/ or dist/chunks/ (the built library).
 * So every lookup starts at the package root, found by walking up from this module to the nearest package.json whose
 * `name` is `libpanto`.
 */

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface PackageJson {
  name?: string;
  version?: string;
}

let found: { root: string; pkg: PackageJson } | undefined;

function locate(): { root: string; pkg: PackageJson } {
  if (found) return found;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as PackageJson;
      if (pkg.name === 'libpanto') {
        found = { root: dir, pkg };
        return found;
      }
    }
    const up = dirname(dir);
    if (up === dir) throw new Error('libpanto package root not found');
    dir = up;
  }
}

/**
 * The absolute path of the libpanto package root (the directory of its package.json). Read once, then cached.
 * Throws a plain Error when no ancestor directory holds libpanto's package.json (a broken install).
 */
export function packageRoot(): string {
  return locate().root;
}

/** The absolute path of `segments` below the package root, e.g. `packagePath('dist', 'lua', 'lua-worker.js')`. */
export function packagePath(...segments: string[]): string {
  return join(locate().root, ...segments);
}

/** The package's version from its package.json. Throws a plain Error when package.json has no version string. */
export function packageVersion(): string {
  const { version } = locate().pkg;
  if (typeof version !== 'string') throw new Error("libpanto's package.json has no version");
  return version;
}
