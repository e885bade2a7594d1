#!/usr/bin/env node
/**
 * Builds the prebuilt addon for every platform we ship, from one linux-x64 machine, with zig as the cross C/C++
 * toolchain (scripts/zig-toolchain.mjs fetches it, pinned and sha256-checked). Same source list and flags as
 * binding.gyp (scripts/native-sources.cjs); the C libraries are compiled from the pinned sources in cdeps/src.
 *
 *   node scripts/prebuild-all.mjs [--targets linux-x64,win32-x64,...] [--jobs N] [--out DIR]
 *
 * Output: DIR (default prebuilds/)/<platform>-<arch>/libpanto[.glibc|.musl].node, the names node-gyp-build loads
 * (musl is picked when /etc/alpine-release exists or LIBC=musl). Objects go to build-cross/<target>/ (git-ignored).
 *
 * Per target:
 *   linux (glibc)  zig target <arch>-linux-gnu.2.17: needs glibc >= 2.17 and nothing else (libc++ linked in);
 *                  an ELF version script exports only the two N-API entry points.
 *   linux (musl)   <arch>-linux-musl: NEEDED is only libc.so (musl), libc++ linked in.
 *   macOS          aarch64-macos.11.0 / x86_64-macos.10.15, `-undefined dynamic_lookup` (N-API bound by node at load),
 *                  exported-symbols list; minos checked by scripts/check-prebuilds.mjs.
 *   Windows        x86_64-windows-gnu, linked against an import library for node.exe made with `zig dlltool` from
 *                  node-api-headers' .def files (UCRT, no MSVC runtime DLL).
 * Prints one line per target with size and build time; exits 1 on the first failing target (its output shown).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureZig } from './zig-toolchain.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const S = require('./native-sources.cjs');

/** Every target we ship. `dir`/`file` follow node-gyp-build's layout; `x86` selects SSE4.1 files and cpu code. */
export const TARGETS = [
  {
    id: 'linux-x64',
    zig: 'x86_64-linux-gnu.2.17',
    dir: 'linux-x64',
    file: 'libpanto.glibc.node',
    os: 'linux',
    x86: true,
  },
  {
    id: 'linux-arm64',
    zig: 'aarch64-linux-gnu.2.17',
    dir: 'linux-arm64',
    file: 'libpanto.glibc.node',
    os: 'linux',
    x86: false,
  },
  {
    id: 'linuxmusl-x64',
    zig: 'x86_64-linux-musl',
    dir: 'linux-x64',
    file: 'libpanto.musl.node',
    os: 'linux',
    x86: true,
  },
  {
    id: 'linuxmusl-arm64',
    zig: 'aarch64-linux-musl',
    dir: 'linux-arm64',
    file: 'libpanto.musl.node',
    os: 'linux',
    x86: false,
  },
  {
    id: 'darwin-arm64',
    zig: 'aarch64-macos.11.0',
    dir: 'darwin-arm64',
    file: 'libpanto.node',
    os: 'mac',
    x86: false,
  },
  {
    id: 'darwin-x64',
    zig: 'x86_64-macos.10.15',
    dir: 'darwin-x64',
    file: 'libpanto.node',
    os: 'mac',
    x86: true,
  },
  {
    id: 'win32-x64',
    zig: 'x86_64-windows-gnu',
    dir: 'win32-x64',
    file: 'libpanto.node',
    os: 'win',
    x86: true,
  },
];

function parseArgs(argv) {
  const o = { targets: TARGETS.map((t) => t.id), jobs: availableParallelism(), out: join(ROOT, 'prebuilds') };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = argv[i + 1];
    if (a === '--targets' && v) o.targets = v.split(',');
    else if (a === '--jobs' && v) o.jobs = Math.max(1, Number(v));
    else if (a === '--out' && v) o.out = resolve(v);
    else throw new Error(`unknown argument ${a} (use --targets a,b --jobs N --out DIR)`);
    i++;
  }
  for (const t of o.targets)
    if (!TARGETS.some((x) => x.id === t))
      throw new Error(`unknown target ${t}; known: ${TARGETS.map((x) => x.id)}`);
  return o;
}

/** Runs a command; resolves with its output, rejects with the command line and output on failure. */
function exec(cmd, args, env) {
  return new Promise((res, rej) => {
    const p = spawn(cmd, args, { cwd: ROOT, env: env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (out += d));
    p.on('error', rej);
    p.on('close', (code, signal) =>
      code === 0
        ? res(out)
        : rej(new Error(`${cmd} ${args.join(' ')}\nexit ${code ?? `by signal ${signal}`}\n${out.trim()}`)),
    );
  });
}

/** Runs `tasks` (functions returning promises) with at most `n` in flight; rejects on the first failure. */
async function pool(tasks, n) {
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) await tasks[next++]();
  };
  await Promise.all(Array.from({ length: Math.min(n, tasks.length) }, worker));
}

const objName = (src) => `${src.replace(/^\.\.?\//, '').replace(/[/\\:]/g, '_')}.o`;

async function buildTarget(zig, t, opts, env) {
  const started = Date.now();
  const work = join(ROOT, 'build-cross', t.id);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(join(work, 'obj'), { recursive: true });
  const napiInc = require('node-addon-api').include_dir;
  const nodeInc = require('node-api-headers').include_dir;
  const defines = S.defines.map((d) => `-D${d}`);
  const common = ['-target', t.zig, '-g0', '-fPIC', '-fno-sanitize=undefined', ...defines];
  const cFlags = [...common, ...S.cdepsCflags];
  const webpFlags = [
    ...cFlags,
    ...S.libwebp.includeDirs().map((d) => `-I${d}`),
    ...S.libwebp.threadDefines.map((d) => `-D${d}`),
    ...(t.x86 ? ['-DWEBP_HAVE_SSE41'] : []),
  ];
  const deflateFlags = [...cFlags, ...S.libdeflate.includeDirs().map((d) => `-I${d}`)];
  const zlibFlags = [...cFlags, ...S.zlib.defines.map((d) => `-D${d}`)];
  // libjpeg-turbo: x86-64 SIMD is NASM (object format per OS; C-only when nasm is missing), arm64 NEON intrinsics.
  const jpegSimd = t.x86 ? (S.hasNasm() ? 'x64' : 'none') : 'arm64';
  const jpegFlags = [
    ...cFlags,
    ...S.libjpegTurbo.includeDirs().map((d) => `-I${d}`),
    ...(jpegSimd === 'x64'
      ? ['-DWITH_SIMD']
      : jpegSimd === 'arm64'
        ? ['-DWITH_SIMD', '-DNEON_INTRINSICS', ...S.libjpegTurbo.arm64IncludeDirs().map((d) => `-I${d}`)]
        : []),
  ];
  const nasmFlags = S.libjpegTurbo.nasmFlags({ linux: 'elf64', mac: 'macho64', win: 'win64' }[t.os]);
  const jpegSimdUnits =
    jpegSimd === 'x64'
      ? [
          ...S.libjpegTurbo.x64Sources().map((f) => ['cc', f, jpegFlags]),
          ...S.libjpegTurbo.x64AsmSources().map((f) => ['nasm', f, nasmFlags]),
        ]
      : jpegSimd === 'arm64'
        ? S.libjpegTurbo.arm64Sources().map((f) => ['cc', f, jpegFlags])
        : S.libjpegTurbo.noSimdSources().map((f) => ['cc', f, jpegFlags]);
  const cxxFlags = [
    ...common,
    ...S.cflags,
    ...S.coreIncludeDirs.map((d) => `-I${d}`),
    ...S.includeDirs().map((d) => `-I${d}`),
  ];
  const bindingFlags = [
    ...cxxFlags,
    `-I${napiInc}`,
    `-I${nodeInc}`,
    ...S.bindingDefines.map((d) => `-D${d}`),
  ];
  /** @type {[string, string, string[]][]} [tool, source, flags] */
  const units = [
    ...S.libwebp.sources().map((f) => ['cc', f, webpFlags]),
    ...S.libwebp.sse41Sources().map((f) => ['cc', f, t.x86 ? [...webpFlags, '-msse4.1'] : webpFlags]),
    ...S.libdeflate.sources().map((f) => ['cc', f, deflateFlags]),
    ...(t.x86 ? S.libdeflate.x86Sources() : S.libdeflate.armSources()).map((f) => ['cc', f, deflateFlags]),
    ...S.zlib.sources().map((f) => ['cc', f, zlibFlags]),
    ...S.libjpegTurbo.sources().map((f) => ['cc', f, jpegFlags]),
    ...jpegSimdUnits,
    ...[...S.core, ...S.cdeps].map((f) => ['c++', f, cxxFlags]),
    ...S.binding.map((f) => ['c++', f, bindingFlags]),
  ];
  const objects = units.map(([, src]) => join(work, 'obj', objName(src)));
  await pool(
    units.map(
      ([tool, src, flags], i) =>
        () =>
          tool === 'nasm'
            ? exec('nasm', [...flags, '-o', objects[i], src], env)
            : exec(zig, [tool, ...flags, '-c', src, '-o', objects[i]], env),
    ),
    opts.jobs,
  );
  const link = ['c++', '-target', t.zig, '-shared', '-fPIC', '-s', ...objects];
  if (t.os === 'linux') {
    link.push(`-Wl,--version-script=${join(ROOT, S.exportsMap)}`, ...S.gcSectionsLdflags.elf);
    if (t.zig.includes('-gnu')) link.push('-lpthread', '-lm');
  } else if (t.os === 'mac') {
    link.push(
      '-Wl,-undefined,dynamic_lookup',
      `-Wl,-install_name,@rpath/${t.file}`,
      ...S.gcSectionsLdflags.macho,
    );
  } else if (t.os === 'win') {
    link.push(await nodeImportLib(zig, work, env));
  }
  const out = join(work, t.file);
  await exec(zig, [...link, '-o', out], env);
  const destDir = join(opts.out, t.dir);
  mkdirSync(destDir, { recursive: true });
  cpSync(out, join(destDir, t.file));
  const size = statSync(out).size;
  const sha = createHash('sha256').update(readFileSync(out)).digest('hex').slice(0, 16);
  return { id: t.id, path: join(destDir, t.file), size, sha, seconds: (Date.now() - started) / 1000 };
}

/** An import library for node.exe (the N-API functions the addon calls), from node-api-headers' .def files. */
async function nodeImportLib(zig, work, env) {
  const defDir = join(dirname(require.resolve('node-api-headers/package.json')), 'def');
  const body = (f) =>
    readFileSync(join(defDir, f), 'utf8')
      .split('\n')
      .filter((l) => !/^\s*(NAME|EXPORTS)\b/.test(l));
  const def = ['NAME node.exe', 'EXPORTS', ...body('js_native_api.def'), ...body('node_api.def')].join('\n');
  const defFile = join(work, 'node.def');
  writeFileSync(defFile, `${def}\n`);
  const lib = join(work, 'node.lib');
  await exec(zig, ['dlltool', '-d', defFile, '-l', lib, '-D', 'node.exe', '-m', 'i386:x86-64'], env);
  return lib;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const zig = ensureZig();
  // Fresh sources first (a no-op when current), so the parallel compiles below never race the extraction.
  S.cdepsSrcDir();
  const env = { ...process.env, ZIG_GLOBAL_CACHE_DIR: join(ROOT, '.toolchain', 'zig-cache') };
  const all = Date.now();
  const results = [];
  for (const id of opts.targets) {
    const t = TARGETS.find((x) => x.id === id);
    process.stderr.write(`prebuild: ${id} (${t.zig}) ...\n`);
    const r = await buildTarget(zig, t, opts, env);
    results.push(r);
    console.log(
      `${r.id.padEnd(16)} ${(r.size / 1024).toFixed(0).padStart(6)} KiB  sha256:${r.sha}  ${r.seconds.toFixed(0)} s  ${r.path.slice(ROOT.length + 1)}`,
    );
  }
  console.log(`prebuild:all ${results.length} targets in ${((Date.now() - all) / 1000).toFixed(0)} s`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    process.stderr.write(`prebuild: ${e.message}\n`);
    process.exit(1);
  });
}
