/**
 * The C dependency recipe (scripts/fetch-cdeps.mjs): pinned Debian SOURCE packages, sha256-checked, extracted like
 * `dpkg-source -x` with Debian's patch series, then our own cdeps/patches/<key>/*.patch, into cdeps/src.
 * The repository's own tree is fetched once (the addon build already did it); the recipe's behaviour is then driven in
 * a temp copy of the script whose cdeps/.cache holds hard links to the real pinned archives, so nothing touches the
 * repository's cdeps/src while other test files load the addon built from it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPT = join(ROOT, 'scripts/fetch-cdeps.mjs');
const WORK = mkdtempSync(join(tmpdir(), 'panto-cdeps-test-'));

function run(script: string, args: string[], env: Record<string, string | undefined> = {}) {
  const { PANTO_CDEPS_SRC: _, ...base } = process.env;
  return spawnSync(process.execPath, [script, ...args], { env: { ...base, ...env }, encoding: 'utf8' });
}

/** A project copy with the script and hard links to the pinned archives (no network needed to extract). */
/** The files (relative to the package root) that the repository's own cdeps/patches/<key>/*.patch change. */
function ourPatchedFiles(key: string): string[] {
  const dir = join(ROOT, 'cdeps/patches', key);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.patch'))
    .flatMap((f) =>
      [...readFileSync(join(dir, f), 'utf8').matchAll(/^\+\+\+ b\/(\S+)/gm)].map((m) => m[1] ?? ''),
    );
}

function projectCopy(name: string, withCache = true): string {
  const dir = join(WORK, name);
  mkdirSync(join(dir, 'scripts'), { recursive: true });
  cpSync(SCRIPT, join(dir, 'scripts/fetch-cdeps.mjs'));
  mkdirSync(join(dir, 'cdeps/.cache'), { recursive: true });
  if (withCache) {
    for (const f of readdirSync(join(ROOT, 'cdeps/.cache')))
      linkSync(join(ROOT, 'cdeps/.cache', f), join(dir, 'cdeps/.cache', f));
  }
  return dir;
}

/** A unified diff changing one line of stb_image.h (paths as `diff -u a/ b/` writes them, applied with -p1). */
function stbPatch(from: string, to: string): string {
  const text = readFileSync(join(ROOT, 'cdeps/src/stb/stb_image.h'), 'utf8').split('\n');
  const i = text.indexOf(from);
  if (i < 0) throw new Error(`line not found: ${from}`);
  const ctx = (a: number, b: number) => text.slice(a, b).map((l) => ` ${l}`);
  return [
    '--- a/stb_image.h',
    '+++ b/stb_image.h',
    `@@ -${i - 2},7 +${i - 2},7 @@`,
    ...ctx(i - 3, i),
    `-${from}`,
    `+${to}`,
    ...ctx(i + 1, i + 4),
    '',
  ].join('\n');
}

beforeAll(() => {
  const r = run(SCRIPT, []);
  expect(r.status, r.stderr).toBe(0);
}, 300_000);

afterAll(() => {
  rmSync(WORK, { recursive: true, force: true });
});

describe('C dependency sources (scripts/fetch-cdeps.mjs)', () => {
  it('names no registry host: the archive URI is read from the system at run time', () => {
    const text = readFileSync(SCRIPT, 'utf8');
    expect(text).not.toMatch(/https?:\/\//);
    expect(text).toContain('/etc/apt/sources.list.d/debian.sources');
  });

  it('the extracted tree is current, stamped with every pinned archive, and carries Debian security fixes', () => {
    const r = run(SCRIPT, ['--print-src']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toBe(''); // current: nothing fetched, nothing logged
    expect(r.stdout.trim()).toBe(join(ROOT, 'cdeps/src'));
    expect(run(SCRIPT, ['--check']).status).toBe(0);
    const stamp = readFileSync(join(ROOT, 'cdeps/src/STAMP'), 'utf8');
    for (const f of [
      'libwebp_1.2.4.orig.tar.gz',
      'libdeflate_1.14-1.debian.tar.xz',
      'libstb_0.0~git20241109',
    ])
      expect(stamp).toMatch(new RegExp(`^  [0-9a-f]{64}  ${f.replace(/[.~+]/g, '\\$&')}`, 'm'));
    // CVE-2023-4863 (Debian's patch): the lossless decoder builds Huffman tables in growable segments.
    expect(readFileSync(join(ROOT, 'cdeps/src/libwebp/src/dec/vp8l_dec.c'), 'utf8')).toContain(
      'VP8LHuffmanTablesAllocate',
    );
    for (const f of ['stb/stb_image.h', 'libwebp/COPYING', 'libdeflate/lib/deflate_compress.c'])
      expect(existsSync(join(ROOT, 'cdeps/src', f)), f).toBe(true);
  });

  it('extracts offline from the cache, applies cdeps/patches/<key>/*.patch in order, and restamps on change', () => {
    const dir = projectCopy('patched');
    const script = join(dir, 'scripts/fetch-cdeps.mjs');
    mkdirSync(join(dir, 'cdeps/patches/stb'), { recursive: true });
    const line = '#define STBI_VERSION 1';
    writeFileSync(join(dir, 'cdeps/patches/stb/0001-first.patch'), stbPatch(line, '#define STBI_VERSION 2'));
    let r = run(script, []);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('apt-get');
    expect(r.stderr).toContain('cdeps/patches/stb/0001-first.patch');
    const header = join(dir, 'cdeps/src/stb/stb_image.h');
    expect(readFileSync(header, 'utf8')).toContain('#define STBI_VERSION 2');
    expect(readFileSync(join(dir, 'cdeps/src/STAMP'), 'utf8')).toMatch(
      /^ {2}patch [0-9a-f]{64} {2}patches\/stb\/0001-first\.patch$/m,
    );
    // The rest of the tree equals the repository's (same pins, same Debian series) where none of the repository's own
    // patches (absent from this copy) touch it.
    expect(ourPatchedFiles('libwebp')).not.toContain('src/utils/huffman_utils.c');
    expect(readFileSync(join(dir, 'cdeps/src/libwebp/src/utils/huffman_utils.c'))).toEqual(
      readFileSync(join(ROOT, 'cdeps/src/libwebp/src/utils/huffman_utils.c')),
    );
    expect(run(script, ['--check']).status).toBe(0);

    // A second patch, applied after the first (it builds on its change): the stamp goes stale, then is rebuilt.
    const second = readFileSync(join(dir, 'cdeps/patches/stb/0001-first.patch'), 'utf8')
      .replace('-#define STBI_VERSION 1', '-#define STBI_VERSION 2')
      .replace('+#define STBI_VERSION 2', '+#define STBI_VERSION 3');
    writeFileSync(join(dir, 'cdeps/patches/stb/0002-second.patch'), second);
    const check = run(script, ['--check']);
    expect(check.status).toBe(1);
    expect(check.stderr).toContain('differs from the pins and patches');
    r = run(script, ['--print-src']);
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(header, 'utf8')).toContain('#define STBI_VERSION 3');
  });

  it('a patch that does not apply fails naming it and leaves the previous tree in place', () => {
    const dir = projectCopy('bad-patch');
    const script = join(dir, 'scripts/fetch-cdeps.mjs');
    expect(run(script, []).status).toBe(0);
    const before = readFileSync(join(dir, 'cdeps/src/STAMP'), 'utf8');
    mkdirSync(join(dir, 'cdeps/patches/stb'), { recursive: true });
    writeFileSync(
      join(dir, 'cdeps/patches/stb/0001-stale.patch'),
      stbPatch('#define STBI_VERSION 1', '#define STBI_VERSION 9').replace(
        '-#define STBI_VERSION 1',
        '-#define STBI_VERSION 7',
      ),
    );
    const r = run(script, ['--print-src']);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('0001-stale.patch');
    expect(readFileSync(join(dir, 'cdeps/src/STAMP'), 'utf8')).toBe(before);
    expect(readdirSync(join(dir, 'cdeps')).filter((f) => f.includes('.tmp-'))).toEqual([]);
  });

  it('an archive whose sha256 differs from its pin is rejected and deleted; nothing is extracted', () => {
    // A tampered mirror: an apt-get that "downloads" the real archives with one byte appended to libwebp's.
    const dir = projectCopy('tampered', false);
    const bin = join(WORK, 'fake-apt-bin');
    mkdirSync(bin, { recursive: true });
    const fake = join(bin, 'apt-get');
    writeFileSync(
      fake,
      `#!/bin/sh\ncase "$*" in *" source "*) cp ${join(ROOT, 'cdeps/.cache')}/* . && ` +
        `printf x >> libwebp_1.2.4.orig.tar.gz ;; esac\nexit 0\n`,
    );
    chmodSync(fake, 0o755);
    const r = run(join(dir, 'scripts/fetch-cdeps.mjs'), ['--print-src'], {
      PATH: `${bin}:${process.env.PATH ?? ''}`,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /sha256 mismatch for libwebp_1\.2\.4\.orig\.tar\.gz: expected 7bf5a8a2[0-9a-f]+, got/,
    );
    expect(existsSync(join(dir, 'cdeps/.cache/libwebp_1.2.4.orig.tar.gz'))).toBe(false);
    expect(existsSync(join(dir, 'cdeps/src'))).toBe(false);
  });

  it('PANTO_CDEPS_SRC without the files fails naming what is missing and how to fix it', () => {
    const r = run(SCRIPT, ['--print-src'], { PANTO_CDEPS_SRC: '/nonexistent-panto-src' });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('/nonexistent-panto-src/stb/stb_image.h');
    expect(r.stderr).toContain('libwebp/src/webp');
    expect(r.stderr).toMatch(/set PANTO_CDEPS_SRC=\/path/);
  });

  // The tar+patch route is the only one on non-Debian machines; where dpkg-source exists, it is the reference.
  const hasDpkgSource = spawnSync('sh', ['-c', 'command -v dpkg-source']).status === 0;
  it.skipIf(!hasDpkgSource)('the same tree as dpkg-source -x for the files the build reads', () => {
    const out = join(WORK, 'dpkg');
    mkdirSync(out);
    for (const dsc of readdirSync(join(ROOT, 'cdeps/.cache')).filter((f) => f.endsWith('.dsc')))
      execFileSync('dpkg-source', ['--no-check', '-x', join(ROOT, 'cdeps/.cache', dsc)], {
        cwd: out,
        stdio: 'ignore',
      });
    const webp = readdirSync(out).find((d) => d.startsWith('libwebp-'));
    const stb = readdirSync(out).find((d) => d.startsWith('libstb-'));
    expect(webp && stb).toBeTruthy();
    // Files our own patches (cdeps/patches/<key>) change differ from Debian's tree by design: compare the others.
    const ours = ourPatchedFiles('libwebp');
    const compared = ['src/dec/vp8l_dec.c', 'src/utils/huffman_utils.c', 'src/enc/alpha_enc.c'].filter(
      (f) => !ours.includes(f),
    );
    expect(compared.length).toBeGreaterThan(1);
    for (const f of compared)
      expect(readFileSync(join(out, `${webp}`, f)), f).toEqual(
        readFileSync(join(ROOT, 'cdeps/src/libwebp', f)),
      );
    const oursStb = ourPatchedFiles('stb');
    const comparedStb = ['stb_image.h', 'stb_image_resize2.h', 'stb_image_write.h'].filter(
      (f) => !oursStb.includes(f),
    );
    expect(comparedStb.length).toBeGreaterThan(0);
    for (const f of comparedStb)
      expect(readFileSync(join(out, `${stb}`, f)), f).toEqual(readFileSync(join(ROOT, 'cdeps/src/stb', f)));
  });
});
