#!/usr/bin/env node
/**
 * Materialises the addon's third-party C dependencies (nothing third-party is committed to this repo).
 *
 * Contract:
 * - Fetches the pinned Debian packages below through a PRIVATE apt configuration (the system's apt setup is never
 *   touched): the archive URI is read at run time from the machine's own apt sources, so no registry host name lives
 *   in this repo. Each .deb's sha256 must equal the pinned value, else the script fails and extracts nothing.
 * - Extracts headers into `cdeps/.deps/include/` and static libraries into `cdeps/.deps/lib/` (git-ignored), then writes
 *   `cdeps/.deps/STAMP` naming the pinned hashes. Idempotent: when the stamp matches the pins, it does nothing.
 * - `PANTO_CDEPS_DIR=/path` skips fetching: the build uses `/path/include` (stb/stb_image.h, stb/stb_image_write.h,
 *   stb/stb_image_resize2.h, webp/*.h, libdeflate.h) and `/path/lib` (libwebp.a, libwebpdemux.a, libdeflate.a; PIC).
 *
 * Usage (stdout carries only the requested value, so build files can capture it; logs go to stderr):
 *   node scripts/fetch-cdeps.mjs                  fetch (if needed) and report
 *   node scripts/fetch-cdeps.mjs --print-include  fetch if needed, print the include directory
 *   node scripts/fetch-cdeps.mjs --print-libs     fetch if needed, print the static libraries (space separated)
 *   node scripts/fetch-cdeps.mjs --print-dir      fetch if needed, print the deps root (has include/ and lib/)
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DEPS = join(ROOT, 'cdeps', '.deps');
const ENV_VAR = 'PANTO_CDEPS_DIR';

/** Debian architecture per Node `process.arch` (pins below exist for these only). */
const DEB_ARCH = { x64: 'amd64' };

/**
 * Pinned packages. stb from trixie (stb_image 2.30 with the 2.28+ fuzzing fixes, stb_image_write 1.16,
 * stb_image_resize2 2.12); libwebp 1.2.4 with the CVE-2023-4863 fix and libdeflate from bookworm (their .a are PIC).
 */
const PINS = {
  amd64: [
    {
      name: 'libstb-dev',
      version: '0.0~git20241109.5c20573+ds-1',
      suite: 'trixie',
      sha256: '36fbe0c268c76daa655180ea3c9933afc41c6449ec5e53ef3d4907b516147650',
    },
    {
      name: 'libwebp-dev',
      version: '1.2.4-0.2+deb12u1',
      suite: 'bookworm',
      sha256: 'a9d07a8423e462babc947dd5745875a58c450fd5ca5c4493dbabe17387f97d89',
    },
    {
      name: 'libdeflate-dev',
      version: '1.14-1',
      suite: 'bookworm',
      sha256: '8b3fd9dc5a942a8b4bf4f91e618575842a4e9112970eebfed3c4d8bfb40b1ef5',
    },
  ],
};

/** Files taken from the packages: headers (relative to usr/include) and static libraries (by file name). */
const HEADERS = [
  'stb/stb_image.h',
  'stb/stb_image_write.h',
  'stb/stb_image_resize2.h',
  'webp',
  'libdeflate.h',
];
const LIBS = ['libwebpdemux.a', 'libwebp.a', 'libdeflate.a'];

const log = (msg) => process.stderr.write(`fetch-cdeps: ${msg}\n`);

function fail(msg) {
  process.stderr.write(
    `fetch-cdeps: ${msg}\n` +
      `fetch-cdeps: to build without apt, set ${ENV_VAR}=/path where /path/include holds stb/stb_image.h, ` +
      `stb/stb_image_write.h, stb/stb_image_resize2.h (stb_image >= 2.30), webp/*.h and libdeflate.h, and /path/lib ` +
      `holds PIC static ${LIBS.join(', ')}.\n`,
  );
  process.exit(1);
}

/** Our patches to stb (`cdeps/patches/stb/*.patch`, unified diffs against the stb tree, applied in name order). */
const STB_PATCHES = join(ROOT, 'cdeps', 'patches', 'stb');
function stbPatches() {
  if (!existsSync(STB_PATCHES)) return [];
  return readdirSync(STB_PATCHES)
    .filter((f) => f.endsWith('.patch'))
    .sort()
    .map((f) => join(STB_PATCHES, f));
}

function stampText(pins) {
  const patches = stbPatches().map((f) => `patch ${f.slice(ROOT.length + 1)} ${sha256(f)}`);
  return `${[...pins.map((p) => `${p.name} ${p.version} ${p.sha256}`), ...patches].join('\n')}\n`;
}

function checkLayout(dir) {
  const missing = [
    ...HEADERS.map((h) => join(dir, 'include', h)),
    ...LIBS.map((l) => join(dir, 'lib', l)),
  ].filter((p) => !existsSync(p));
  return missing;
}

/** The main Debian archive URI and its keyring, read from the system's apt sources (deb822 or one-line format). */
function systemArchive() {
  const candidates = [];
  const d822 = '/etc/apt/sources.list.d/debian.sources';
  if (existsSync(d822)) {
    for (const stanza of readFileSync(d822, 'utf8').split(/\n\s*\n/)) {
      const field = (k) => stanza.match(new RegExp(`^${k}:\\s*(.+)$`, 'mi'))?.[1]?.trim();
      const uris = field('URIs');
      const suites = field('Suites') ?? '';
      if (!uris || /-security\b/.test(suites) || /^\s*#/.test(uris)) continue;
      candidates.push({ uri: uris.split(/\s+/)[0], signedBy: field('Signed-By') });
    }
  }
  const list = '/etc/apt/sources.list';
  if (candidates.length === 0 && existsSync(list)) {
    for (const line of readFileSync(list, 'utf8').split('\n')) {
      const m = line.match(/^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)/);
      if (m?.[1] && m[2] && !m[2].endsWith('-security')) candidates.push({ uri: m[1], signedBy: undefined });
    }
  }
  return candidates[0];
}

function sha256(file) {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

function fetchDebs(pins, work) {
  const archive = systemArchive();
  if (!archive)
    fail('no Debian archive found in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list');
  const suites = [...new Set(pins.map((p) => p.suite))].join(' ');
  const sources = join(work, 'panto.sources');
  writeFileSync(
    sources,
    `Types: deb\nURIs: ${archive.uri}\nSuites: ${suites}\nComponents: main\n` +
      `Signed-By: ${archive.signedBy ?? '/usr/share/keyrings/debian-archive-keyring.gpg'}\n`,
  );
  for (const d of ['lists/partial', 'cache/archives/partial', 'debs'])
    mkdirSync(join(work, d), { recursive: true });
  const opts = [
    `-o=Dir::Etc::sourcelist=${sources}`,
    '-o=Dir::Etc::sourceparts=-',
    `-o=Dir::State::Lists=${join(work, 'lists')}`,
    `-o=Dir::Cache=${join(work, 'cache')}`,
    '-o=Debug::NoLocking=1',
    '-o=APT::Get::List-Cleanup=0',
  ];
  if (process.getuid?.() === 0) opts.push('-o=APT::Sandbox::User=root');
  const run = (args) => {
    try {
      execFileSync('apt-get', [...opts, ...args], {
        cwd: join(work, 'debs'),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (err) {
      const e = /** @type {{code?: string, stderr?: Buffer}} */ (err);
      if (e.code === 'ENOENT') fail('apt-get not found (this recipe needs a Debian-like system)');
      fail(`apt-get ${args[0]} failed: ${e.stderr?.toString().trim() ?? String(err)}`);
    }
  };
  log(`apt-get update (private lists: ${suites})`);
  run(['-q', 'update']);
  log(`apt-get download ${pins.map((p) => `${p.name}=${p.version}`).join(' ')}`);
  run(['-q', 'download', ...pins.map((p) => `${p.name}=${p.version}`)]);
  const files = readdirSync(join(work, 'debs')).filter((f) => f.endsWith('.deb'));
  return pins.map((p) => {
    const file = files.find((f) => f.startsWith(`${p.name}_`));
    if (!file) fail(`apt-get did not download ${p.name}`);
    const path = join(work, 'debs', file);
    const got = sha256(path);
    if (got !== p.sha256) fail(`sha256 mismatch for ${file}: expected ${p.sha256}, got ${got}`);
    return path;
  });
}

function materialise() {
  const env = process.env[ENV_VAR];
  if (env) {
    const dir = resolve(env);
    const missing = checkLayout(dir);
    if (missing.length) fail(`${ENV_VAR}=${env} lacks: ${missing.join(', ')}`);
    return dir;
  }
  const debArch = DEB_ARCH[process.arch];
  const pins = debArch ? PINS[debArch] : undefined;
  if (!pins) fail(`no pinned packages for ${process.platform}/${process.arch}`);
  const stamp = join(DEPS, 'STAMP');
  if (
    existsSync(stamp) &&
    readFileSync(stamp, 'utf8') === stampText(pins) &&
    checkLayout(DEPS).length === 0
  ) {
    return DEPS;
  }
  if (process.platform !== 'linux') fail('fetching needs Debian apt tools');
  const work = mkdtempSync(join(tmpdir(), 'panto-cdeps-'));
  try {
    const debs = fetchDebs(pins, work);
    const extracted = join(work, 'x');
    for (const deb of debs) execFileSync('dpkg-deb', ['-x', deb, extracted]);
    for (const patch of stbPatches()) {
      execFileSync(
        'patch',
        [
          '-p1',
          '--forward',
          '--no-backup-if-mismatch',
          '-d',
          join(extracted, 'usr/include/stb'),
          '-i',
          patch,
        ],
        {
          stdio: ['ignore', 'ignore', 'inherit'],
        },
      );
    }
    // Assemble next to the final folder, then rename into place, so a concurrent build never sees a half-written
    // tree (gyp and CMake may both run this script).
    const staging = `${DEPS}.tmp-${process.pid}`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(join(staging, 'include'), { recursive: true });
    mkdirSync(join(staging, 'lib'), { recursive: true });
    for (const h of HEADERS) {
      cpSync(join(extracted, 'usr/include', h), join(staging, 'include', h), { recursive: true });
    }
    const libDir = readdirSync(join(extracted, 'usr/lib'))
      .map((d) => join(extracted, 'usr/lib', d))
      .find((d) => existsSync(join(d, 'libwebp.a')));
    if (!libDir) fail('libwebp.a not found in the extracted packages');
    for (const l of LIBS) cpSync(join(libDir, l), join(staging, 'lib', l));
    const missing = checkLayout(staging);
    if (missing.length) fail(`extracted packages lack: ${missing.join(', ')}`);
    writeFileSync(join(staging, 'STAMP'), stampText(pins));
    if (
      existsSync(stamp) &&
      readFileSync(stamp, 'utf8') === stampText(pins) &&
      checkLayout(DEPS).length === 0
    ) {
      rmSync(staging, { recursive: true, force: true }); // another run finished first
    } else {
      rmSync(DEPS, { recursive: true, force: true });
      renameSync(staging, DEPS);
    }
    log(`extracted into ${DEPS}`);
    return DEPS;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const dir = materialise();
const arg = process.argv[2];
if (arg === '--print-include') process.stdout.write(`${join(dir, 'include')}\n`);
else if (arg === '--print-libs') process.stdout.write(`${LIBS.map((l) => join(dir, 'lib', l)).join(' ')}\n`);
else if (arg === '--print-dir') process.stdout.write(`${dir}\n`);
else if (arg !== undefined) fail(`unknown argument ${arg}`);
else log(`ready: ${dir}`);
