/**
 * PNG decoding paths of native/core/png-decode.cpp: shrink-on-load (a PNG going to <= 1/k of its size is
 * box-averaged while it streams) against a full decode + resize and against sharp; the layouts the streaming path
 * took over from stb (palette, grey, grey+alpha, 16-bit) against sharp's decoder; zlib streams that overrun or fall
 * short of the image. Inputs are generated at test time (sharp or node:zlib).
 */
import { deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { processMedia } from '../../src/media/index.js';
import { PNG_SIGNATURE, pngChunk } from '../helpers/png-file.js';
import { decode } from './pixel-helpers.js';

/** Smooth photo-like RGB(A) content with fine texture (deterministic). */
function photoLike(width: number, height: number, channels: 3 | 4): Buffer {
  const out = Buffer.alloc(width * height * channels);
  let s = 12345;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      s = (s * 1103515245 + 12345) >>> 0;
      const n = ((s >>> 16) & 15) - 8;
      const i = (y * width + x) * channels;
      out[i] = Math.max(0, Math.min(255, 128 + 100 * Math.sin(x / 97) * Math.cos(y / 131) + n));
      out[i + 1] = Math.max(0, Math.min(255, 120 + 90 * Math.sin((x + y) / 173) + n));
      out[i + 2] = Math.max(0, Math.min(255, (x * 255) / width / 2 + (y * 255) / height / 2 + n));
      if (channels === 4) out[i + 3] = x < width / 3 ? 0 : 255;
    }
  }
  return out;
}

/** RGB(A) raw pixels of an encoded image, decoded by sharp (8 bits per sample). */
async function sharpRaw(bytes: Uint8Array, channels: 3 | 4) {
  const p = sharp(bytes);
  const { data, info } = await (channels === 4 ? p.ensureAlpha() : p.removeAlpha())
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/** PSNR over RGB of two same-sized raw images with `ca` / `cb` channels per pixel. */
function psnr(a: Buffer, ca: number, b: Buffer, cb: number, pixels: number): number {
  let se = 0;
  for (let p = 0; p < pixels; p++)
    for (let c = 0; c < 3; c++) {
      const d = (a[p * ca + c] ?? 0) - (b[p * cb + c] ?? 0);
      se += d * d;
    }
  const mse = se / (pixels * 3);
  return mse === 0 ? Number.POSITIVE_INFINITY : 10 * Math.log10((255 * 255) / mse);
}

/** An 8-bit RGB PNG whose IDAT holds `rows` deflated (filter bytes included by the caller). */
function rgbPng(width: number, height: number, rows: Uint8Array, depth = 8, colorType = 2): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = depth;
  ihdr[9] = colorType;
  return Buffer.concat([
    PNG_SIGNATURE,
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(rows)),
    pngChunk('IEND', new Uint8Array(0)),
  ]);
}

describe('PNG shrink-on-load', () => {
  const W = 2400;
  const H = 1800;
  const raw = photoLike(W, H, 3);

  it('a PNG going to <= 1/2 of its size matches a full decode + resize and sharp (PSNR >= 30 dB)', async () => {
    const png = await sharp(raw, { raw: { width: W, height: H, channels: 3 } })
      .png()
      .toBuffer();
    // The same pixels interlaced: stb decodes them at full size (no shrink-on-load), then the same resize.
    const interlaced = await sharp(raw, { raw: { width: W, height: H, channels: 3 } })
      .png({ progressive: true })
      .toBuffer();
    const opts = { maxDimension: 1000, format: 'png' as const };
    const shrunk = await processMedia(png, opts);
    const full = await processMedia(interlaced, opts);
    expect([shrunk.width, shrunk.height]).toEqual([1000, 750]);
    expect([full.width, full.height]).toEqual([1000, 750]);
    const ref = await sharp(png)
      .resize(1000, 1000, { fit: 'inside', kernel: 'mitchell' })
      .raw()
      .toBuffer({ resolveWithObject: true });
    expect([ref.info.width, ref.info.height]).toEqual([1000, 750]);
    const a = decode(shrunk.data);
    const b = decode(full.data);
    const vsFull = psnr(a.data, 4, b.data, 4, 1000 * 750);
    const vsSharp = psnr(a.data, 4, ref.data, ref.info.channels, 1000 * 750);
    expect(vsFull).toBeGreaterThanOrEqual(30);
    expect(vsSharp).toBeGreaterThanOrEqual(30);
  });

  it('shrinks a 4000x3000-class photo by exactly 2 to the target, odd sizes included', async () => {
    const w = 2001;
    const h = 1501;
    const px = photoLike(w, h, 3);
    const png = await sharp(px, { raw: { width: w, height: h, channels: 3 } })
      .png()
      .toBuffer();
    const r = await processMedia(png, { maxDimension: 1000, format: 'png' });
    expect([r.width, r.height]).toEqual([1000, 750]);
    const ref = await sharp(png)
      .resize(1000, 750, { fit: 'fill', kernel: 'mitchell' })
      .raw()
      .toBuffer({ resolveWithObject: true });
    expect(psnr(decode(r.data).data, 4, ref.data, ref.info.channels, 1000 * 750)).toBeGreaterThanOrEqual(30);
  });

  it('averages RGBA weighted by alpha: transparent pixels lend no colour to the shrunk edge', async () => {
    const w = 600;
    const h = 400;
    const px = Buffer.alloc(w * h * 4);
    for (let i = 0; i < w * h; i++) {
      const x = i % w;
      // Left: fully transparent RED; right: opaque blue. The edge (x = 302) falls inside a 5x5 block (k = 5).
      px.set(x < 302 ? [255, 0, 0, 0] : [0, 0, 255, 255], i * 4);
    }
    const png = await sharp(px, { raw: { width: w, height: h, channels: 4 } })
      .png()
      .toBuffer();
    const r = await processMedia(png, { maxDimension: 100, format: 'png' });
    expect([r.width, r.height]).toEqual([100, 67]);
    const img = decode(r.data);
    for (let y = 0; y < img.height; y++)
      for (let x = 0; x < img.width; x++) {
        const i = (y * img.width + x) * 4;
        const a = img.data[i + 3] ?? 0;
        if (a >= 32) expect(img.data[i] ?? 255).toBeLessThanOrEqual(16); // no red bleeding into visible pixels
      }
  });
});

describe('PNG layouts on the streaming path decode like sharp', () => {
  const W = 301;
  const H = 203;
  const rgba = photoLike(W, H, 4);
  const rgb = photoLike(W, H, 3);
  const cases: [string, () => Promise<Buffer>, 3 | 4][] = [
    [
      'palette 8-bit',
      () =>
        sharp(rgb, { raw: { width: W, height: H, channels: 3 } })
          .png({ palette: true, colours: 200, dither: 0 })
          .toBuffer(),
      3,
    ],
    [
      'palette 4-bit with tRNS',
      () =>
        sharp(rgba, { raw: { width: W, height: H, channels: 4 } })
          .png({ palette: true, colours: 16, dither: 0 })
          .toBuffer(),
      4,
    ],
    [
      'palette 1-bit',
      () =>
        sharp(rgb, { raw: { width: W, height: H, channels: 3 } })
          .png({ palette: true, colours: 2, dither: 0 })
          .toBuffer(),
      3,
    ],
    [
      'grey 8-bit',
      () =>
        sharp(rgb, { raw: { width: W, height: H, channels: 3 } })
          .toColourspace('b-w')
          .png()
          .toBuffer(),
      3,
    ],
    [
      'grey + alpha 8-bit',
      () =>
        sharp(rgba, { raw: { width: W, height: H, channels: 4 } })
          .toColourspace('b-w')
          .png()
          .toBuffer(),
      4,
    ],
    [
      'RGBA 16-bit',
      () =>
        sharp(rgba, { raw: { width: W, height: H, channels: 4 } })
          .toColourspace('rgb16')
          .png()
          .toBuffer(),
      4,
    ],
    [
      'RGB 16-bit',
      () =>
        sharp(rgb, { raw: { width: W, height: H, channels: 3 } })
          .toColourspace('rgb16')
          .png()
          .toBuffer(),
      3,
    ],
  ];
  for (const [name, make, channels] of cases) {
    it(name, async () => {
      const png = await make();
      const ours = decode(png);
      expect([ours.width, ours.height]).toEqual([W, H]);
      // 16-bit: compare with the 8-bit source (sharp widens v to v * 257, whose high byte is v).
      const want = name.includes('16-bit')
        ? { data: channels === 4 ? rgba : rgb }
        : await sharpRaw(png, channels);
      let worst = 0;
      for (let p = 0; p < W * H; p++)
        for (let c = 0; c < channels; c++) {
          const d = Math.abs((ours.data[p * 4 + c] ?? 0) - (want.data[p * channels + c] ?? 0));
          // Fully transparent pixels: colour is not compared.
          if (channels === 4 && c < 3 && (want.data[p * 4 + 3] ?? 0) === 0) continue;
          worst = Math.max(worst, d);
        }
      expect(worst).toBeLessThanOrEqual(1);
      // Shrunk on load too (the streaming path with k = 2).
      const r = await processMedia(png, { maxDimension: 150, format: 'png' });
      expect(Math.max(r.width, r.height)).toBe(150);
    });
  }
});

describe('PNG zlib streams that do not match the image', () => {
  const w = 64;
  const h = 48;
  const rows = Buffer.alloc((w * 3 + 1) * h, 7);
  for (let y = 0; y < h; y++) rows[y * (w * 3 + 1)] = 0;

  it('a stream longer than the image is ERR_CORRUPT_MEDIA (whole-buffer path)', async () => {
    const png = rgbPng(w, h, Buffer.concat([rows, rows, rows, rows]));
    await expect(processMedia(png, { format: 'png', maxDimension: 63 })).rejects.toMatchObject({
      code: 'ERR_CORRUPT_MEDIA',
    });
  });

  it('a stream longer than the image is ERR_CORRUPT_MEDIA (streaming path, shrinking)', async () => {
    const png = rgbPng(w, h, Buffer.concat([rows, rows, rows, rows]));
    await expect(processMedia(png, { format: 'png', maxDimension: 16 })).rejects.toMatchObject({
      code: 'ERR_CORRUPT_MEDIA',
      message: expect.stringContaining('overruns'),
    });
  });

  it('a stream shorter than the image is ERR_CORRUPT_MEDIA on both paths', async () => {
    const png = rgbPng(w, h, rows.subarray(0, rows.length - (w * 3 + 1) * 3));
    for (const maxDimension of [63, 16])
      await expect(processMedia(png, { format: 'png', maxDimension })).rejects.toMatchObject({
        code: 'ERR_CORRUPT_MEDIA',
      });
  });

  it('an unknown filter type is ERR_CORRUPT_MEDIA on both paths', async () => {
    const bad = Buffer.from(rows);
    bad[10 * (w * 3 + 1)] = 9;
    const png = rgbPng(w, h, bad);
    for (const maxDimension of [63, 16])
      await expect(processMedia(png, { format: 'png', maxDimension })).rejects.toMatchObject({
        code: 'ERR_CORRUPT_MEDIA',
      });
  });
});
