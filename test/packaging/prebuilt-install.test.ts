/**
 * The published package installs and works on a machine WITHOUT a compiler, make or python:
 *   1. `npm pack --ignore-scripts` of the repository with its built dist/ -> the source tarball;
 *   2. the tarball is unpacked into a staging dir and the addon this checkout built (build/Release, what
 *      `npm run prebuildify` would copy) is placed as prebuilds/linux-x64/libpanto.glibc.node; then `npm pack` of
 *      the staging dir -> the release tarball, which must contain the prebuild, the pinned C sources and no build/.
 *      (The zig prebuilds of every platform go through the same install in scripts/ci-cross.mjs, step "pack".)
 *   3. a fresh project installs the release tarball with PATH = a temp bin dir holding only node, npm and sh (no cc,
 *      c++, gcc, make, python); the package's `install` script (node-gyp-build) runs and must find the prebuild;
 *   4. in that project, `import { processMedia } from 'libpanto'` processes a real JPEG with EXIF orientation 6.
 * Dependencies (node-addon-api, node-gyp-build, ajv, fengari) come from the npm cache or the registry.
 * Never skipped: if any step fails, the test fails with the step's output.
 */
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const WORK = mkdtempSync(join(tmpdir(), 'panto-pack-'));
const FIXTURE = fileURLToPath(new URL('../fixtures/media/jpeg-orient-6.jpg', import.meta.url));

/** Runs a command; on failure throws with the command, exit status and the tail of its output. */
function run(cmd: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }): string {
  try {
    return execFileSync(cmd, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 64 << 20,
    });
  } catch (e) {
    const err = e as { status?: number; stdout?: string; stderr?: string };
    const tail = `${err.stdout ?? ''}\n${err.stderr ?? ''}`.trim().split('\n').slice(-40).join('\n');
    throw new Error(`\`${cmd} ${args.join(' ')}\` in ${opts.cwd} failed (exit ${err.status}):\n${tail}`);
  }
}

/** A bin dir with node, npm, npx and sh only: a machine with Node installed and no build tools. */
function toolFreePath(): string {
  const bin = join(WORK, 'bin');
  mkdirSync(bin);
  const nodeBinDir = join(process.execPath, '..');
  symlinkSync(process.execPath, join(bin, 'node'));
  for (const tool of ['npm', 'npx']) {
    const p = join(nodeBinDir, tool);
    const found = existsSync(p) ? p : run('sh', ['-c', `command -v ${tool}`], { cwd: WORK }).trim();
    symlinkSync(found, join(bin, tool));
  }
  symlinkSync('/bin/sh', join(bin, 'sh'));
  return bin;
}

function packInto(cwd: string, dest: string, env?: NodeJS.ProcessEnv): string {
  const out = run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dest], {
    cwd,
    ...(env ? { env } : {}),
  });
  const json = JSON.parse(out.slice(out.indexOf('['))) as { filename: string; files: { path: string }[] }[];
  const first = json[0];
  if (!first) throw new Error(`npm pack printed no result: ${out}`);
  return join(dest, first.filename);
}

afterAll(() => {
  rmSync(WORK, { recursive: true, force: true });
});

describe('prebuilt package installs without a compiler', () => {
  it('packs with a prebuild, installs with only node+npm on PATH, and processes an image', () => {
    // 1. the source tarball of the current dist/ (`npm test` builds it first; rebuilding it here would rewrite files
    //    that test files running beside this one execute)
    expect(existsSync(join(ROOT, 'dist', 'index.js')), 'dist/ (npm run build:ts)').toBe(true);
    const sourceTarball = packInto(ROOT, WORK);

    // 2. prebuildify in a staging copy of exactly what ships
    const staging = join(WORK, 'staging');
    mkdirSync(staging);
    run('tar', ['-xzf', sourceTarball, '-C', staging, '--strip-components=1'], { cwd: WORK });
    const built = join(ROOT, 'build', 'Release', 'panto_media.node');
    expect(existsSync(built), `${built} (npm run build:native)`).toBe(true);
    mkdirSync(join(staging, 'prebuilds', 'linux-x64'), { recursive: true });
    copyFileSync(built, join(staging, 'prebuilds', 'linux-x64', 'libpanto.glibc.node'));
    const releaseDir = join(WORK, 'release');
    mkdirSync(releaseDir);
    const tarball = packInto(staging, releaseDir);
    const listing = run('tar', ['-tzf', tarball], { cwd: WORK }).split('\n');
    expect(listing.some((f) => /^package\/prebuilds\/linux-x64\/.+\.node$/.test(f))).toBe(true);
    expect(listing.some((f) => f.startsWith('package/build/'))).toBe(false);
    expect(listing).toContain('package/dist/index.js');
    // The pinned C sources ship (a source build needs no network); the download cache and the dev-only native
    // tests and fuzzer do not.
    expect(listing).toContain('package/cdeps/src/STAMP');
    expect(listing).toContain('package/cdeps/src/stb/stb_image.h');
    expect(
      listing.filter((f) => /^package\/(cdeps\/\.cache|cdeps\/\.deps|native\/tests|native\/fuzz)\//.test(f)),
    ).toEqual([]);

    // 3. install with no build tools on PATH
    const bin = toolFreePath();
    for (const tool of ['cc', 'c++', 'gcc', 'g++', 'make', 'python3', 'python']) {
      expect(
        () => run('sh', ['-c', `command -v ${tool}`], { cwd: WORK, env: { PATH: bin } }),
        tool,
      ).toThrow();
    }
    const project = join(WORK, 'project');
    mkdirSync(project);
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
    );
    const env: NodeJS.ProcessEnv = {
      PATH: bin,
      HOME: process.env.HOME ?? WORK,
      npm_config_cache: run('npm', ['config', 'get', 'cache'], { cwd: ROOT }).trim(),
      npm_config_update_notifier: 'false',
      npm_config_fund: 'false',
      npm_config_audit: 'false',
    };
    for (const k of ['npm_config_registry', 'NPM_CONFIG_REGISTRY', 'HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY']) {
      const v = process.env[k];
      if (v !== undefined) env[k] = v;
    }
    run('npm', ['install', '--prefer-offline', '--foreground-scripts', tarball], { cwd: project, env });
    const installed = join(project, 'node_modules', 'libpanto');
    expect(existsSync(join(installed, 'build'))).toBe(false); // nothing was compiled
    expect(readdirSync(join(installed, 'prebuilds', 'linux-x64')).some((f) => f.endsWith('.node'))).toBe(
      true,
    );

    // 4. use it
    writeFileSync(join(project, 'input.jpg'), readFileSync(FIXTURE));
    const script = `
      import { readFileSync } from 'node:fs';
      import { processMedia, sniffMedia } from 'libpanto';
      const bytes = readFileSync('input.jpg');
      const r = await processMedia(bytes);
      console.log(JSON.stringify({ sniff: sniffMedia(bytes), mediaType: r.mediaType, width: r.width,
        height: r.height, changes: r.changes, out: sniffMedia(r.data) }));`;
    const out = run('node', ['--input-type=module', '-e', script], { cwd: project, env });
    const result = JSON.parse(out.trim().split('\n').pop() ?? '{}') as Record<string, unknown>;
    expect(result).toMatchObject({
      sniff: 'image/jpeg',
      mediaType: 'image/jpeg',
      width: 64,
      height: 48,
      out: 'image/jpeg',
    });
    expect(result.changes).toContain('oriented');
  }, 900_000);
});
