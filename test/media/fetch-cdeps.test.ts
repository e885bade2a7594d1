import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPT = `${ROOT}scripts/fetch-cdeps.mjs`;
const PREPARED = process.env.PANTO_CDEPS_DIR;
const DEPS = PREPARED ?? `${ROOT}cdeps/.deps`;

function run(args: string[], env: Record<string, string> = {}) {
  const { PANTO_CDEPS_DIR: _, ...base } = process.env;
  return spawnSync(process.execPath, [SCRIPT, ...args], { env: { ...base, ...env }, encoding: 'utf8' });
}

describe('C dependency recipe (scripts/fetch-cdeps.mjs)', () => {
  it('names no registry host: the archive URI is read from the system at run time', () => {
    const text = readFileSync(SCRIPT, 'utf8');
    expect(text).not.toMatch(/https?:\/\//);
    expect(text).toContain('/etc/apt/sources.list.d/debian.sources');
  });

  it.skipIf(PREPARED !== undefined)(
    'once fetched, reports the pinned headers and static libraries without fetching again',
    () => {
      // The addon build (binding.gyp) has already run the recipe.
      const stamp = readFileSync(`${DEPS}/STAMP`, 'utf8');
      expect(stamp).toMatch(/^libstb-dev 0\.0~git20241109\.5c20573\+ds-1 [0-9a-f]{64}$/m);
      const r = run(['--print-libs']);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toBe(''); // nothing to fetch, nothing logged
      const libs = r.stdout.trim().split(' ');
      expect(libs.map((l) => l.slice(l.lastIndexOf('/') + 1))).toEqual([
        'libwebpdemux.a',
        'libwebp.a',
        'libdeflate.a',
      ]);
      for (const l of libs) expect(existsSync(l), l).toBe(true);
      expect(execFileSync(process.execPath, [SCRIPT, '--print-include'], { encoding: 'utf8' }).trim()).toBe(
        `${DEPS}/include`,
      );
    },
  );

  it('PANTO_CDEPS_DIR points the build at prepared headers and libraries', () => {
    const r = run(['--print-dir'], { PANTO_CDEPS_DIR: DEPS });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(DEPS);
  });

  it('a PANTO_CDEPS_DIR without the files fails naming what is missing and how to fix it', () => {
    const r = run(['--print-include'], { PANTO_CDEPS_DIR: '/nonexistent-panto-deps' });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('stb/stb_image.h');
    expect(r.stderr).toContain('libwebp.a');
    expect(r.stderr).toMatch(/set PANTO_CDEPS_DIR=\/path/);
  });
});
