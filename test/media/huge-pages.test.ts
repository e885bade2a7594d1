import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processMedia } from '../../src/media/process-media.js';
import { gradientPng, noisePng } from './pixel-helpers.js';

const run = promisify(execFile);
const repo = path.resolve(import.meta.dirname, '..', '..');
let dir: string;

// Inputs whose decoded, resized and filtered buffers are all >= 2 MiB: the blocks the budget maps as huge pages.
const INPUTS = {
  'noise.png': () => noisePng(2400, 1600, 4, 7),
  'gradient.png': () => gradientPng(2880, 1800),
};

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'panto-huge-pages-'));
  for (const [name, make] of Object.entries(INPUTS)) await writeFile(path.join(dir, name), make());
  await writeFile(
    path.join(dir, 'hash.mjs'),
    `import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { processMedia } from ${JSON.stringify(path.join(repo, 'dist', 'media', 'index.js'))};
const out = {};
for (const name of process.argv.slice(2)) {
  const r = await processMedia(readFileSync(name));
  out[name] = createHash('sha256').update(r.data).digest('hex');
}
console.log(JSON.stringify(out));`,
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('PANTO_HUGE_PAGES=0 (no transparent huge page advice for large blocks)', () => {
  it('gives the same bytes as the default, on inputs whose every large buffer is a huge-page block', async () => {
    const names = Object.keys(INPUTS);
    const here: Record<string, string> = {};
    for (const [name, make] of Object.entries(INPUTS)) {
      const r = await processMedia(make());
      expect(r.changes).toContain('resized');
      here[name] = createHash('sha256').update(r.data).digest('hex');
    }
    const { stdout } = await run(process.execPath, ['hash.mjs', ...names], {
      cwd: dir,
      env: { ...process.env, PANTO_HUGE_PAGES: '0', PANTO_MEDIA_BACKEND: 'native' },
    });
    expect(JSON.parse(stdout)).toEqual(here);
  });
});
