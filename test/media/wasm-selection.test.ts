import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repo, wasmFiles } from './wasm-build.js';

const run = promisify(execFile);
let dir: string;

// A copy of the built package with the WebAssembly build but no native binary (no build/, no prebuilds/<platform>/):
// what a user on a platform without a prebuild and without a compiler gets from the published tarball.
beforeAll(async () => {
  if (!wasmFiles) return;
  dir = await mkdtemp(path.join(os.tmpdir(), 'panto-wasm-only-'));
  await cp(path.join(repo, 'dist'), path.join(dir, 'dist'), { recursive: true });
  await cp(path.join(repo, 'package.json'), path.join(dir, 'package.json'));
  await cp(path.join(repo, 'lua'), path.join(dir, 'lua'), { recursive: true });
  await mkdir(path.join(dir, 'native'));
  await cp(path.join(repo, 'native', 'wasm'), path.join(dir, 'native', 'wasm'), { recursive: true });
  await mkdir(path.join(dir, 'prebuilds'));
  await cp(path.join(repo, 'prebuilds', 'wasm32'), path.join(dir, 'prebuilds', 'wasm32'), {
    recursive: true,
  });
  await symlink(path.join(repo, 'node_modules'), path.join(dir, 'node_modules'));
  await mkdir(path.join(dir, 'scripts'));
  await cp(
    path.join(repo, 'scripts', 'install-fallback.cjs'),
    path.join(dir, 'scripts', 'install-fallback.cjs'),
  );
  await cp(path.join(repo, 'test', 'fixtures', 'media', 'png-rgba.png'), path.join(dir, 'input.png'));
  await writeFile(
    path.join(dir, 'probe.mjs'),
    `import { readFileSync } from 'node:fs';
import { isPantoError, mediaBackend, probeMedia, processMedia, sniffMedia } from './dist/index.js';
const png = readFileSync('input.png');
const out = {};
try {
  out.sniff = sniffMedia(png);
  out.backend = mediaBackend();
  const r = await processMedia(png, { format: 'webp', maxDimension: 32 });
  out.process = [r.mediaType, r.width, r.height, r.changes];
  out.probe = probeMedia(r.data);
  await processMedia(png.subarray(0, 40)).catch((e) => { out.truncated = e.code; });
  sniffMedia(png);
} catch (e) { out.error = isPantoError(e) ? e.code : String(e); out.message = e.message; }
console.log(JSON.stringify(out));`,
  );
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function probe(env: Record<string, string>) {
  const { stdout, stderr } = await run(process.execPath, ['probe.mjs'], {
    cwd: dir,
    env: { ...process.env, PANTO_MEDIA_BACKEND: '', ...env },
  });
  return { out: JSON.parse(stdout) as Record<string, unknown>, stderr };
}

describe.runIf(wasmFiles)('backend selection on a machine without a native binary', () => {
  it('auto: falls back to wasm with ONE notice line on stderr, once per process; same API and results', async () => {
    const { out, stderr } = await probe({});
    expect(out.backend).toBe('wasm');
    expect(out.sniff).toBe('image/png');
    expect(out.process).toEqual(['image/webp', 32, 24, ['resized', 'reencoded', 'converted']]);
    expect(out.probe).toMatchObject({ mediaType: 'image/webp', width: 32, height: 24, hasAlpha: true });
    expect(out.truncated).toBe('ERR_CORRUPT_MEDIA');
    const lines = stderr.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    const line = lines[0] ?? '';
    expect(
      line.startsWith(`libpanto: no native media addon for ${process.platform}-${process.arch} (Node `),
    ).toBe(true);
    expect(line).toContain('No native build was found');
    expect(
      line.endsWith(
        '; using the WebAssembly build (same results, about 2x slower). Set PANTO_MEDIA_BACKEND=wasm to choose it ' +
          'without this notice.',
      ),
    ).toBe(true);
  });

  it('PANTO_MEDIA_BACKEND=wasm: chosen explicitly, no warning', async () => {
    const { out, stderr } = await probe({ PANTO_MEDIA_BACKEND: 'wasm' });
    expect(out.backend).toBe('wasm');
    expect(out.process).toEqual(['image/webp', 32, 24, ['resized', 'reencoded', 'converted']]);
    expect(stderr).toBe('');
  });

  it('PANTO_MEDIA_BACKEND=native: no fallback, ERR_NATIVE_UNAVAILABLE naming the cause', async () => {
    const { out } = await probe({ PANTO_MEDIA_BACKEND: 'native' });
    expect(out.error).toBe('ERR_NATIVE_UNAVAILABLE');
    expect(out.message).toMatch(/native media addon cannot load on .*npm run build:native/);
  });

  it('an unknown PANTO_MEDIA_BACKEND value is ERR_INVALID_ARGUMENT naming the valid ones', async () => {
    const { out } = await probe({ PANTO_MEDIA_BACKEND: 'gpu' });
    expect(out.error).toBe('ERR_INVALID_ARGUMENT');
    expect(out.message).toBe("PANTO_MEDIA_BACKEND must be 'native', 'wasm' or 'auto' (or unset), got 'gpu'");
  });

  it('in the repository (native addon built) auto picks native and says nothing', async () => {
    const { stdout, stderr } = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { mediaBackend } from ${JSON.stringify(path.join(repo, 'dist', 'index.js'))}; console.log(mediaBackend());`,
      ],
      { env: { ...process.env, PANTO_MEDIA_BACKEND: '' } },
    );
    expect(stdout.trim()).toBe('native');
    expect(stderr).toBe('');
  });
});

describe.runIf(wasmFiles)('the npm install step without a native build', () => {
  it('succeeds with a note when the package carries the wasm build, and fails as before when it does not', async () => {
    const ok = await run(process.execPath, [path.join(dir, 'scripts', 'install-fallback.cjs')]);
    expect(ok.stderr).toContain('will be processed by the bundled WebAssembly build');
    const bare = await mkdtemp(path.join(os.tmpdir(), 'panto-no-wasm-'));
    try {
      await mkdir(path.join(bare, 'scripts'));
      await cp(
        path.join(repo, 'scripts', 'install-fallback.cjs'),
        path.join(bare, 'scripts', 'install-fallback.cjs'),
      );
      const failed = await run(process.execPath, [path.join(bare, 'scripts', 'install-fallback.cjs')]).then(
        () => undefined,
        (e: { code: number; stderr: string }) => e,
      );
      expect(failed?.code).toBe(1);
      expect(failed?.stderr).toContain('no WebAssembly build is bundled');
    } finally {
      await rm(bare, { recursive: true, force: true });
    }
  });
});
