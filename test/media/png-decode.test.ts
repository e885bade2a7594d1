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

/**
 * A PNG whose rows carry a random filter type each (None, Sub, Up, Average, Paeth), filtered here from `raw` (the
 * unfiltered rows, `rowBytes` each), so every filter meets every pixel size. IDAT split in 8 KiB chunks.
 */
function filteredPng(
  width: number,
  height: number,
  depth: number,
  colorType: number,
  raw: Uint8Array,
  rnd: () => number,
  extra: Buffer[] = [],
): Buffer {
  const samples = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }[colorType] ?? 1;
  const rowBytes = Math.ceil((width * samples * depth) / 8);
  const bpp = Math.max(1, (samples * depth) / 8);
  const rows = Buffer.alloc((rowBytes + 1) * height);
  const at = (y: number, i: number) => (y >= 0 && i >= 0 ? (raw[y * rowBytes + i] ?? 0) : 0);
  for (let y = 0; y < height; y++) {
    const f = rnd() % 5;
    rows[y * (rowBytes + 1)] = f;
    for (let i = 0; i < rowBytes; i++) {
      const a = at(y, i - bpp);
      const b = at(y - 1, i);
      const c = at(y - 1, i - bpp);
      const p = a + b - c;
      const pa = Math.abs(p - a);
      const pb = Math.abs(p - b);
      const pc = Math.abs(p - c);
      const paeth = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      const pred = [0, a, b, (a + b) >> 1, paeth][f] ?? 0;
      rows[y * (rowBytes + 1) + 1 + i] = (at(y, i) - pred) & 0xff;
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = depth;
  ihdr[9] = colorType;
  const z = deflateSync(rows);
  const idat: Buffer[] = [];
  for (let o = 0; o < z.length; o += 8192) idat.push(pngChunk('IDAT', z.subarray(o, o + 8192)));
  return Buffer.concat([
    PNG_SIGNATURE,
    pngChunk('IHDR', ihdr),
    ...extra,
    ...idat,
    pngChunk('IEND', new Uint8Array(0)),
  ]);
}

/** Deterministic bytes: smooth ramps with noise and some random bytes, so every predictor has work to do. */
function seeded(seed: number) {
  let s = seed;
  const next = () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return s >>> 8;
  };
  return next;
}

describe('PNG filters (Sub, Up, Average, Paeth) on every pixel size', () => {
  // [depth, colour type, palette entries, tRNS entries]: bpp 1 (grey 8, palette), 2 (grey 16, grey+alpha 8),
  // 3 (RGB 8), 4 (RGBA 8, grey+alpha 16), 6 (RGB 16), 8 (RGBA 16), and sub-byte palettes.
  const layouts: [number, number, number, number][] = [
    [8, 0, 0, 0],
    [16, 0, 0, 0],
    [8, 4, 0, 0],
    [8, 2, 0, 0],
    [8, 6, 0, 0],
    [16, 4, 0, 0],
    [16, 2, 0, 0],
    [16, 6, 0, 0],
    [8, 3, 200, 40],
    [4, 3, 16, 0],
    [2, 3, 4, 3],
    [1, 3, 2, 0],
  ];
  for (const [depth, ct, plteN, trnsN] of layouts) {
    it(`depth ${depth}, colour type ${ct}: decoded pixels are the ones the rows were filtered from`, () => {
      for (const [width, height] of [
        [1, 4],
        [7, 5],
        [301, 67],
      ] as const) {
        const rnd = seeded(width * 131 + depth * 7 + ct);
        const samples = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }[ct] ?? 1;
        const rowBytes = Math.ceil((width * samples * depth) / 8);
        const raw = Buffer.alloc(rowBytes * height);
        for (let y = 0; y < height; y++)
          for (let i = 0; i < rowBytes; i++) {
            const smooth = 128 + Math.round(100 * Math.sin(i / 17 + y / 23));
            raw[y * rowBytes + i] =
              ct === 3 || rnd() % 8 === 0 ? rnd() & 0xff : (smooth + (rnd() & 7)) & 0xff;
          }
        const plte = Buffer.alloc(plteN * 3);
        for (let i = 0; i < plte.length; i++) plte[i] = rnd() & 0xff;
        const trns = Buffer.alloc(trnsN);
        for (let i = 0; i < trnsN; i++) trns[i] = rnd() & 0xff;
        const extra = ct === 3 ? [pngChunk('PLTE', plte), ...(trnsN ? [pngChunk('tRNS', trns)] : [])] : [];
        const got = decode(filteredPng(width, height, depth, ct, raw, rnd, extra));
        expect([got.width, got.height]).toEqual([width, height]);
        // The expected RGBA of each pixel straight from `raw`: 16-bit samples keep their high byte; palette
        // indices past PLTE are opaque black.
        const want = Buffer.alloc(width * height * 4);
        const bytesPer = depth / 8;
        for (let y = 0; y < height; y++)
          for (let x = 0; x < width; x++) {
            const row = y * rowBytes;
            const sample = (k: number) => raw[row + (x * samples + k) * bytesPer] ?? 0;
            let px: number[];
            if (ct === 3) {
              const bit = x * depth;
              const idx = ((raw[row + (bit >> 3)] ?? 0) >> (8 - depth - (bit & 7))) & ((1 << depth) - 1);
              px =
                idx < plteN
                  ? [
                      plte[idx * 3] ?? 0,
                      plte[idx * 3 + 1] ?? 0,
                      plte[idx * 3 + 2] ?? 0,
                      idx < trnsN ? (trns[idx] ?? 0) : 255,
                    ]
                  : [0, 0, 0, 255];
            } else if (ct === 0) px = [sample(0), sample(0), sample(0), 255];
            else if (ct === 4) px = [sample(0), sample(0), sample(0), sample(1)];
            else if (ct === 2) px = [sample(0), sample(1), sample(2), 255];
            else px = [sample(0), sample(1), sample(2), sample(3)];
            want.set(px, (y * width + x) * 4);
          }
        expect(got.data.equals(want), `${width}x${height}`).toBe(true);
      }
    });
  }

  it('shrink-on-load box-averages the unfiltered rows exactly (k = 2, 3, 4, 6; RGB and alpha-weighted RGBA)', async () => {
    for (const channels of [3, 4] as const) {
      for (const k of [2, 3, 4, 6]) {
        const ow = 40;
        const oh = 24;
        const width = ow * k;
        const height = oh * k;
        const rnd = seeded(k * 17 + channels);
        const raw = Buffer.alloc(width * height * channels);
        for (let i = 0; i < raw.length; i++) raw[i] = rnd() & 0xff;
        // Alpha: transparent, opaque and in-between blocks.
        if (channels === 4)
          for (let p = 0; p < width * height; p++) raw[p * 4 + 3] = [0, 255, rnd() & 0xff][p % 3] ?? 0;
        const png = filteredPng(width, height, 8, channels === 4 ? 6 : 2, raw, rnd);
        // The target is exactly 1/k of the image: the shrunk decode is the output (no resize), encoded losslessly.
        const r = await processMedia(png, { maxDimension: ow, format: 'png' });
        expect([r.width, r.height]).toEqual([ow, oh]);
        const got = decode(r.data);
        for (let by = 0; by < oh; by++)
          for (let bx = 0; bx < ow; bx++) {
            const n = k * k;
            const t = [0, 0, 0, 0];
            for (let y = by * k; y < by * k + k; y++)
              for (let x = bx * k; x < bx * k + k; x++) {
                const i = (y * width + x) * channels;
                const a = channels === 4 ? (raw[i + 3] ?? 0) : 1;
                for (let c = 0; c < 3; c++) t[c] = (t[c] ?? 0) + (raw[i + c] ?? 0) * a;
                t[3] = (t[3] ?? 0) + a;
              }
            const o = (by * ow + bx) * 4;
            const alpha = channels === 4 ? Math.floor(((t[3] ?? 0) + (n >> 1)) / n) : 255;
            const sumA = t[3] ?? 0;
            const want = [0, 1, 2].map((c) =>
              channels === 3
                ? Math.floor(((t[c] ?? 0) + (n >> 1)) / n)
                : sumA
                  ? Math.min(255, Math.floor(((t[c] ?? 0) + (sumA >> 1)) / sumA))
                  : 0,
            );
            const have = [got.data[o], got.data[o + 1], got.data[o + 2], got.data[o + 3]];
            if (alpha === 0) expect(have[3], `k ${k} block ${bx},${by}`).toBe(0);
            else expect(have, `k ${k} c ${channels} block ${bx},${by}`).toEqual([...want, alpha]);
          }
      }
    }
  });
});
