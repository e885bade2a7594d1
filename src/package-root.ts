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
import { PantoError } from './errors.js';

interface PackageJson {
  name?: string;
  version?: string;
}

let found: { root: string; pkg: PackageJson } | undefined;

/** The parsed package.json in `dir`, or undefined when there is none or it is not JSON (not ours either way). */
function readPackageJson(dir: string): PackageJson | undefined {
  const file = join(dir, 'package.json');
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as PackageJson;
  } catch {
    return undefined;
  }
}

function locate(): { root: string; pkg: PackageJson } {
  if (found) return found;
  const start = dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; ) {
    const pkg = readPackageJson(dir);
    if (pkg?.name === 'libpanto') {
      found = { root: dir, pkg };
      return found;
    }
    const up = dirname(dir);
    if (up === dir)
      throw new PantoError(
        'ERR_INTERNAL',
        `libpanto's package.json was not found in ${start} or any directory above it: libpanto must run from its ` +
          'package directory (as npm installs it), not copied into another bundle, because it loads files it ships ' +
          '(the media addon, the Lua tools, the Lua worker script)',
      );
    dir = up;
  }
}

/**
 * The absolute path of the libpanto package root (the directory of its package.json). Read once, then cached.
 * Throws `PantoError` `ERR_INTERNAL` when no ancestor directory holds libpanto's package.json (the code was moved out
 * of its package, e.g. re-bundled). Nothing calls it while the package is imported, only when a feature needs a file.
 */
export function packageRoot(): string {
  return locate().root;
}

/** The absolute path of `segments` below the package root, e.g. `packagePath('dist', 'lua', 'lua-worker.js')`. */
export function packagePath(...segments: string[]): string {
  return join(locate().root, ...segments);
}

/** The package's version from its package.json. Throws `PantoError` `ERR_INTERNAL` as `packageRoot` does, and when
 *  package.json has no version string. */
export function packageVersion(): string {
  const { version } = locate().pkg;
  if (typeof version !== 'string')
    throw new PantoError('ERR_INTERNAL', "libpanto's package.json has no version");
  return version;
}
