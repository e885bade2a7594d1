/**
 * A GIF's first frame resized through the row stream (native/core/decoded-resize-stream.cpp: stb's whole canvas fed
 * row by row to the resize, its pages given back as they are consumed) against drop_alpha -> resize_pixels, through
 * the public processMedia: real GIFs made by sharp at test time (opaque, with transparency, animated, odd sizes,
 * forced formats, over maxEncodedBytes so the ladder runs) give byte-identical outputs. The old path is forced in a
 * child process by the internal PANTO_GIF_STREAMING=0 (read once when the addon loads; not API).
 */
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { distBuilt, StreamingSwitch } from './streaming-switch.js';

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

const sw = new StreamingSwitch('PANTO_GIF_STREAMING', 'gif');
const cases = sw.cases;

beforeAll(async () => {
  const gif = (w: number, h: number, seed: number, hole = false) =>
    sharp(pixels(w, h, seed, hole), { raw: { width: w, height: h, channels: 4 } })
      .gif()
      .toBuffer();
  const add = sw.add.bind(sw);
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
  sw.writeFiles();
}, 60_000);

afterAll(() => sw.remove());

describe.runIf(distBuilt)('GIF first frame resized through the row stream', () => {
  it('gives byte-identical outputs to drop_alpha -> resize_pixels', () => {
    const streamed = sw.expectStreamedMatchesWhole();
    const ladder = streamed[cases.findIndex((c) => c.name.includes('ladder'))];
    expect(ladder?.changes).toContain('quality-reduced');
    expect(streamed[cases.findIndex((c) => c.name.startsWith('animated'))]?.changes).toContain('first-frame');
    for (const t of ['image/jpeg', 'image/png', 'image/webp'])
      expect(streamed.some((r) => r.type === t && r.changes.includes('resized'))).toBe(true);
  }, 120_000);
});
