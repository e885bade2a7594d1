/**
 * A GIF's first frame resized through the row stream (native/core/decoded-resize-stream.cpp: stb's whole canvas fed
 * row by row to the resize, its pages given back as they are consumed) against drop_alpha -> resize_pixels, through
 * the public processMedia: real GIFs made by sharp at test time (opaque, with transparency, animated, odd sizes,
 * forced formats, over maxEncodedBytes so the ladder runs) give byte-identical outputs. The old path is forced in a
 * child process by the internal PANTO_GIF_STREAMING=0 (read once when the addon loads; not API).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const DIST = join(ROOT, 'dist', 'media', 'index.js');

/** Photo-like RGBA pixels (deterministic); `hole` makes a transparent rectangle. */
function pixels(width: number, height: number, seed: number, hole = false): Buffer {
  const out = Buffer.alloc(width * height * 4);
  let s = seed;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      s = (s * 1103515245 + 12345) >>> 0;
      const i = (y * width + x) * 4;
      out[i] = (x * 255) / width;
      out[i + 1] = ((y * 255) / height + ((s >>> 24) & 31)) & 255;
      out[i + 2] = x > width / 3 && x < width / 3 + 9 ? 250 : ((x + y) * 90) / (width + height);
      out[i + 3] = hole && x > width / 4 && x < width / 2 && y > height / 4 && y < height / 2 ? 0 : 255;
    }
  }
  return out;
}

interface Case {
  name: string;
  gif: Buffer;
  options: Record<string, unknown>;
}

let dir = '';
const cases: Case[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'panto-gif-stream-'));
  const gif = (w: number, h: number, seed: number, hole = false) =>
    sharp(pixels(w, h, seed, hole), { raw: { width: w, height: h, channels: 4 } })
      .gif()
      .toBuffer();
  const add = (name: string, g: Buffer, options: Record<string, unknown>) =>
    cases.push({ name, gif: g, options });
  const opaque = await gif(1201, 803, 3);
  add('opaque -> png', opaque, { maxDimension: 700 });
  add('opaque -> jpeg', opaque, { maxDimension: 333, format: 'jpeg' });
  add('opaque, over the byte cap (ladder)', opaque, { maxDimension: 900, maxEncodedBytes: 60_000 });
  const holed = await gif(999, 1301, 4, true);
  add('transparent -> png', holed, { maxDimension: 600 });
  add('transparent -> webp', holed, { maxDimension: 600, format: 'webp' });
  const frames = Buffer.concat([pixels(800, 500, 5), pixels(800, 500, 6)]);
  const animated = await sharp(frames, { raw: { width: 800, height: 1000, channels: 4, pageHeight: 500 } })
    .gif({ delay: [100, 100], loop: 0 })
    .toBuffer();
  add('animated (first frame)', animated, { maxDimension: 500 });
  for (const [i, c] of cases.entries()) writeFileSync(join(dir, `${i}.gif`), c.gif);
}, 60_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function runChild(
  streaming: boolean,
): { hash: string; type: string; width: number; height: number; changes: string[] }[] {
  const script = `
    const { readFileSync } = require('node:fs');
    const { createHash } = require('node:crypto');
    (async () => {
      const { processMedia } = await import(${JSON.stringify(DIST)});
      const cases = JSON.parse(process.argv[1]);
      const out = [];
      for (const c of cases) {
        const r = await processMedia(readFileSync(c.file), c.options);
        out.push({ hash: createHash('sha256').update(r.data).digest('hex'), type: r.mediaType, width: r.width,
          height: r.height, changes: r.changes });
      }
      process.stdout.write(JSON.stringify(out));
    })().catch((e) => { console.error(e); process.exit(1); });`;
  const arg = JSON.stringify(cases.map((c, i) => ({ file: join(dir, `${i}.gif`), options: c.options })));
  const env = { ...process.env };
  if (streaming) delete env.PANTO_GIF_STREAMING;
  else env.PANTO_GIF_STREAMING = '0';
  const r = spawnSync(process.execPath, ['-e', script, arg], { env, encoding: 'utf8', maxBuffer: 1 << 24 });
  if (r.status !== 0) throw new Error(`child failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

describe.runIf(existsSync(DIST))('GIF first frame resized through the row stream', () => {
  it('gives byte-identical outputs to drop_alpha -> resize_pixels', () => {
    const whole = runChild(false);
    const streamed = runChild(true);
    expect(streamed.length).toBe(cases.length);
    for (let i = 0; i < cases.length; i++) {
      expect({ name: cases[i]?.name, ...streamed[i] }).toEqual({ name: cases[i]?.name, ...whole[i] });
    }
    const ladder = streamed[cases.findIndex((c) => c.name.includes('ladder'))];
    expect(ladder?.changes).toContain('quality-reduced');
    expect(streamed[cases.findIndex((c) => c.name.startsWith('animated'))]?.changes).toContain('first-frame');
    for (const t of ['image/jpeg', 'image/png', 'image/webp'])
      expect(streamed.some((r) => r.type === t && r.changes.includes('resized'))).toBe(true);
  }, 120_000);
});
