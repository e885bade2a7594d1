/**
 * The streaming JPEG path (native/core/jpeg-resize-stream.cpp: libjpeg-turbo scanlines at the chosen M/8 scale ->
 * resize, row by row) against the whole-image path it replaced (decode -> resize_pixels), through the public
 * processMedia: real JPEGs made by sharp at test time (4:2:0, 4:4:4, progressive, grayscale, CMYK, every EXIF
 * orientation, odd sizes, targets at each DCT scale, forced PNG/WebP output, one over maxEncodedBytes so the byte-cap
 * ladder runs) give byte-identical outputs. The old path is forced in a child process by the internal
 * PANTO_JPEG_STREAMING=0 (read once when the addon loads; not API), the planar path off in both (PANTO_JPEG_PLANAR=0);
 * both children run the built library (dist/) on the same addon build. Damaged streams and aborts keep their error codes.
 */
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processMedia } from '../../src/media/index.js';
import { distBuilt, StreamingSwitch } from './streaming-switch.js';
import { wasmFiles } from './wasm-build.js';

/** A photo-like RGB canvas: gradients, a sharp bar and noise (deterministic). */
function photoLike(width: number, height: number): Buffer {
  const out = Buffer.alloc(width * height * 3);
  let s = 12345;
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

// The planar YCbCr path (native/core/jpeg-planar.cpp) off in both children: it takes JPEG -> JPEG without orientation
// and is checked on its own (jpeg-planar.test.ts); here the RGB stream is compared with the whole-image path.
const sw = new StreamingSwitch('PANTO_JPEG_STREAMING', 'jpg', { PANTO_JPEG_PLANAR: '0' });
const cases = sw.cases;

beforeAll(async () => {
  const raw = (w: number, h: number) => sharp(photoLike(w, h), { raw: { width: w, height: h, channels: 3 } });
  const add = sw.add.bind(sw);
  const photo = await raw(2017, 1511).jpeg({ quality: 90 }).toBuffer();
  // Targets decoding at 1/8, 2/8, 3/8, 4/8, 6/8 and 8/8 of 2017 px (then resized to the exact size).
  for (const d of [200, 401, 700, 1000, 1400, 1900])
    add(`4:2:0 2017x1511 -> ${d}`, photo, { maxDimension: d });
  add('4:4:4 odd', await raw(1203, 777).jpeg({ quality: 92, chromaSubsampling: '4:4:4' }).toBuffer(), {
    maxDimension: 500,
  });
  add('progressive', await raw(1441, 901).jpeg({ progressive: true }).toBuffer(), { maxDimension: 640 });
  add('grayscale', await raw(999, 1301).greyscale().jpeg().toBuffer(), { maxDimension: 600 });
  add('cmyk', await raw(1100, 700).toColourspace('cmyk').jpeg().toBuffer(), { maxDimension: 500 });
  for (let o = 2; o <= 8; o++)
    add(`exif orientation ${o}`, await raw(1203, 801).withMetadata({ orientation: o }).jpeg().toBuffer(), {
      maxDimension: 700,
    });
  add('png output', photo, { maxDimension: 800, format: 'png' });
  add('webp output', photo, { maxDimension: 800, format: 'webp' });
  // A high-quality noisy photo over maxEncodedBytes: the ladder re-encodes the resized pixels at lower quality.
  const noisy = await raw(1600, 1200).jpeg({ quality: 100, chromaSubsampling: '4:4:4' }).toBuffer();
  add('over the byte cap (ladder)', noisy, { maxDimension: 1100, maxEncodedBytes: 150_000, jpegQuality: 95 });
  sw.writeFiles();
}, 60_000);

afterAll(() => sw.remove());

describe.runIf(distBuilt)('streaming JPEG decode -> resize', () => {
  it('gives byte-identical outputs to the whole-image path', () => {
    const streamed = sw.expectStreamedMatchesWhole();
    // The cases really cover the ladder, orientation and every output kind.
    const ladder = streamed[cases.findIndex((c) => c.name === 'over the byte cap (ladder)')];
    expect(ladder?.changes).toContain('quality-reduced');
    expect(streamed.filter((r) => r.changes.includes('oriented')).length).toBe(7);
    for (const t of ['image/jpeg', 'image/png', 'image/webp'])
      expect(streamed.some((r) => r.type === t && r.changes.includes('resized'))).toBe(true);
  }, 120_000);

  it(
    'the in-process result matches the child (same addon, streaming on)',
    () => sw.expectInProcessMatchesChild(),
    60_000,
  );
});

describe('streaming JPEG path: damaged input and abort', () => {
  it('keeps ERR_CORRUPT_MEDIA for a cut stream and ERR_ABORTED for an abort mid-call', async () => {
    const jpeg = await sharp(photoLike(1600, 1000), { raw: { width: 1600, height: 1000, channels: 3 } })
      .jpeg({ progressive: true })
      .toBuffer();
    const cut = jpeg.subarray(0, Math.floor(jpeg.length / 2));
    await expect(processMedia(cut, { maxDimension: 700 })).rejects.toMatchObject({
      code: 'ERR_CORRUPT_MEDIA',
    });
    const ac = new AbortController();
    const p = processMedia(jpeg, { maxDimension: 700, signal: ac.signal });
    ac.abort();
    await expect(p).rejects.toMatchObject({ code: 'ERR_ABORTED' });
  });

  it('refuses a bad Huffman code in the middle of the data', async () => {
    // 0xFF 0x00 pairs decode as runs of one-bits: a code longer than 16 bits, which libjpeg-turbo's fast decoder used
    // to zero silently; ours hands the MCU to the checking decoder (cdeps/patches/libjpeg-turbo/0002). Files with
    // restart markers: native/tests/test-jpeg-huffman.cpp.
    const jpeg = await sharp(photoLike(1600, 1000), { raw: { width: 1600, height: 1000, channels: 3 } })
      .jpeg({ quality: 90 })
      .toBuffer();
    const bad = Buffer.from(jpeg);
    const at = Math.floor(bad.length / 2);
    for (let i = at; i < at + 40; i += 2) {
      bad[i] = 0xff;
      bad[i + 1] = 0x00;
    }
    // JPEG -> JPEG (planar), -> PNG (streamed RGB), and re-encoded at full size (a file that fits passes through
    // after a structure check, which does not decode the entropy data).
    for (const options of [
      { maxDimension: 700 },
      { maxDimension: 700, format: 'png' as const },
      { format: 'webp' as const },
    ]) {
      await expect(processMedia(Buffer.from(bad), options)).rejects.toMatchObject({
        code: 'ERR_CORRUPT_MEDIA',
        message: expect.stringContaining('bad Huffman code'),
      });
    }
  });
});

describe.runIf(wasmFiles)(
  'streaming JPEG path in WebAssembly (no threads: the resize pulls the rows)',
  () => {
    it('gives the native addon’s bytes for every case', () => sw.expectWasmMatchesNative(), 120_000);
  },
);
