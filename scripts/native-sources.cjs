/**
 * The one source list of the native addon, read by binding.gyp (through `node -p`), by CMakeLists.txt (through
 * `node -p`) and by the cross-build scripts (scripts/prebuild-*.mjs). Paths are relative to the repository root
 * unless said otherwise.
 *
 * Shape (CommonJS so gyp and CMake can read it with plain `node`):
 *   core:      string[]  pure C++ core (no napi.h): sniff, probe, decode, orient, resize, encode, metadata strip.
 *                        Builds as a static library (CMake) or straight into the addon (gyp). The ORDER is the link
 *                        order (gyp: binding, core, cdeps, then zlib, libdeflate, libjpeg-turbo, libwebp): what every
 *                        call runs (budget, sniff/probe, metadata, the pipeline) first, then the codecs, so that the
 *                        code a small call touches lies in few pages (the kernel maps code in 64 KiB blocks).
 *   cdeps:     string[]  the C++ translation unit(s) that instantiate third-party header libraries (stb) with our
 *                        configuration; part of the core library.
 *   binding:   string[]  the thin Node-API layer (needs node-addon-api + NAPI_VERSION).
 *   coreIncludeDirs: string[]  include dirs the core needs besides the C deps (repo-relative).
 *   defines:   string[]  preprocessor definitions for core + cdeps + binding + the C libraries.
 *   bindingDefines: string[] extra definitions for the binding only.
 *   cflags:    string[]  C++ compile flags for core + cdeps + binding (GCC/Clang syntax; C++17, -O3, hidden
 *                        visibility, one section per function and data object). MSVC and Xcode equivalents live in
 *                        binding.gyp.
 *   gccCflags: string[]  added to cflags when the compiler is GCC (binding.gyp on Linux/FreeBSD, CMake when GCC;
 *                        clang ignores it with a warning): our string literals NOT in the linker's mergeable
 *                        sections. Merged by GNU ld, "width" became the tail of a libwebp message far from our other
 *                        data and the first call faulted in 128 KB of libwebp's tables for it.
 *   ldflags:   string[]  extra link flags of the addon on every OS (the per-OS ones live in binding.gyp/CMake).
 *   gcSectionsLdflags: { elf: string[], macho: string[] }  the addon's link flags that drop the sections nothing
 *                        references (with the per-section cflags above): ELF (Linux, FreeBSD) and Mach-O (macOS),
 *                        used by binding.gyp, CMakeLists.txt (cmake-js addon) and scripts/prebuild-all.mjs. MSVC's
 *                        /OPT:REF is on by default in Release; zig's COFF link is left as it was.
 *   exportsMap: string    linker version script (ELF): only the two N-API entry points are exported.
 *   exportsList: string   the same for Mach-O (`-exported_symbols_list`).
 *
 *   The C libraries, compiled from the pinned sources in cdeps/src (scripts/fetch-cdeps.mjs extracts them on first
 *   use; the npm tarball ships them). Each function runs that script, which is a no-op when cdeps/src is current:
 *   cdepsSrcDir():          string    the sources root (repo-relative when inside the repo, else absolute).
 *   includeDirs():          string[]  public include dirs of the C deps for core/cdeps (<stb/..>, <webp/..>,
 *                                     <libdeflate.h>).
 *   libwebp.sources():      string[]  libwebp's decoder, encoder, demux and sharpyuv C files, WITHOUT the *_sse41.c
 *   libwebp.sse41Sources(): string[]  the *_sse41.c files: compile with -msse4.1 on x86 (gcc/clang) only; on other
 *                                     targets they compile to nothing. Every libwebp file gets WEBP_HAVE_SSE41 on
 *                                     x86 so the SSE4.1 code is picked at run time by cpuid, as libwebp's own
 *                                     builds do. NEON (aarch64) needs no flag.
 *   libwebp.includeDirs():  string[]  include dirs for compiling libwebp itself.
 *   libwebp.threadDefines:  string[]  definitions for compiling libwebp in every NATIVE build (gyp, CMake, the zig
 *                                     prebuilds): WEBP_USE_THREAD gives libwebp its one helper thread per call
 *                                     (pthreads; the Win32 thread API on Windows, in its own thread_utils.c) and
 *                                     makes its one-time DSP init lock-guarded. NOT in the wasm build (no pthreads):
 *                                     there libwebp runs the same work in turn, with the same output bytes.
 *   libdeflate.sources():   string[]  libdeflate's portable C files (its SIMD paths use per-function target
 *                                     attributes, so no flags are needed), plus per architecture:
 *   libdeflate.x86Sources() / .armSources(): the CPU-feature detection file for x86 / arm (same basename, so a
 *                                     build takes the one for its target; gyp refuses duplicate basenames).
 *   libdeflate.includeDirs(): string[]
 *   zlib.sources():         string[]  zlib's inflate (plus adler32/crc32/zutil), portable C, no per-CPU files; the
 *                                     core includes it as <zlib/zlib.h>. Deflate is libdeflate's job.
 *   zlib.defines:           string[]  definitions for compiling zlib: Z_PREFIX renames its API (z_inflate, ...) so it
 *                                     never meets the host's own zlib (Node exports one); Z_SOLO leaves out file I/O
 *                                     and the default allocator (ours goes through the call's budget).
 *                                     native/core/png-decode.cpp defines both before including zlib.h.
 *   libjpegTurbo.sources():    string[]  libjpeg-turbo's decompressor + compressor C files (no jmemnobs.c: our
 *                                     native/core/jpeg-memory.cpp is the memory back end; no SIMD dispatcher).
 *   libjpegTurbo.noSimdSources(): string[]  jsimd_none.c: the C-only dispatcher (wasm, or x86-64 without nasm).
 *   libjpegTurbo.x64Sources(): string[]  the x86-64 SIMD dispatcher (C); with .x64AsmSources() (NASM, assembled with
 *                                     .nasmFlags(format) for format elf64 | macho64 | win64). Define WITH_SIMD.
 *   libjpegTurbo.arm64Sources(): string[]  the aarch64 NEON intrinsics + dispatcher (C). Define WITH_SIMD and
 *                                     NEON_INTRINSICS; add .arm64IncludeDirs().
 *   libjpegTurbo.includeDirs(): string[]  include dirs for compiling libjpeg-turbo (and for <jpeglib.h>).
 *   hasNasm():              boolean   nasm is on PATH (x86-64 builds use the SIMD code only then; else C-only).
 *   cdepsCflags:            string[]  C flags of the C libraries (GCC/Clang; -O2, hidden visibility, one section
 *                                     per function and data object, no warnings: third-party code is not ours to
 *                                     fix).
 */
const { execFileSync } = require('node:child_process');
const { readdirSync } = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
let srcDirCache;
/** Runs scripts/fetch-cdeps.mjs once per process; returns the sources root as the build files want it. */
function cdepsSrcDir() {
  if (srcDirCache === undefined) {
    const abs = execFileSync(
      process.execPath,
      [path.join(root, 'scripts', 'fetch-cdeps.mjs'), '--print-src'],
      {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    ).trim();
    const rel = path.relative(root, abs);
    // gyp and CMake both take repo-relative paths; forward slashes on every OS.
    srcDirCache = rel.startsWith('..') || path.isAbsolute(rel) ? abs : rel.split(path.sep).join('/');
  }
  return srcDirCache;
}
/** `.c` files directly in `dir` (relative to the sources root), sorted for a stable order. */
function cFiles(dir) {
  const base = cdepsSrcDir();
  const abs = path.isAbsolute(base) ? path.join(base, dir) : path.join(root, base, dir);
  return readdirSync(abs)
    .filter((f) => f.endsWith('.c'))
    .sort()
    .map((f) => `${base}/${dir}/${f}`);
}
const isSse41 = (f) => f.endsWith('_sse41.c');
const webpAll = () => [
  ...['src/dec', 'src/dsp', 'src/enc', 'src/utils', 'sharpyuv'].flatMap((d) => cFiles(`libwebp/${d}`)),
  ...['demux.c', 'anim_decode.c'].map((f) => `${cdepsSrcDir()}/libwebp/src/demux/${f}`),
];

const jt = (f) => `${cdepsSrcDir()}/libjpeg-turbo/${f}`;
const JPEG_C =
  'jcapimin jcapistd jccoefct jccolor jcdctmgr jchuff jcicc jcinit jcmainct jcmarker jcmaster jcomapi jcparam ' +
  'jcphuff jcprepct jcsample jctrans jdapimin jdapistd jdatadst jdatasrc jdcoefct jdcolor jddctmgr jdhuff jdicc ' +
  'jdinput jdmainct jdmarker jdmaster jdmerge jdphuff jdpostct jdsample jdtrans jerror jfdctflt jfdctfst jfdctint ' +
  'jidctflt jidctfst jidctint jidctred jquant1 jquant2 jutils jmemmgr jaricom jcarith jdarith';
const JPEG_X64_ASM =
  'jsimdcpu jfdctflt-sse jccolor-sse2 jcgray-sse2 jchuff-sse2 jcphuff-sse2 jcsample-sse2 jdcolor-sse2 ' +
  'jdmerge-sse2 jdsample-sse2 jfdctfst-sse2 jfdctint-sse2 jidctflt-sse2 jidctfst-sse2 jidctint-sse2 ' +
  'jidctred-sse2 jquantf-sse2 jquanti-sse2 jccolor-avx2 jcgray-avx2 jcsample-avx2 jdcolor-avx2 jdmerge-avx2 ' +
  'jdsample-avx2 jfdctint-avx2 jidctint-avx2 jquanti-avx2';
// upstream's simd/CMakeLists.txt list for aarch64 with NEON_INTRINSICS (the *ext-neon.c files are #included).
const JPEG_ARM64 =
  'jcgray jcphuff jcsample jdmerge jdsample jfdctfst jidctred jquanti jccolor jidctint jidctfst jdcolor jfdctint';
let nasmCache;
function hasNasm() {
  if (nasmCache === undefined) {
    try {
      execFileSync('nasm', ['-v'], { stdio: 'ignore' });
      nasmCache = true;
    } catch {
      nasmCache = false;
    }
  }
  return nasmCache;
}

module.exports = {
  core: [
    'native/core/budget.cpp',
    'native/core/media-type.cpp',
    'native/core/probe.cpp',
    'native/core/metadata-strip.cpp',
    'native/core/cost.cpp',
    'native/core/process.cpp',
    'native/core/pdf.cpp',
    'native/core/parallel.cpp',
    'native/core/pixels.cpp',
    'native/core/decode.cpp',
    'native/core/encode.cpp',
    'native/core/jpeg-decode.cpp',
    'native/core/jpeg-resize-stream.cpp',
    'native/core/jpeg-planar.cpp',
    'native/core/row-resize-stream.cpp',
    'native/core/jpeg-encode.cpp',
    'native/core/jpeg-memory.cpp',
    'native/core/png-decode.cpp',
    'native/core/png-resize-stream.cpp',
    'native/core/png-unfilter.cpp',
    'native/core/png-encode.cpp',
    'native/core/decoded-resize-stream.cpp',
    'native/core/webp-memory.cpp',
  ],
  cdeps: ['cdeps/stb-impl.cpp'],
  binding: ['native/binding/addon.cpp'],
  coreIncludeDirs: ['native/core'],
  // libwebp's public headers otherwise mark every API function visibility("default"). PANTO_WEBP_SHOULD_ABORT names
  // the abort poll (native/core/budget.h) that cdeps/patches/libwebp/0001 calls between decoded rows;
  // PANTO_WEBP_MALLOC/CALLOC/FREE the allocator (native/core/webp-memory.cpp) cdeps/patches/libwebp/0002 gives it.
  // PANTO_DEFLATE_MALLOC/FREE the allocator cdeps/patches/libdeflate/0002 gives libdeflate (native/core/budget.h):
  // charged to the call, and from 64 KiB its own mapping, unmapped on free (a compressor is ~650 KB, of which level 4
  // touches about half: sparse, so only that is resident). Through malloc it stayed resident in every libuv worker's
  // arena that ever encoded a PNG.
  defines: [
    'WEBP_EXTERN=extern',
    'PANTO_WEBP_SHOULD_ABORT=panto_should_abort',
    'PANTO_WEBP_MALLOC=panto_webp_malloc',
    'PANTO_WEBP_CALLOC=panto_webp_calloc',
    'PANTO_WEBP_FREE=panto_webp_free',
    'PANTO_DEFLATE_MALLOC=panto_budget_malloc_sparse',
    'PANTO_DEFLATE_FREE=panto_budget_free',
  ],
  bindingDefines: ['NAPI_VERSION=8', 'NAPI_CPP_EXCEPTIONS', 'NODE_ADDON_API_DISABLE_DEPRECATED'],
  cflags: [
    '-std=c++17',
    '-O3',
    '-fexceptions',
    '-fvisibility=hidden',
    '-fvisibility-inlines-hidden',
    '-ffunction-sections',
    '-fdata-sections',
  ],
  gccCflags: ['-fno-merge-constants'],
  ldflags: [],
  gcSectionsLdflags: { elf: ['-Wl,--gc-sections'], macho: ['-Wl,-dead_strip'] },
  exportsMap: 'cdeps/addon-exports.map',
  exportsList: 'cdeps/addon-exports.txt',
  cdepsSrcDir,
  includeDirs: () => {
    const s = cdepsSrcDir();
    return [s, `${s}/libwebp/src`, `${s}/libdeflate`, `${s}/libjpeg-turbo`];
  },
  libjpegTurbo: {
    sources: () => JPEG_C.split(' ').map((f) => jt(`${f}.c`)),
    noSimdSources: () => [jt('jsimd_none.c')],
    x64Sources: () => [jt('simd/x86_64/jsimd.c')],
    x64AsmSources: () => JPEG_X64_ASM.split(' ').map((f) => jt(`simd/x86_64/${f}.asm`)),
    arm64Sources: () => [
      ...JPEG_ARM64.split(' ').map((f) => jt(`simd/arm/${f}-neon.c`)),
      jt('simd/arm/aarch64/jchuff-neon.c'),
      jt('simd/arm/aarch64/jsimd.c'),
    ],
    includeDirs: () => [`${cdepsSrcDir()}/libjpeg-turbo`],
    /** Extra include dir of the arm64 SIMD files (simd/arm/neon-compat.h, included from simd/arm/aarch64 too). */
    arm64IncludeDirs: () => [jt('simd/arm')],
    /** NASM flags for one object format (libjpeg-turbo's simd/CMakeLists.txt). Paths end with '/' as nasm wants. */
    nasmFlags: (format) => [
      `-f${format}`,
      { elf64: '-DELF', macho64: '-DMACHO', win64: '-DWIN64' }[format],
      '-D__x86_64__',
      ...(format === 'elf64' ? ['-DPIC'] : []),
      `-I${jt('simd/nasm/')}`,
      `-I${jt('simd/x86_64/')}`,
    ],
  },
  hasNasm,
  libwebp: {
    sources: () => webpAll().filter((f) => !isSse41(f)),
    sse41Sources: () => webpAll().filter(isSse41),
    includeDirs: () => [`${cdepsSrcDir()}/libwebp`],
    threadDefines: ['WEBP_USE_THREAD'],
  },
  libdeflate: {
    sources: () => cFiles('libdeflate/lib'),
    x86Sources: () => cFiles('libdeflate/lib/x86'),
    armSources: () => cFiles('libdeflate/lib/arm'),
    includeDirs: () => [`${cdepsSrcDir()}/libdeflate`],
  },
  zlib: {
    sources: () =>
      ['adler32.c', 'crc32.c', 'inffast.c', 'inflate.c', 'inftrees.c', 'zutil.c'].map(
        (f) => `${cdepsSrcDir()}/zlib/${f}`,
      ),
    defines: ['Z_PREFIX', 'Z_SOLO'],
  },
  cdepsCflags: ['-O2', '-fvisibility=hidden', '-w', '-ffunction-sections', '-fdata-sections'],
};
