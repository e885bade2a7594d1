#!/usr/bin/env node
/**
 * Materialises the SOURCES of the addon's third-party C libraries (nothing third-party is committed to this repo).
 *
 * Contract:
 * - The one source of truth is the pinned Debian source packages in `PACKAGES` below: each package's `.dsc`,
 *   `.orig.tar.*` and `.debian.tar.xz` have a pinned sha256. They are downloaded with `apt-get source --download-only`
 *   through a PRIVATE apt configuration (a deb-src list in a temp dir; the system's apt setup is never touched; the
 *   archive URI is read at run time from the machine's own apt sources, so no registry host name lives in this repo)
 *   into the git-ignored `cdeps/.cache/`. A file whose sha256 differs from its pin is deleted and the script fails
 *   without extracting anything.
 * - Extraction is what `dpkg-source -x` does for a "3.0 (quilt)" package, done with `tar` and `patch` so that it runs
 *   on any POSIX system: the orig tarball (top folder stripped), the debian tarball on top, then every patch named in
 *   `debian/patches/series` in order (`patch -p1`, Debian's security fixes such as libwebp's CVE-2023-4863). Then OUR
 *   patches: every `cdeps/patches/<key>/*.patch` in file-name order, also `patch -p1` from the package's source root.
 *   Only the files the build needs (`keep`) are copied into `cdeps/src/<key>/`, plus Debian's copyright file.
 * - `cdeps/src/STAMP` records the recipe: pins, patch series and the sha256 of each of our patch files. When the stamp
 *   matches, nothing is fetched or extracted (this is the case inside the published npm tarball, which carries
 *   `cdeps/src` and `cdeps/patches`, so `npm install` builds from source with only a C/C++ compiler: no apt, no
 *   network). A stale or missing `cdeps/src` is rebuilt from `cdeps/.cache` when the archives are there (offline),
 *   else fetched first (needs apt-get, i.e. a Debian-like machine).
 * - The final folder is assembled next to `cdeps/src` and renamed into place, so a concurrent build (gyp and CMake
 *   may both run this) never sees a half-written tree.
 * - `PANTO_CDEPS_SRC=/path` uses an already extracted tree with the same layout (validated; nothing is fetched).
 *
 * Usage (stdout carries only the requested value, so build files can capture it; logs go to stderr):
 *   node scripts/fetch-cdeps.mjs               fetch/extract if needed and report
 *   node scripts/fetch-cdeps.mjs --print-src   fetch/extract if needed, print the sources root (cdeps/src)
 *   node scripts/fetch-cdeps.mjs --check       exit 0 when cdeps/src is current, 1 (naming why) otherwise; never fetches
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
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CDEPS = join(ROOT, 'cdeps');
const SRC = join(CDEPS, 'src');
const CACHE = join(CDEPS, '.cache');
const PATCHES = join(CDEPS, 'patches');
const ENV_VAR = 'PANTO_CDEPS_SRC';
/** Bump when the extraction itself changes (a different `keep`, a new step), so old trees are rebuilt. */
const RECIPE = 3;

/**
 * Pinned Debian source packages. `key` names the folder under cdeps/src/ and cdeps/patches/. `keep` lists what the
 * build reads (relative to the package's source root). libwebp 1.2.4 and libdeflate 1.14 from bookworm (libwebp
 * with Debian's CVE-2023-4863 fix); stb from trixie (stb_image 2.30, stb_image_write 1.16, stb_image_resize2 2.12); libjpeg-turbo 2.1.5
 * from bookworm. A package may have `generate(dir)`: run on the copied tree (e.g. config headers from templates).
 */
const PACKAGES = [
  {
    key: 'libwebp',
    source: 'libwebp',
    version: '1.2.4-0.2+deb12u1',
    suite: 'bookworm',
    files: {
      'libwebp_1.2.4-0.2+deb12u1.dsc': 'd9ed0b59e2010f255c28d0869fd15b31f9b08aed757bfc91862d43aa9ec1aa99',
      'libwebp_1.2.4.orig.tar.gz': '7bf5a8a28cc69bcfa8cb214f2c3095703c6b73ac5fba4d5480c205331d9494df',
      'libwebp_1.2.4-0.2+deb12u1.debian.tar.xz':
        '69cdba4dfe2e1b34d55fa80c1b29c31cacd40dd183812d6bcca7e508a2f7afcd',
    },
    keep: [
      'src/dec',
      'src/demux',
      'src/dsp',
      'src/enc',
      'src/utils',
      'src/webp',
      'sharpyuv',
      'COPYING',
      'PATENTS',
      'AUTHORS',
    ],
  },
  {
    key: 'libdeflate',
    source: 'libdeflate',
    version: '1.14-1',
    suite: 'bookworm',
    files: {
      'libdeflate_1.14-1.dsc': '1f82791c5ac5623ed110e09cc991471deebfe4c419414392d1242e122c6f4c19',
      'libdeflate_1.14.orig.tar.gz': '89e7df898c37c3427b0f39aadcf733731321a278771d20fc553f92da8d4808ac',
      'libdeflate_1.14-1.debian.tar.xz': '4794c379cc4e77eaeb283620bd80a7ce57b858af508f80ba6d5efbc4bcb10434',
    },
    keep: ['lib', 'libdeflate.h', 'common_defs.h', 'COPYING'],
  },
  {
    key: 'stb',
    source: 'libstb',
    version: '0.0~git20241109.5c20573+ds-1',
    suite: 'trixie',
    files: {
      'libstb_0.0~git20241109.5c20573+ds-1.dsc':
        '4c6d2106dfb27c28550b5c4350e73253a8d538bc355102b6e330ee5dfd2d771c',
      'libstb_0.0~git20241109.5c20573+ds.orig.tar.xz':
        'a3a5820445a7dd063516bb542a5cd54ced8efc9c5a30bfbaae1bab6dec2c1a74',
      'libstb_0.0~git20241109.5c20573+ds-1.debian.tar.xz':
        '28b47defe66c67a121f2bcd8b73c662a6369d6006d007f54b8608b32f97292b9',
    },
    keep: ['stb_image.h', 'stb_image_write.h', 'stb_image_resize2.h', 'LICENSE'],
  },
  // zlib 1.2.13 from bookworm: only its streaming INFLATE (PNG decoding row by row, native/core/png-decode.cpp);
  // deflate stays with libdeflate. The epoch (1:) is part of the apt version, not of the file names.
  {
    key: 'zlib',
    source: 'zlib',
    version: '1:1.2.13.dfsg-1',
    suite: 'bookworm',
    files: {
      'zlib_1.2.13.dfsg-1.dsc': '3fa1e6b2fc525062aa88207dda52fed8e045373c809d362fe8a2bfbf7cf515a8',
      'zlib_1.2.13.dfsg.orig.tar.bz2': '71feb7947e3c00ef125f83b79a4e529bde31171e5babe48b391f06758d1ab0a1',
      'zlib_1.2.13.dfsg-1.debian.tar.xz': 'f66cf3d4f2d7defcd4d1fd1fb0a11ee39f1e01b42ec7d059c9dc5c1695133c44',
    },
    keep: [
      'zlib.h',
      'zconf.h',
      'zutil.h',
      'zutil.c',
      'adler32.c',
      'crc32.c',
      'crc32.h',
      'inflate.c',
      'inflate.h',
      'inffast.c',
      'inffast.h',
      'inffixed.h',
      'inftrees.c',
      'inftrees.h',
      'README',
    ],
  },
  {
    key: 'libjpeg-turbo',
    source: 'libjpeg-turbo',
    version: '1:2.1.5-2',
    suite: 'bookworm',
    files: {
      'libjpeg-turbo_2.1.5-2.dsc': 'd718ead0dfbcbc8523665c02a7f7152e31039ded641d022868722623bb3b486d',
      'libjpeg-turbo_2.1.5.orig.tar.gz': '254f3642b04e309fee775123133c6464181addc150499561020312ec61c1bf7c',
      'libjpeg-turbo_2.1.5-2.debian.tar.xz':
        'cdb2433c2f7101345c1ffa14efb943787c675b86354691a32490845fe4bc9237',
    },
    // The library's C files (upstream's JPEG_SOURCES less jmemnobs.c: native/core/jpeg-memory.cpp is our memory
    // back end), the headers they include, the SIMD folders (x86-64 NASM, arm NEON intrinsics) and the config
    // templates that `generate` below turns into headers.
    keep: [
      ...'jcapimin jcapistd jccoefct jccolor jcdctmgr jchuff jcicc jcinit jcmainct jcmarker jcmaster jcomapi jcparam jcphuff jcprepct jcsample jctrans jdapimin jdapistd jdatadst jdatasrc jdcoefct jdcolor jddctmgr jdhuff jdicc jdinput jdmainct jdmarker jdmaster jdmerge jdphuff jdpostct jdsample jdtrans jerror jfdctflt jfdctfst jfdctint jidctflt jidctfst jidctint jidctred jquant1 jquant2 jutils jmemmgr jaricom jcarith jdarith jsimd_none'
        .split(' ')
        .map((f) => `${f}.c`),
      ...'jccolext jdcolext jdcol565 jdmrgext jdmrg565 jstdhuff'.split(' ').map((f) => `${f}.c`),
      ...'jchuff jdcoefct jdct jdhuff jdmainct jdmaster jdmerge jdsample jerror jinclude jmemsys jmorecfg jpeg_nbits_table jpegcomp jpegint jpeglib jsimd jsimddct'
        .split(' ')
        .map((f) => `${f}.h`),
      'jconfig.h.in',
      'jconfigint.h.in',
      'jversion.h.in',
      'simd/jsimd.h',
      'simd/nasm',
      'simd/x86_64',
      'simd/arm/align.h',
      'simd/arm/jchuff.h',
      'simd/arm/neon-compat.h.in',
      ...'jccolor jcgray jcgryext jcphuff jcsample jdcolext jdcolor jdmerge jdmrgext jdsample jfdctfst jfdctint jidctfst jidctint jidctred jquanti'
        .split(' ')
        .map((f) => `simd/arm/${f}-neon.c`),
      'simd/arm/aarch64/jccolext-neon.c',
      'simd/arm/aarch64/jchuff-neon.c',
      'simd/arm/aarch64/jsimd.c',
      'LICENSE.md',
      'README.ijg',
    ],
    generate: generateJpegTurboConfig,
  },
];

/**
 * libjpeg-turbo's CMake build generates jconfig.h, jconfigint.h, jversion.h and simd/arm/neon-compat.h from `.in`
 * templates. We do the same here from the pinned templates (so no third-party text lives in our repo), choosing the
 * configuration our build uses: 8-bit samples, arithmetic coding on, in-memory source/destination on, libjpeg v6b
 * API (upstream's default). What depends on the target (size_t width, builtins, inline and thread-local keywords) is
 * written as preprocessor tests, so one tree serves every target. WITH_SIMD is NOT set here: the build files define
 * it on the targets that compile the SIMD sources (it changes jmemmgr's alignment and jchuff's code paths).
 */
function generateJpegTurboConfig(root) {
  const vars = {
    JPEG_LIB_VERSION: '62',
    VERSION: '2.1.5',
    LIBJPEG_TURBO_VERSION_NUMBER: '2001005',
    BITS_IN_JSAMPLE: '8',
    BUILD: 'panto',
    INLINE: 'PANTO_JPEG_INLINE',
    THREAD_LOCAL: 'PANTO_JPEG_THREAD_LOCAL',
    CMAKE_PROJECT_NAME: 'libjpeg-turbo',
    SIZE_T: 'PANTO_JPEG_SIZEOF_SIZE_T',
    COPYRIGHT_YEAR: '1991-2023',
  };
  const defines = {
    C_ARITH_CODING_SUPPORTED: '#define C_ARITH_CODING_SUPPORTED 1',
    D_ARITH_CODING_SUPPORTED: '#define D_ARITH_CODING_SUPPORTED 1',
    MEM_SRCDST_SUPPORTED: '#define MEM_SRCDST_SUPPORTED 1',
    WITH_SIMD: '/* WITH_SIMD: defined by the build on targets that compile the SIMD sources */',
    RIGHT_SHIFT_IS_UNSIGNED: '/* #undef RIGHT_SHIFT_IS_UNSIGNED */',
    HAVE_BUILTIN_CTZL:
      '#if (defined(__GNUC__) || defined(__clang__)) && __SIZEOF_LONG__ == __SIZEOF_SIZE_T__\n' +
      '#define HAVE_BUILTIN_CTZL\n#endif',
    HAVE_INTRIN_H: '#if defined(_MSC_VER)\n#define HAVE_INTRIN_H\n#endif',
    // GCC before 12 lacks some of these NEON intrinsics; clang (zig) has them all.
    HAVE_VLD1_S16_X3: '#if defined(__clang__) || __GNUC__ >= 12\n#define HAVE_VLD1_S16_X3\n#endif',
    HAVE_VLD1_U16_X2: '#if defined(__clang__) || __GNUC__ >= 12\n#define HAVE_VLD1_U16_X2\n#endif',
    HAVE_VLD1Q_U8_X4: '#if defined(__clang__) || __GNUC__ >= 12\n#define HAVE_VLD1Q_U8_X4\n#endif',
  };
  const prelude =
    '/* Generated by libpanto scripts/fetch-cdeps.mjs from the template of the same name. */\n' +
    '#if defined(_MSC_VER) && !defined(__clang__)\n' +
    '#define PANTO_JPEG_INLINE __forceinline\n#define PANTO_JPEG_THREAD_LOCAL __declspec(thread)\n' +
    '#ifdef _WIN64\n#define PANTO_JPEG_SIZEOF_SIZE_T 8\n#else\n#define PANTO_JPEG_SIZEOF_SIZE_T 4\n#endif\n' +
    '#else\n#define PANTO_JPEG_INLINE __inline__ __attribute__((always_inline))\n' +
    '#define PANTO_JPEG_THREAD_LOCAL __thread\n#define PANTO_JPEG_SIZEOF_SIZE_T __SIZEOF_SIZE_T__\n#endif\n';
  const render = (template, out, withPrelude) => {
    let text = readFileSync(join(root, template), 'utf8');
    text = text.replace(/^#cmakedefine\s+(\w+).*$/gm, (_m, name) => {
      if (!(name in defines)) fail(`libjpeg-turbo: ${template}: no value for #cmakedefine ${name}`);
      return defines[name];
    });
    text = text.replace(/@(\w+)@/g, (_m, name) => {
      if (!(name in vars)) fail(`libjpeg-turbo: ${template}: no value for @${name}@`);
      return vars[name];
    });
    writeFileSync(join(root, out), withPrelude ? `${prelude}${text}` : text);
  };
  render('jconfig.h.in', 'jconfig.h', false);
  render('jconfigint.h.in', 'jconfigint.h', true);
  render('jversion.h.in', 'jversion.h', false);
  render('simd/arm/neon-compat.h.in', 'simd/arm/neon-compat.h', false);
}

const log = (msg) => process.stderr.write(`fetch-cdeps: ${msg}\n`);

/** Thrown for every expected failure; the CLI prints `message` and exits 1. */
class FetchError extends Error {}
const fail = (msg) => {
  throw new FetchError(msg);
};

const sha256 = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');

/** Our patches for one package, in application order: `cdeps/patches/<key>/*.patch` sorted by file name. */
function ourPatches(key) {
  const dir = join(PATCHES, key);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.patch'))
    .sort()
    .map((f) => join(dir, f));
}

/** The stamp: everything that determines the extracted tree (pins, recipe, our patches' bytes). */
function stampText() {
  const lines = [`recipe ${RECIPE}`];
  for (const p of PACKAGES) {
    lines.push(`${p.key} ${p.source} ${p.version}${p.generate ? ' +generated-config' : ''}`);
    for (const [f, h] of Object.entries(p.files)) lines.push(`  ${h}  ${f}`);
    for (const patch of ourPatches(p.key))
      lines.push(`  patch ${sha256(patch)}  ${patch.slice(CDEPS.length + 1)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Paths missing from a sources root (what the build needs), empty when complete. */
function missingIn(dir) {
  return PACKAGES.flatMap((p) => p.keep.map((k) => join(dir, p.key, k))).filter((f) => !existsSync(f));
}

/** Why `cdeps/src` is not current, or undefined when it is. */
function staleReason() {
  const stamp = join(SRC, 'STAMP');
  if (!existsSync(stamp)) return `${SRC} has not been extracted yet`;
  if (readFileSync(stamp, 'utf8') !== stampText()) return `${stamp} differs from the pins and patches`;
  const missing = missingIn(SRC);
  if (missing.length) return `${SRC} lacks ${missing.join(', ')}`;
  return undefined;
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
      const m = line.match(/^\s*deb(?:-src)?\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)/);
      if (m?.[1] && m[2] && !m[2].endsWith('-security')) candidates.push({ uri: m[1], signedBy: undefined });
    }
  }
  return candidates[0];
}

/** Pinned files that are not in the cache with the right hash. Wrong-hash files are deleted. */
function missingArchives() {
  const missing = [];
  for (const p of PACKAGES) {
    for (const [f, want] of Object.entries(p.files)) {
      const path = join(CACHE, f);
      if (existsSync(path) && sha256(path) === want) continue;
      missing.push(p);
      break;
    }
  }
  return missing;
}

/** Downloads the source packages into cdeps/.cache with a private apt configuration, then checks every pin. */
function download(pkgs) {
  const archive = systemArchive();
  if (!archive)
    fail(
      'no Debian archive found in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list ' +
        '(fetching the C sources needs a Debian-like machine; the npm tarball already carries them)',
    );
  const work = mkdtempSync(join(tmpdir(), 'panto-cdeps-apt-'));
  try {
    const suites = [...new Set(pkgs.map((p) => p.suite))].join(' ');
    const sources = join(work, 'panto.sources');
    writeFileSync(
      sources,
      `Types: deb-src\nURIs: ${archive.uri}\nSuites: ${suites}\nComponents: main\n` +
        `Signed-By: ${archive.signedBy ?? '/usr/share/keyrings/debian-archive-keyring.gpg'}\n`,
    );
    for (const d of ['lists/partial', 'cache/archives/partial'])
      mkdirSync(join(work, d), { recursive: true });
    mkdirSync(CACHE, { recursive: true });
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
        execFileSync('apt-get', [...opts, ...args], { cwd: CACHE, stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (err) {
        const e = /** @type {{code?: string, stderr?: Buffer}} */ (err);
        if (e.code === 'ENOENT')
          fail(
            'apt-get not found: fetching the C sources needs a Debian-like machine (the npm tarball carries them)',
          );
        fail(`apt-get ${args[1]} failed: ${e.stderr?.toString().trim() ?? String(err)}`);
      }
    };
    log(`apt-get update (private deb-src lists: ${suites})`);
    run(['-q', 'update']);
    const wanted = pkgs.map((p) => `${p.source}=${p.version}`);
    log(`apt-get source --download-only ${wanted.join(' ')}`);
    run(['-q', 'source', '--download-only', ...wanted]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  for (const p of pkgs) {
    for (const [f, want] of Object.entries(p.files)) {
      const path = join(CACHE, f);
      if (!existsSync(path)) fail(`apt-get did not download ${f}`);
      const got = sha256(path);
      if (got !== want) {
        rmSync(path);
        fail(`sha256 mismatch for ${f}: expected ${want}, got ${got} (file deleted)`);
      }
    }
  }
}

function tool(cmd, args, cwd) {
  try {
    return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = /** @type {{code?: string, stdout?: string, stderr?: string}} */ (err);
    if (e.code === 'ENOENT') fail(`${cmd} not found (extracting the C sources needs tar, xz and patch)`);
    fail(`${cmd} ${args.join(' ')} failed in ${cwd}:\n${`${e.stdout ?? ''}${e.stderr ?? ''}`.trim()}`);
  }
}

/** Applies one patch with `patch -p<level>` in `tree`; fails naming the patch when a hunk does not apply. */
function applyPatch(tree, patchFile, level = 1) {
  tool(
    'patch',
    [`-p${level}`, '--forward', '--batch', '--no-backup-if-mismatch', '-s', '-i', patchFile],
    tree,
  );
}

/** Extracts one package like `dpkg-source -x` (3.0 quilt), applies our patches, copies `keep` into `dest`. */
function extractPackage(p, work, dest) {
  const find = (re) => {
    const f = Object.keys(p.files).find((n) => re.test(n));
    if (!f) fail(`${p.key}: no file matching ${re} among the pins`);
    return join(CACHE, f);
  };
  // Re-check the hashes right before use: the cache may have been touched since the download.
  for (const [f, want] of Object.entries(p.files)) {
    const got = sha256(join(CACHE, f));
    if (got !== want) fail(`sha256 mismatch for ${f}: expected ${want}, got ${got}`);
  }
  const tree = join(work, p.key);
  mkdirSync(tree, { recursive: true });
  tool('tar', ['-xf', find(/\.orig\.tar\.[a-z0-9]+$/), '-C', tree, '--strip-components=1'], work);
  tool('tar', ['-xf', find(/\.debian\.tar\.[a-z0-9]+$/), '-C', tree], work);
  const format = readFileSync(join(tree, 'debian/source/format'), 'utf8').trim();
  if (format !== '3.0 (quilt)') fail(`${p.key}: unsupported Debian source format "${format}"`);
  const series = join(tree, 'debian/patches/series');
  const applied = [];
  if (existsSync(series)) {
    for (const raw of readFileSync(series, 'utf8').split('\n')) {
      const line = raw.replace(/(^|\s)#.*$/, '').trim();
      if (!line) continue;
      const [name, opt] = line.split(/\s+/);
      const level = opt?.startsWith('-p') ? Number(opt.slice(2)) : 1;
      applyPatch(tree, join(tree, 'debian/patches', name), level);
      applied.push(name);
    }
  }
  for (const patch of ourPatches(p.key)) {
    applyPatch(tree, patch);
    applied.push(`cdeps/patches/${p.key}/${patch.slice(patch.lastIndexOf('/') + 1)}`);
  }
  const out = join(dest, p.key);
  for (const k of p.keep) {
    const from = join(tree, k);
    if (!existsSync(from)) fail(`${p.key}: ${k} is not in the extracted source`);
    cpSync(from, join(out, k), { recursive: true });
  }
  cpSync(join(tree, 'debian/copyright'), join(out, 'debian-copyright'));
  p.generate?.(out);
  log(
    `${p.key} ${p.version}: extracted, ${applied.length} patches applied (${applied.join(', ') || 'none'})`,
  );
}

/** Brings cdeps/src up to date (fetching only when the cache lacks a pinned archive) and returns its path. */
function materialise() {
  const env = process.env[ENV_VAR];
  if (env) {
    const dir = resolve(env);
    const missing = missingIn(dir);
    if (missing.length) fail(`${ENV_VAR}=${env} lacks: ${missing.join(', ')}`);
    return dir;
  }
  const reason = staleReason();
  if (!reason) return SRC;
  log(reason);
  const toFetch = missingArchives();
  if (toFetch.length) download(toFetch);
  const work = mkdtempSync(join(tmpdir(), 'panto-cdeps-x-'));
  const staging = `${SRC}.tmp-${process.pid}`;
  try {
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true });
    for (const p of PACKAGES) extractPackage(p, work, staging);
    const missing = missingIn(staging);
    if (missing.length) fail(`extraction lacks: ${missing.join(', ')}`);
    writeFileSync(join(staging, 'STAMP'), stampText());
    if (staleReason() === undefined) {
      rmSync(staging, { recursive: true, force: true }); // another run finished first
    } else {
      rmSync(SRC, { recursive: true, force: true });
      renameSync(staging, SRC);
    }
    log(`sources ready in ${SRC}`);
    return SRC;
  } finally {
    rmSync(work, { recursive: true, force: true });
    rmSync(staging, { recursive: true, force: true });
  }
}

/** Total bytes under a folder (for the report). */
function du(dir) {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    n += e.isDirectory() ? du(p) : statSync(p).size;
  }
  return n;
}

try {
  const arg = process.argv[2];
  if (arg === '--check') {
    const reason = process.env[ENV_VAR] ? undefined : staleReason();
    if (reason) {
      process.stderr.write(`fetch-cdeps: not current: ${reason}\n`);
      process.exit(1);
    }
  } else if (arg === '--print-src') {
    process.stdout.write(`${materialise()}\n`);
  } else if (arg === undefined) {
    const dir = materialise();
    log(`ready: ${dir} (${(du(dir) / 1024).toFixed(0)} KiB)`);
  } else {
    fail(`unknown argument ${arg} (use --print-src or --check)`);
  }
} catch (err) {
  if (!(err instanceof FetchError)) throw err;
  process.stderr.write(
    `fetch-cdeps: ${err.message}\n` +
      `fetch-cdeps: the C sources come from pinned Debian source packages (see cdeps/README.md); without apt, ` +
      `set ${ENV_VAR}=/path to a tree laid out like cdeps/src (libwebp/, libdeflate/, stb/, zlib/, libjpeg-turbo/).\n`,
  );
  process.exit(1);
}
