/**
 * The streaming PNG path (native/core/png-resize-stream.cpp: decode -> resize row by row, resized rows filtered
 * straight into the PNG encoder) against the whole-image path it replaced, through the public processMedia: real PNGs
 * made by sharp at test time (UI-like RGB, RGBA opaque / transparent at the top / only at the bottom, palette, grey,
 * 16-bit, odd sizes, one over maxEncodedBytes so the byte-cap ladder runs) give byte-identical outputs. The old path
 * is forced in a child process by the internal PANTO_PNG_STREAMING=0 (read once when the addon loads; not API), both
 * children run the built library (dist/) on the same addon build. Damaged streams keep their error codes.
 */
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processMedia } from '../../src/media/index.js';
import { PNG_SIGNATURE, pngChunk } from '../helpers/png-file.js';
import { distBuilt, StreamingSwitch } from './streaming-switch.js';
import { wasmFiles } from './wasm-build.js';

/** A UI-like RGB(A) canvas: flat panels, text-like stripes, a gradient strip (deterministic). */
function uiLike(
  width: number,
  height: number,
  channels: 3 | 4,
  alpha: (x: number, y: number) => number,
): Buffer {
  const out = Buffer.alloc(width * height * channels);
  let s = 99;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      s = (s * 1103515245 + 12345) >>> 0;
      const i = (y * width + x) * channels;
      const panel = ((x >> 6) + (y >> 5)) & 3;
      const text = y % 14 < 9 && x % 9 < 5 && (x >> 4) % 5 !== 0;
      const base = text ? 30 : 200 + panel * 15;
      out[i] = base;
      out[i + 1] = y > height - 40 ? (x * 255) / width : base - panel * 10;
      out[i + 2] = Math.min(255, base + ((s >>> 20) & 7));
      if (channels === 4) out[i + 3] = alpha(x, y);
    }
  }
  return out;
}

const sw = new StreamingSwitch('PANTO_PNG_STREAMING', 'png');
const cases = sw.cases;

beforeAll(async () => {
  const raw = (w: number, h: number, c: 3 | 4, a: (x: number, y: number) => number = () => 255) =>
    sharp(uiLike(w, h, c, a), { raw: { width: w, height: h, channels: c } });
  const add = sw.add.bind(sw);
  add('rgb 1441x901', await raw(1441, 901, 3).png().toBuffer(), { maxDimension: 1000 });
  add('rgba opaque 1203x777', await raw(1203, 777, 4).png().toBuffer(), { maxDimension: 1000 });
  add(
    'rgba transparent top',
    await raw(1100, 700, 4, (x, y) => (y < 3 && x < 100 ? 0 : 255))
      .png()
      .toBuffer(),
    { maxDimension: 900 },
  );
  add(
    'rgba transparent only in the last row',
    await raw(1100, 701, 4, (x, y) => (y === 700 && x % 3 === 0 ? 128 : 255))
      .png()
      .toBuffer(),
    { maxDimension: 900 },
  );
  add('palette', await raw(1200, 800, 3).png({ palette: true, colours: 64 }).toBuffer(), {
    maxDimension: 1000,
  });
  add('grey', await raw(999, 1301, 3).greyscale().png().toBuffer(), { maxDimension: 1000 });
  add('16-bit', await raw(1001, 703, 3).toColourspace('rgb16').png().toBuffer(), { maxDimension: 800 });
  add('shrink-on-load + resize (odd)', await raw(2503, 1601, 3).png().toBuffer(), { maxDimension: 777 });
  add('jpeg output', await raw(1441, 901, 3).png().toBuffer(), { maxDimension: 1000, format: 'jpeg' });
  // Noise defeats the PNG's compression: over maxEncodedBytes, the ladder takes the recovered resized pixels.
  const noise = Buffer.alloc(1300 * 900 * 3);
  let s = 7;
  for (let i = 0; i < noise.length; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    noise[i] = s >>> 24;
  }
  const noisy = await sharp(noise, { raw: { width: 1300, height: 900, channels: 3 } })
    .png({ compressionLevel: 1 })
    .toBuffer();
  add('over the byte cap (ladder)', noisy, { maxDimension: 1000, maxEncodedBytes: noisy.length * 2 });
  add('over the byte cap, png forced', noisy, {
    maxDimension: 1000,
    maxEncodedBytes: 900_000,
    format: 'png',
  });
  sw.writeFiles();
}, 60_000);

afterAll(() => sw.remove());

describe.runIf(distBuilt)('streaming PNG decode -> resize -> encode', () => {
  it('gives byte-identical outputs to the whole-image path', () => {
    const streamed = sw.expectStreamedMatchesWhole();
    // The cases really cover the ladder and both output kinds.
    const ladder = streamed[cases.findIndex((c) => c.name === 'over the byte cap (ladder)')];
    expect(ladder?.type).toBe('image/jpeg');
    expect(ladder?.changes).toContain('quality-reduced');
    expect(streamed.some((r) => r.type === 'image/png' && r.changes.includes('resized'))).toBe(true);
  }, 120_000);

  it(
    'the in-process result matches the child (same addon, streaming on)',
    () => sw.expectInProcessMatchesChild(),
    60_000,
  );
});

describe('streaming PNG path: damaged input', () => {
  it('keeps ERR_CORRUPT_MEDIA for a truncated zlib stream and ERR_ABORTED for an abort mid-call', async () => {
    const png = await sharp(
      uiLike(1600, 1000, 3, () => 255),
      { raw: { width: 1600, height: 1000, channels: 3 } },
    )
      .png({ compressionLevel: 9 })
      .toBuffer();
    // Cut the IDAT payload in half and rebuild the chunk (valid CRC), so only the zlib stream is short.
    const idat = png.indexOf('IDAT') - 4;
    const n = png.readUInt32BE(idat);
    const half = png.subarray(idat + 8, idat + 8 + Math.floor(n / 2));
    const head = png.subarray(PNG_SIGNATURE.length, idat);
    const truncated = Buffer.concat([
      Buffer.from(PNG_SIGNATURE),
      head,
      pngChunk('IDAT', half),
      pngChunk('IEND', Buffer.alloc(0)),
    ]);
    await expect(processMedia(truncated, { maxDimension: 1000 })).rejects.toMatchObject({
      code: 'ERR_CORRUPT_MEDIA',
    });
    const ac = new AbortController();
    const p = processMedia(png, { maxDimension: 1000, signal: ac.signal });
    ac.abort();
    await expect(p).rejects.toMatchObject({ code: 'ERR_ABORTED' });
  });
});

describe.runIf(wasmFiles)('streaming PNG path in WebAssembly (no threads: the resize pulls the rows)', () => {
  it('gives the native addon’s bytes for every case', () => sw.expectWasmMatchesNative(), 300_000);
});
