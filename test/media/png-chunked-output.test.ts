/**
 * The PNG encoder's chunked zlib stream (native/core/png-encode.cpp: 512 KiB of filtered rows per libdeflate call,
 * each but the last ended by a sync flush, cdeps/patches/libdeflate) seen from the public processMedia: lossless
 * WebP inputs (made by sharp at test time) converted to PNG must come back pixel for pixel, through sharp's decoder
 * and through node:zlib inflating the IDAT data (a second, independent inflater that checks the Adler-32 and the
 * stream's end), for images of one chunk, many chunks, rows straddling chunk boundaries and a single row. Huge rows
 * wider than a chunk, exact multiples of the chunk, abort mid-chunk and the ladder are in ctest `png`
 * (native/tests/test-png-chunks.cpp).
 */
import { inflateSync } from 'node:zlib';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { processMedia } from '../../src/media/index.js';

/** Deterministic UI-like content with noise in the low bits (so deflate has work and chunks matter). */
function pixels(width: number, height: number, channels: 3 | 4): Buffer {
  const out = Buffer.alloc(width * height * channels);
  let s = width * 31 + height;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      s = (s * 1103515245 + 12345) >>> 0;
      const i = (y * width + x) * channels;
      const flat = ((x >> 6) + (y >> 5)) % 3 === 0;
      out[i] = flat ? 240 : (x * 3 + y) & 255;
      out[i + 1] = flat ? 240 : ((x ^ y) + ((s >>> 20) & 15)) & 255;
      out[i + 2] = flat ? 250 : (y * 5 + ((s >>> 24) & 7)) & 255;
      if (channels === 4) out[i + 3] = x % 7 === 0 ? 128 : 255;
    }
  }
  return out;
}

/** The concatenated IDAT data of a PNG. */
function idat(png: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let i = 8; i + 8 <= png.length; ) {
    const n = png.readUInt32BE(i);
    if (png.toString('latin1', i + 4, i + 8) === 'IDAT') parts.push(png.subarray(i + 8, i + 8 + n));
    i += 12 + n;
  }
  return Buffer.concat(parts);
}

describe('chunked PNG output', () => {
  const cases: [string, number, number, 3 | 4][] = [
    ['one row (16000 px RGB, under one chunk)', 16000, 1, 3],
    ['many chunks, rows straddling their boundaries (RGB)', 1777, 1111, 3],
    ['many chunks (RGBA)', 1500, 999, 4],
    ['one small image (RGB)', 37, 23, 3],
  ];
  for (const [name, width, height, channels] of cases) {
    it(`${name}: pixels survive, and node:zlib inflates the stream exactly`, async () => {
      const raw = pixels(width, height, channels);
      const webp = await sharp(raw, { raw: { width, height, channels } }).webp({ lossless: true }).toBuffer();
      const r = await processMedia(webp, { format: 'png', maxDimension: 20000, maxEncodedBytes: 64 << 20 });
      expect(r.mediaType).toBe('image/png');
      expect([r.width, r.height]).toEqual([width, height]);
      const png = Buffer.from(r.data);
      const filtered = inflateSync(idat(png)); // throws on a damaged stream or a wrong Adler-32
      expect(filtered.length).toBe((width * channels + 1) * height);
      const back = await sharp(png).raw().toBuffer({ resolveWithObject: true });
      expect(back.info.channels).toBe(channels);
      expect(back.data.equals(raw)).toBe(true);
    }, 60_000);
  }
});
