/**
 * Hostile and odd INPUTS (issue 12): uninitialised memory, scan bombs, zlib overruns, the real files strict decoders
 * refuse, first-frame-only animation decoding, the process-wide memory cap and abort. Fast cases only; the bomb-scale
 * versions run in a child process per case in test/media/hostile-media.hostile.ts (`npm run test:hostile-media`).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_MEDIA_MEMORY_LIMIT,
  MediaError,
  mediaMemoryInFlight,
  processMedia,
  setMediaMemoryLimit,
} from '../../src/media/index.js';
import { toStoredParts } from '../../src/tools/store-parts.js';
import {
  type BmpV3Layout,
  bmpV3Bitfields,
  gifWithoutClearCode,
  jpegRedundantScans,
  jpegScanBomb,
  jpegSmallProgressive,
  pngPaletteOutOfRange,
  pngWithDamagedAncillary,
  pngZlibOverrun,
  vp8lPayload,
  webpAnimatedCanvas,
} from '../helpers/media-hostile.js';
import { decode, gradientPng, near, pixel, pngChunkTypes } from './pixel-helpers.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/media/', import.meta.url));
const fixture = (name: string): Buffer => readFileSync(`${FIXTURES}${name}`);

describe('uninitialised memory never reaches an image', () => {
  it('palette indices past the PLTE entries decode as opaque black', async () => {
    const png = pngPaletteOutOfRange(2);
    const colours = (data: Uint8Array): Set<string> => {
      const set = new Set<string>();
      for (let i = 0; i < data.length; i += 4) set.add(Array.from(data.subarray(i, i + 4)).join(','));
      return set;
    };
    expect(colours(decode(png).data)).toEqual(new Set(['255,0,0,255', '0,0,0,255']));
    const out = await processMedia(png, { format: 'png' });
    expect([...colours(decode(out.data).data)].sort()).toEqual(['0,0,0,255', '255,0,0,255'].sort());
  });
});

describe('progressive JPEG scan work is bounded', () => {
  it('a consistent progression whose scans decode ~250x the image is refused from the headers', async () => {
    await expect(processMedia(jpegScanBomb(10000, 10000))).rejects.toMatchObject({
      code: 'ERR_CORRUPT_MEDIA',
      message: expect.stringContaining('decoding cost'),
    });
  });

  it('a redundant progression (the same scan repeated) is refused', async () => {
    await expect(processMedia(jpegRedundantScans(4000, 4000, 50))).rejects.toMatchObject({
      code: 'ERR_CORRUPT_MEDIA',
      message: expect.stringContaining('redundant progression'),
    });
  });

  it('an ordinary progressive JPEG still decodes (built here and from a real encoder)', async () => {
    const small = await processMedia(jpegSmallProgressive(64, 64), { format: 'png' });
    expect([small.width, small.height]).toEqual([64, 64]);
    const real = await sharp(gradientPng(640, 480)).jpeg({ progressive: true, quality: 85 }).toBuffer();
    const out = await processMedia(real, { maxDimension: 320 });
    expect([out.mediaType, out.width, out.height]).toEqual(['image/jpeg', 320, 240]);
  });
});

describe('a zlib stream longer than the image is corrupt (never a reason to allocate more)', () => {
  for (const kind of ['rgb8', 'gray16'] as const) {
    it(`${kind} PNG`, async () => {
      const png = pngZlibOverrun(400, 300, 4, kind);
      await expect(processMedia(png, { maxDimension: 200 })).rejects.toMatchObject({
        code: 'ERR_CORRUPT_MEDIA',
      });
      // The same image with an exact stream decodes (the check is not a false alarm).
      const exact = pngZlibOverrun(400, 300, 1, kind);
      await expect(processMedia(exact, { maxDimension: 200 })).resolves.toMatchObject({
        width: 200,
        height: 150,
      });
    });
  }
});

describe('real files strict decoders refuse', () => {
  it('a GIF whose LZW data does not start with a clear code', async () => {
    const img = decode(gifWithoutClearCode());
    expect([pixel(img, 0, 0), pixel(img, 1, 0), pixel(img, 0, 1), pixel(img, 1, 1)]).toEqual([
      [255, 0, 0, 255],
      [0, 255, 0, 255],
      [0, 0, 255, 255],
      [255, 255, 255, 255],
    ]);
    await expect(processMedia(gifWithoutClearCode())).resolves.toMatchObject({ mediaType: 'image/png' });
  });

  const layouts: BmpV3Layout[] = ['rgb565', 'argb1555', 'argb4444', 'xrgb4444', 'argb8888'];
  for (const layout of layouts) {
    it(`a 56-byte V3 BMP with BI_BITFIELDS: ${layout}`, async () => {
      const out = await processMedia(bmpV3Bitfields(layout));
      expect(out.mediaType).toBe('image/png');
      const img = decode(out.data);
      expect(near(pixel(img, 0, 0), [255, 0, 0, 255], 2), `${layout} top-left`).toBe(true);
      expect(near(pixel(img, 1, 0), [0, 255, 0, 255], 2), `${layout} top-right`).toBe(true);
      expect(near(pixel(img, 0, 1), [0, 0, 255, 255], 2), `${layout} bottom-left`).toBe(true);
      expect(near(pixel(img, 1, 1), [255, 255, 255, 255], 2), `${layout} bottom-right`).toBe(true);
    });
  }

  it('a PNG whose only fault is a bad CRC on an ancillary chunk: the chunk is dropped, the image kept', async () => {
    const png = pngWithDamagedAncillary(fixture('png-rgb.png'), 'iCCP');
    for (const keepMetadata of [false, true]) {
      const out = await processMedia(png, { keepMetadata });
      expect(out.changes).toContain('metadata-stripped');
      expect(pngChunkTypes(out.data)).not.toContain('iCCP');
      expect(Buffer.compare(decode(out.data).data, decode(fixture('png-rgb.png')).data)).toBe(0);
    }
    const resized = await processMedia(png, { maxDimension: 16 });
    expect(resized.width).toBe(16);
    // Critical chunks stay strict.
    const idat = Buffer.from(fixture('png-rgb.png'));
    idat.writeUInt8((idat[idat.length - 20] as number) ^ 0xff, idat.length - 20);
    await expect(processMedia(idat)).rejects.toMatchObject({ code: 'ERR_CORRUPT_MEDIA' });
  });
});

describe('animations decode their first frame only', () => {
  it('an animated WebP: the first frame is placed on a transparent canvas', async () => {
    const red = await sharp({ create: { width: 1, height: 1, channels: 4, background: '#ff0000' } })
      .webp({ lossless: true })
      .toBuffer();
    const anim = webpAnimatedCanvas(vp8lPayload(red), 300, 200, 3);
    const out = await processMedia(anim, { format: 'png' });
    expect([out.width, out.height]).toEqual([300, 200]);
    expect(out.changes).toContain('first-frame');
    const img = decode(out.data);
    expect(pixel(img, 0, 0)).toEqual([255, 0, 0, 255]);
    expect(pixel(img, 150, 100)[3]).toBe(0);
  });
});

describe('process-wide memory cap', () => {
  afterEach(() => {
    setMediaMemoryLimit(DEFAULT_MEDIA_MEMORY_LIMIT);
  });

  it('a call whose header estimate exceeds the cap is refused before decoding, naming the limit', async () => {
    setMediaMemoryLimit(8 * 1024 * 1024);
    await expect(processMedia(gradientPng(1200, 900), { format: 'jpeg' })).rejects.toMatchObject({
      code: 'ERR_MEDIA_TOO_LARGE',
      message: expect.stringContaining('process-wide limit'),
    });
    // Pass-through decodes nothing and needs no reservation.
    await expect(processMedia(fixture('png-rgb.png'))).resolves.toBeDefined();
  });

  it('parallel calls that do not fit together queue: all succeed and the reserved total never exceeds the cap', async () => {
    const cap = 120 * 1024 * 1024; // one call's estimate (~90 MB) fits, two do not
    setMediaMemoryLimit(cap);
    const png = gradientPng(1200, 900);
    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, mediaMemoryInFlight());
    }, 1);
    try {
      const outs = await Promise.all(Array.from({ length: 6 }, () => processMedia(png, { format: 'jpeg' })));
      for (const o of outs) expect(o.mediaType).toBe('image/jpeg');
    } finally {
      clearInterval(sampler);
    }
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(cap);
    expect(mediaMemoryInFlight()).toBe(0);
  });

  it('rejects a nonsensical limit', () => {
    expect(() => setMediaMemoryLimit(1000)).toThrow(MediaError);
    expect(() => setMediaMemoryLimit(Number.NaN)).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }),
    );
  });
});

describe('abort', () => {
  it('an already aborted signal rejects with ERR_ABORTED before any work', async () => {
    const c = new AbortController();
    c.abort(new Error('stop'));
    await expect(processMedia(gradientPng(64, 64), { signal: c.signal })).rejects.toMatchObject({
      code: 'ERR_ABORTED',
    });
  });

  it('aborting mid-call rejects at once, and the native work releases its memory', async () => {
    const c = new AbortController();
    const p = processMedia(gradientPng(2400, 1800), { format: 'webp', signal: c.signal });
    setImmediate(() => c.abort());
    await expect(p).rejects.toMatchObject({ code: 'ERR_ABORTED' });
    await expect.poll(() => mediaMemoryInFlight(), { timeout: 20_000 }).toBe(0);
  });

  it('a non-AbortSignal signal is an invalid argument', async () => {
    await expect(processMedia(gradientPng(8, 8), { signal: {} as AbortSignal })).rejects.toMatchObject({
      code: 'ERR_INVALID_ARGUMENT',
    });
  });

  it('toStoredParts passes its signal on: an aborted turn drops the part with ERR_ABORTED', async () => {
    const c = new AbortController();
    c.abort();
    const outcomes: string[] = [];
    const parts = await toStoredParts([{ type: 'media', data: gradientPng(32, 32) }], {
      signal: c.signal,
      onMedia: (o) => outcomes.push(o.type === 'dropped' ? o.dropped.code : 'processed'),
    });
    expect(outcomes).toEqual(['ERR_ABORTED']);
    expect(parts[0]).toMatchObject({ type: 'text' });
  });
});
