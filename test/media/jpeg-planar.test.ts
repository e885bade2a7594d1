/**
 * The planar YCbCr JPEG -> JPEG path (native/core/jpeg-planar.cpp: libjpeg-turbo's raw planes at the DCT scale, each
 * plane resized on its own, the encoder's raw input) through the public processMedia, on real JPEGs made by sharp
 * (4:2:0, 4:4:4, 4:2:2, progressive, odd sizes, each DCT scale): against the RGB stream it replaces (forced in a child
 * process on the native addon by the internal PANTO_JPEG_PLANAR=0, read once when the addon loads; not API), the same size, media type
 * and changes, and pixels within a JPEG's rounding (PSNR >= 38 dB). Files it does not take (grey, CMYK, EXIF-rotated,
 * other output formats) give the RGB stream's bytes exactly.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processMedia } from '../../src/media/index.js';
import { distBuilt } from './streaming-switch.js';

const DIST = join(import.meta.dirname, '..', '..', 'dist', 'media', 'index.js');

/** A photo-like RGB canvas: gradients, a sharp bar and noise (deterministic). */
function photoLike(width: number, height: number): Buffer {
  const out = Buffer.alloc(width * height * 3);
  let s = 987;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      s = (s * 1103515245 + 12345) >>> 0;
      const i = (y * width + x) * 3;
      const bar = x > width / 3 && x < width / 3 + 11;
      const n = ((s >>> 24) & 15) - 8;
      out[i] = Math.max(0, Math.min(255, (bar ? 240 : (x * 255) / width) + n));
      out[i + 1] = Math.max(0, Math.min(255, (y * 255) / height + n));
      out[i + 2] = Math.max(0, Math.min(255, ((x + y) * 127) / (width + height) + 60 + n));
    }
  }
  return out;
}

interface Case {
  name: string;
  input: Buffer;
  options: Record<string, unknown>;
  planar: boolean;
}

const cases: Case[] = [];
let dir = '';

async function psnr(a: Buffer, b: Buffer): Promise<number> {
  const x = await sharp(a).raw().toBuffer();
  const y = await sharp(b).raw().toBuffer();
  if (x.length !== y.length) return -1;
  let se = 0;
  for (let i = 0; i < x.length; i++) se += ((x[i] as number) - (y[i] as number)) ** 2;
  return se === 0 ? 99 : 10 * Math.log10((255 * 255) / (se / x.length));
}

/** Every case through processMedia in a child with the planar path off; base64 outputs and their descriptions. */
function rgbStreamChild(): {
  data: string;
  mediaType: string;
  width: number;
  height: number;
  changes: string[];
}[] {
  const script = `
    const { readFileSync } = require('node:fs');
    (async () => {
      const { processMedia } = await import(${JSON.stringify(DIST)});
      const out = [];
      for (const c of JSON.parse(process.argv[1])) {
        const r = await processMedia(readFileSync(c.file), c.options);
        out.push({ data: r.data.toString('base64'), mediaType: r.mediaType, width: r.width, height: r.height,
          changes: r.changes });
      }
      process.stdout.write(JSON.stringify(out));
    })().catch((e) => { console.error(e); process.exit(1); });`;
  const arg = JSON.stringify(cases.map((c, i) => ({ file: join(dir, `${i}.jpg`), options: c.options })));
  // The native addon (the switch is read from the process environment, which the wasm build does not see): under
  // the wasm suite this process runs the wasm build, which gives the native bytes (wasm-backend.test.ts).
  const env: NodeJS.ProcessEnv = { ...process.env, PANTO_JPEG_PLANAR: '0' };
  delete env.PANTO_MEDIA_BACKEND;
  const r = spawnSync(process.execPath, ['-e', script, arg], {
    env,
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  if (r.status !== 0) throw new Error(`child failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

beforeAll(async () => {
  const raw = (w: number, h: number) => sharp(photoLike(w, h), { raw: { width: w, height: h, channels: 3 } });
  const add = (name: string, input: Buffer, options: Record<string, unknown>, planar = true) =>
    cases.push({ name, input, options, planar });
  const p420 = await raw(2017, 1511).jpeg({ quality: 90 }).toBuffer();
  const p444 = await raw(1601, 1203).jpeg({ quality: 90, chromaSubsampling: '4:4:4' }).toBuffer();
  const prog = await raw(1499, 1001).jpeg({ quality: 85, progressive: true }).toBuffer();
  // 1/8, 2/8, 4/8 and full-size decodes, then the resize.
  for (const maxDimension of [240, 500, 1000, 1800]) add(`4:2:0 -> ${maxDimension}`, p420, { maxDimension });
  for (const maxDimension of [301, 1000]) add(`4:4:4 -> ${maxDimension}`, p444, { maxDimension });
  for (const maxDimension of [187, 777]) add(`progressive -> ${maxDimension}`, prog, { maxDimension });
  // Not taken: grey, EXIF orientation, forced PNG.
  const grey = await raw(1200, 900).greyscale().jpeg({ quality: 90 }).toBuffer();
  add('grey', grey, { maxDimension: 700 }, false);
  const rotated = await raw(1200, 900).withMetadata({ orientation: 6 }).jpeg({ quality: 90 }).toBuffer();
  add('orientation 6', rotated, { maxDimension: 700 }, false);
  add('forced PNG', p420, { maxDimension: 700, format: 'png' }, false);
  dir = mkdtempSync(join(tmpdir(), 'panto-jpeg-planar-'));
  for (const [i, c] of cases.entries()) writeFileSync(join(dir, `${i}.jpg`), c.input);
}, 120_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!distBuilt)('planar YCbCr JPEG -> JPEG', () => {
  it('gives the RGB stream’s size, type and changes, pixels within rounding; other files its exact bytes', async () => {
    const rgb = rgbStreamChild();
    for (const [i, c] of cases.entries()) {
      const ours = await processMedia(c.input, c.options);
      const theirs = rgb[i];
      expect(theirs, c.name).toBeDefined();
      if (!theirs) continue;
      expect([ours.mediaType, ours.width, ours.height, ours.changes], c.name).toEqual([
        theirs.mediaType,
        theirs.width,
        theirs.height,
        theirs.changes,
      ]);
      const other = Buffer.from(theirs.data, 'base64');
      if (c.planar) {
        expect(ours.data.equals(other), `${c.name}: planar bytes`).toBe(false);
        expect(await psnr(ours.data, other), c.name).toBeGreaterThanOrEqual(38);
      } else {
        expect(ours.data.equals(other), `${c.name}: same bytes`).toBe(true);
      }
    }
  }, 120_000);
});
