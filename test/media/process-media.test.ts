import { describe, expect, it } from 'vitest';
import {
  DEFAULT_PROCESS_OPTIONS,
  MediaError,
  probeMedia,
  processMedia,
  sniffMedia,
} from '../../src/media/index.js';
import { loadNativeAddon } from '../../src/media/native-addon.js';
import {
  decode,
  fixture,
  gradientPng,
  jpegMarkers,
  makePixels,
  makePng,
  meanAbsDiff,
  near,
  noisePng,
  PICTURE_POINTS,
  pixel,
  pngChunkTypes,
  psnr,
  type Rgba,
} from './pixel-helpers.js';

/** Expects the reference picture (test/fixtures/media/README.md) at `scale` (1 = 64x48). */
function expectPicture(img: Rgba, label: string, scale = 1, tol = 24): void {
  expect([img.width, img.height], label).toEqual([Math.round(64 * scale), Math.round(48 * scale)]);
  for (const p of PICTURE_POINTS) {
    const got = pixel(img, Math.floor(p.x * scale), Math.floor(p.y * scale));
    expect(near(got, p.rgb, tol), `${label}: ${p.name} at (${p.x},${p.y}) is ${got}`).toBe(true);
  }
}

describe('pass-through', () => {
  for (const file of ['png-rgb.png', 'jpeg-baseline.jpg', 'jpeg-progressive.jpg', 'webp-lossy.webp']) {
    it(`${file}: small, upright, no privacy metadata -> the same bytes`, async () => {
      const input = fixture(file);
      const r = await processMedia(input);
      expect(r.changes).toEqual([]);
      expect(r.data.equals(input)).toBe(true);
      expect(r.data.buffer).not.toBe(input.buffer); // a new Buffer the caller owns
      expect(r.original).toMatchObject({ width: 64, height: 48, byteLength: input.length, frames: 1 });
    });
  }

  it('a still GIF, even small and upright, becomes PNG (Gemini takes no GIF): same pixels', async () => {
    const input = fixture('gif-still.gif');
    const r = await processMedia(input);
    expect(r.mediaType).toBe('image/png');
    expect(r.changes).toEqual(expect.arrayContaining(['converted']));
    expect(r.changes).not.toContain('resized');
    expect([r.width, r.height]).toEqual([64, 48]);
    expect(meanAbsDiff(decode(r.data), decode(input))).toBe(0);
  });

  it('JPEG: strips EXIF (GPS), XMP and comments losslessly, keeps the ICC profile and the entropy-coded data', async () => {
    const input = fixture('jpeg-metadata.jpg');
    expect(input.includes('Jane Doe')).toBe(true);
    const r = await processMedia(input);
    expect(r.mediaType).toBe('image/jpeg');
    expect(r.changes).toEqual(['metadata-stripped']);
    for (const secret of [
      'Jane Doe',
      'PantoCam',
      'secret comment',
      'Exif\0\0',
      'http://ns.adobe.com/xap/1.0/',
    ]) {
      expect(r.data.includes(secret), secret).toBe(false);
    }
    expect(r.data.includes('ICC_PROFILE\0')).toBe(true);
    expect(jpegMarkers(r.data).filter((m) => m === 0xe1 || m === 0xfe)).toEqual([]);
    // Lossless: everything from the first scan on is byte-identical, and so are the decoded pixels.
    const sos = (b: Buffer) => b.subarray(b.indexOf(Buffer.from([0xff, 0xda])));
    expect(sos(r.data).equals(sos(input))).toBe(true);
    expect(decode(r.data).data.equals(decode(input).data)).toBe(true);
  });

  it('PNG: drops tEXt/iTXt/eXIf, keeps iCCP and pixels', async () => {
    const input = fixture('png-metadata.png');
    const r = await processMedia(input);
    expect(r.changes).toEqual(['metadata-stripped']);
    const before = pngChunkTypes(input);
    const after = pngChunkTypes(r.data);
    expect(before).toEqual(expect.arrayContaining(['tEXt', 'iTXt', 'eXIf', 'iCCP']));
    expect(after.filter((t) => ['tEXt', 'zTXt', 'iTXt', 'eXIf', 'tIME'].includes(t))).toEqual([]);
    expect(after).toContain('iCCP');
    expect(after).toEqual(before.filter((t) => !['tEXt', 'zTXt', 'iTXt', 'eXIf', 'tIME'].includes(t)));
    expect(r.data.includes('Jane Doe')).toBe(false);
    expect(decode(r.data).data.equals(decode(input).data)).toBe(true);
  });

  it('WebP: drops EXIF/XMP chunks and clears their VP8X flags', async () => {
    const base = fixture('webp-lossy-alpha.webp'); // VP8X + ALPH + VP8
    expect(base.toString('latin1', 12, 16)).toBe('VP8X');
    const exif = Buffer.concat([Buffer.from('EXIF'), Buffer.alloc(4), Buffer.from('MM\0*secret-gps!')]);
    exif.writeUInt32LE(exif.length - 8, 4);
    const input = Buffer.concat([base, exif]);
    input.writeUInt32LE(input.length - 8, 4);
    input.writeUInt8((input[20] as number) | 0x08, 20); // EXIF flag
    const r = await processMedia(input);
    expect(r.changes).toEqual(['metadata-stripped']);
    expect(r.data.equals(base)).toBe(true);
  });

  it('keepMetadata: true passes the exact bytes through', async () => {
    for (const file of ['jpeg-metadata.jpg', 'png-metadata.png']) {
      const input = fixture(file);
      const r = await processMedia(input, { keepMetadata: true });
      expect(r.changes, file).toEqual([]);
      expect(r.data.equals(input), file).toBe(true);
    }
  });

  it('drops data appended after the JPEG end-of-image marker', async () => {
    const input = Buffer.concat([fixture('jpeg-baseline.jpg'), Buffer.from('appended video or secrets')]);
    const r = await processMedia(input);
    expect(r.changes).toEqual(['metadata-stripped']);
    expect(r.data.equals(fixture('jpeg-baseline.jpg'))).toBe(true);
  });
});

describe('decoding every format', () => {
  const CASES: Array<[string, string]> = [
    ['png-rgb.png', 'image/png'],
    ['png-16bit.png', 'image/png'],
    ['png-interlaced.png', 'image/png'],
    ['png-gray.png', 'image/png'],
    ['jpeg-baseline.jpg', 'image/jpeg'],
    ['jpeg-progressive.jpg', 'image/jpeg'],
    ['gif-still.gif', 'image/png'],
    ['bmp-24.bmp', 'image/png'],
    ['bmp-topdown.bmp', 'image/png'],
    ['bmp-4bit-palette.bmp', 'image/png'],
    ['webp-lossy.webp', 'image/webp'],
    ['webp-lossless.webp', 'image/webp'],
  ];
  for (const [file, out] of CASES) {
    it(`${file} -> ${out}, resized to 32x24 with the picture intact`, async () => {
      const r = await processMedia(fixture(file), { maxDimension: 32 });
      expect(r.mediaType).toBe(out);
      expect(sniffMedia(r.data)).toBe(out);
      expect(r.changes).toContain('resized');
      expect(r.changes).toContain('reencoded');
      const img = decode(r.data);
      if (file === 'png-gray.png' || file === 'png-16bit.png') {
        expect([img.width, img.height]).toEqual([32, 24]);
      } else {
        expectPicture(img, file, 0.5, 40);
      }
    });
  }

  it('interlaced, 16-bit and progressive variants decode to the same pixels as their plain twins', () => {
    expect(decode(fixture('png-interlaced.png')).data.equals(decode(fixture('png-rgb.png')).data)).toBe(true);
    expect(
      meanAbsDiff(decode(fixture('jpeg-progressive.jpg')), decode(fixture('jpeg-baseline.jpg'))),
    ).toBeLessThan(2);
    const deep = decode(fixture('png-16bit.png'));
    expect(near(pixel(deep, 4, 4), [255, 0, 0], 1)).toBe(true);
    const deepAlpha = decode(fixture('png-16bit-rgba.png'));
    expect(pixel(deepAlpha, 60, 4)[3]).toBe(0);
    expect(near(pixel(deepAlpha, 4, 4), [255, 0, 0, 255], 1)).toBe(true);
  });

  it('BMP is always converted to PNG, even when small', async () => {
    for (const file of ['bmp-24.bmp', 'bmp-topdown.bmp', 'bmp-4bit-palette.bmp', 'bmp-32-alpha.bmp']) {
      const r = await processMedia(fixture(file));
      expect(r.mediaType, file).toBe('image/png');
      expect(r.changes, file).toEqual(['reencoded', 'converted']);
      if (file !== 'bmp-32-alpha.bmp') expectPicture(decode(r.data), file); // the alpha one is the RGBA picture
    }
  });

  it('PNG rows with every filter type decode exactly (RGB and RGBA)', () => {
    for (const channels of [3, 4] as const) {
      const fill = (x: number, y: number, out: Uint8Array) => {
        out[0] = (x * 7 + y * 3) & 0xff;
        out[1] = (x * y) & 0xff;
        out[2] = ((x ^ y) * 13) & 0xff;
        if (channels === 4) out[3] = (x * 5 + 17) & 0xff;
      };
      const png = makePng(97, 41, channels, fill, (y) => y % 5);
      const img = decode(png);
      const want = makePixels(97, 41, channels, fill);
      for (let i = 0; i < 97 * 41; i++) {
        const got = [...img.data.subarray(i * 4, i * 4 + channels)];
        const exp = [...want.subarray(i * channels, (i + 1) * channels)];
        if (got.join() !== exp.join()) expect(got, `${channels} channels, pixel ${i}`).toEqual(exp);
      }
    }
  });

  it('BMP -> PNG is lossless', async () => {
    for (const file of ['bmp-24.bmp', 'bmp-32-alpha.bmp', 'bmp-4bit-palette.bmp']) {
      const r = await processMedia(fixture(file));
      expect(decode(r.data).data.equals(decode(fixture(file)).data), file).toBe(true);
    }
    const big = await processMedia(fixture('bmp-24.bmp'), { maxDimension: 64 });
    expect(pngChunkTypes(big.data)).toEqual(['IHDR', 'IDAT', 'IEND']);
  });

  it('BMP 32-bit keeps its alpha', async () => {
    const r = await processMedia(fixture('bmp-32-alpha.bmp'));
    expect(probeMedia(r.data)?.hasAlpha).toBe(true);
    const img = decode(r.data);
    expect(pixel(img, 60, 4)[3]).toBe(0);
    expect(near(pixel(img, 4, 4), [255, 0, 0, 255], 2)).toBe(true);
  });

  it('CMYK JPEG is accepted (colour may be approximate)', async () => {
    const r = await processMedia(fixture('jpeg-cmyk.jpg'), { maxDimension: 32 });
    expect(r).toMatchObject({ mediaType: 'image/jpeg', width: 32, height: 24 });
    // Adobe (inverted) CMYK converted to RGB: the reference picture's colours, at full size and DCT-scaled to 1/2.
    expectPicture(decode(fixture('jpeg-cmyk.jpg')), 'CMYK full size', 1, 40);
    expectPicture(
      decode((await processMedia(fixture('jpeg-cmyk.jpg'), { maxDimension: 32, format: 'png' })).data),
      'CMYK 1/2',
      0.5,
      40,
    );
  });

  it('animated GIF -> PNG of the first frame', async () => {
    const r = await processMedia(fixture('gif-animated.gif'));
    expect(r.mediaType).toBe('image/png');
    expect(r.original.frames).toBe(3);
    expect(r.changes).toEqual(['first-frame', 'reencoded', 'converted']);
    expectPicture(decode(r.data), 'first frame', 1, 8); // frame 2 is mirrored, frame 3 negated
  });

  it('animated WebP -> WebP of the first frame', async () => {
    const r = await processMedia(fixture('webp-animated.webp'));
    expect(r.mediaType).toBe('image/webp');
    expect(r.original.frames).toBe(3);
    expect(r.changes).toContain('first-frame');
    expect(probeMedia(r.data)?.frames).toBe(1);
    expectPicture(decode(r.data), 'first frame', 1, 40);
  });
});

describe('EXIF orientation', () => {
  const upright = decode(fixture('png-rgb.png'));
  for (let o = 1; o <= 8; o++) {
    it(`orientation ${o} gives the same upright pixels`, async () => {
      const r = await processMedia(fixture(`jpeg-orient-${o}.jpg`), { jpegQuality: 95 });
      expect([r.width, r.height]).toEqual([64, 48]);
      if (o === 1) expect(r.changes).toEqual(['metadata-stripped']);
      else expect(r.changes).toEqual(['oriented', 'reencoded']);
      const img = decode(r.data);
      expectPicture(img, `orientation ${o}`, 1, 24);
      expect(meanAbsDiff(img, upright)).toBeLessThan(6);
      expect(probeMedia(r.data)?.orientation).toBe(1); // the tag is gone with the re-encode
    });
  }

  it('orients and resizes together (a 6 fits maxDimension on its upright long side)', async () => {
    const r = await processMedia(fixture('jpeg-orient-6.jpg'), { maxDimension: 32 });
    expect(r.changes).toEqual(['resized', 'oriented', 'reencoded']);
    expectPicture(decode(r.data), 'orientation 6 at half size', 0.5, 40);
  });

  it.each([
    ['png-orient-6.png', 'image/png'],
    ['webp-orient-6.webp', 'image/webp'],
  ])('%s: orientation from a PNG eXIf / WebP EXIF chunk is applied, codec kept', async (file, type) => {
    const input = fixture(file);
    expect(probeMedia(input)).toMatchObject({ width: 48, height: 64, orientation: 6 });
    const r = await processMedia(input);
    expect(r.mediaType).toBe(type);
    expect(r.changes).toContain('oriented');
    expectPicture(decode(r.data), `${file} upright`, 1, 8);
    expect(probeMedia(r.data)?.orientation).toBe(1);
  });
});

describe('alpha', () => {
  it('PNG with alpha stays PNG with alpha (semi-transparent pixels kept)', async () => {
    const r = await processMedia(fixture('png-rgba.png'), { maxDimension: 32 });
    expect(r.mediaType).toBe('image/png');
    const img = decode(r.data);
    expect(pixel(img, 30, 2)[3]).toBe(0); // transparent background
    const green = pixel(img, 20, 10); // inside the 50 % green rectangle
    expect(green[3]).toBeGreaterThan(100);
    expect(green[3]).toBeLessThan(155);
    expect(near(green, [0, 160, 0], 30)).toBe(true); // premultiplied resize: no dark fringe
  });

  it('lossless WebP with alpha stays lossless WebP with alpha', async () => {
    const r = await processMedia(fixture('webp-lossless-alpha.webp'), { maxDimension: 32 });
    expect(r.mediaType).toBe('image/webp');
    expect(r.data.toString('latin1', 12, 16)).toMatch(/VP8L|VP8X/);
    expect(r.data.includes('VP8L')).toBe(true);
    expect(probeMedia(r.data)?.hasAlpha).toBe(true);
  });

  it('transparent -> JPEG is flattened onto white', async () => {
    const r = await processMedia(fixture('png-rgba.png'), { format: 'jpeg' });
    expect(r.mediaType).toBe('image/jpeg');
    expect(r.changes).toEqual(['flattened', 'reencoded', 'converted']);
    const img = decode(r.data);
    expect(near(pixel(img, 60, 4), [255, 255, 255], 6)).toBe(true); // was transparent
    expect(near(pixel(img, 4, 4), [255, 0, 0], 30)).toBe(true);
    expect(near(pixel(img, 30, 20), [128, 208, 128], 30)).toBe(true); // 50 % green over white
  });

  it('a fully opaque alpha channel is dropped (the result may become a JPEG on the byte ladder)', async () => {
    const r = await processMedia(fixture('bmp-24.bmp'));
    expect(probeMedia(r.data)?.hasAlpha).toBe(false);
  });
});

describe('large JPEG paths', () => {
  it('a JPEG shrinking 2x or more (DCT-scaled decode) matches the full-size decode resized', async () => {
    const png = gradientPng(1001, 801); // odd sizes: the scaled decode rounds up
    const jpeg = (await processMedia(png, { format: 'jpeg', jpegQuality: 95, maxDimension: 4000 })).data;
    const viaScaled = await processMedia(jpeg, { maxDimension: 400, format: 'png' });
    const viaFull = await processMedia(png, { maxDimension: 400 });
    expect([viaScaled.width, viaScaled.height]).toEqual([400, 320]);
    expect(meanAbsDiff(decode(viaScaled.data), decode(viaFull.data))).toBeLessThan(3);
    const gray = await processMedia(fixture('jpeg-gray.jpg'), { maxDimension: 32 });
    expect([gray.width, gray.height]).toEqual([32, 24]);
  });

  it('a JPEG shrinking by a non-power-of-two factor keeps its content and exact target size', async () => {
    // 1333 -> 1000 decodes at full size (6/8 would fit but has no SIMD inverse DCT), 700 and 333 at 4/8 and 2/8.
    const png = gradientPng(1333, 750);
    const jpeg = (await processMedia(png, { format: 'jpeg', jpegQuality: 95, maxDimension: 4000 })).data;
    for (const max of [1000, 700, 333, 170]) {
      const viaScaled = await processMedia(jpeg, { maxDimension: max, format: 'png' });
      const viaFull = await processMedia(png, { maxDimension: max });
      expect([viaScaled.width, viaScaled.height]).toEqual([viaFull.width, viaFull.height]);
      expect(psnr(decode(viaScaled.data), decode(viaFull.data))).toBeGreaterThan(35);
    }
  });

  it('a large JPEG is encoded as one baseline 4:2:0 JPEG (optimised Huffman tables), decoding like the source', async () => {
    const png = gradientPng(1600, 1200);
    const r = await processMedia(png, { format: 'jpeg', maxDimension: 4000 });
    const markers = jpegMarkers(r.data);
    expect(markers).toContain(0xc0); // SOF0: baseline
    expect(markers).not.toContain(0xdd); // no restart interval: one encoder pass, no splice
    const sof = r.data.indexOf(Buffer.from([0xff, 0xc0]));
    expect(r.data[sof + 9]).toBe(3); // three components
    expect(r.data[sof + 11]).toBe(0x22); // luma sampled 2x2: chroma 4:2:0
    expect(probeMedia(r.data)).toMatchObject({ width: 1600, height: 1200 });
    expect(meanAbsDiff(decode(r.data), decode(png))).toBeLessThan(2);
  });
});

describe('resize', () => {
  it('fits inside maxDimension keeping the aspect ratio', async () => {
    const r = await processMedia(gradientPng(3000, 1000));
    expect(r).toMatchObject({ mediaType: 'image/png', width: 2000, height: 667 });
    expect(r.changes).toEqual(['resized', 'reencoded']);
    expect(probeMedia(r.data)).toMatchObject({ width: 2000, height: 667 });
  });

  it('never upscales', async () => {
    const r = await processMedia(fixture('png-rgb.png'), { maxDimension: 4000 });
    expect([r.width, r.height]).toEqual([64, 48]);
  });
});

describe('byte cap', () => {
  it('opaque PNG over the cap -> JPEG via the quality ladder, within the cap', async () => {
    const input = noisePng(1400, 1000, 3, 7); // ~4.2 MB of noise: over the default cap as PNG
    expect(input.length).toBeGreaterThan(3_932_160);
    const r = await processMedia(input);
    expect(r.mediaType).toBe('image/jpeg');
    expect(r.data.length).toBeLessThanOrEqual(3_932_160);
    expect(r.changes).toEqual(['reencoded', 'quality-reduced', 'converted']);
    expect([r.width, r.height]).toEqual([1400, 1000]);
  });

  it('alpha over the cap -> lossy WebP', async () => {
    const r = await processMedia(noisePng(600, 400, 4, 8), { maxEncodedBytes: 500_000 });
    expect(r.mediaType).toBe('image/webp');
    expect(r.data.length).toBeLessThanOrEqual(500_000);
    expect(probeMedia(r.data)?.hasAlpha).toBe(true);
    expect(r.changes).toContain('quality-reduced');
  });

  it('steps the size down when the lowest quality does not fit', async () => {
    const r = await processMedia(noisePng(800, 600, 3, 9), { maxEncodedBytes: 60_000 });
    expect(r.mediaType).toBe('image/jpeg');
    expect(r.data.length).toBeLessThanOrEqual(60_000);
    expect(r.width).toBeLessThan(800);
    expect(r.width / r.height).toBeCloseTo(800 / 600, 1);
    expect(r.changes).toEqual(['reencoded', 'quality-reduced', 'resized', 'converted']);
  });

  it('never returns output over the cap: an impossible cap is ERR_MEDIA_TOO_LARGE', async () => {
    await expect(processMedia(noisePng(200, 200, 3, 10), { maxEncodedBytes: 100 })).rejects.toMatchObject({
      code: 'ERR_MEDIA_TOO_LARGE',
      message: expect.stringContaining('100 bytes'),
    });
  });
});

describe('PDF', () => {
  it('passes a PDF through with its page count', async () => {
    const input = fixture('pdf-2page.pdf');
    const r = await processMedia(input);
    expect(r).toMatchObject({ mediaType: 'application/pdf', pages: 2, changes: [] });
    expect(r.data.equals(input)).toBe(true);
  });

  it('a truncated PDF is ERR_CORRUPT_MEDIA', async () => {
    const input = fixture('pdf-2page.pdf');
    await expect(processMedia(input.subarray(0, input.length - 200))).rejects.toMatchObject({
      code: 'ERR_CORRUPT_MEDIA',
    });
  });

  it('a PDF over maxPdfBytes is ERR_MEDIA_TOO_LARGE', async () => {
    await expect(processMedia(fixture('pdf-2page.pdf'), { maxPdfBytes: 1000 })).rejects.toMatchObject({
      code: 'ERR_MEDIA_TOO_LARGE',
    });
  });
});

describe('media-type hint', () => {
  it('a wrong hint never overrides the bytes and is listed in changes', async () => {
    const r = await processMedia(fixture('png-rgb.png'), { mediaTypeHint: 'image/jpeg' });
    expect(r.mediaType).toBe('image/png');
    expect(r.changes).toEqual(['hint-corrected']);
  });

  it('a right hint (any spelling) changes nothing', async () => {
    for (const hint of ['image/png', 'IMAGE/PNG; charset=binary']) {
      expect((await processMedia(fixture('png-rgb.png'), { mediaTypeHint: hint })).changes).toEqual([]);
    }
    expect(
      (await processMedia(fixture('jpeg-baseline.jpg'), { mediaTypeHint: 'image/jpg' })).changes,
    ).toEqual([]);
  });
});

describe('errors', () => {
  const UNSUPPORTED: Array<[string, string]> = [
    ['tiff-rgb.tiff', 'image/tiff'],
    ['heic-rgb.heic', 'image/heic'],
    ['avif-rgb.avif', 'image/avif'],
    ['ico-32.ico', 'image/x-icon'],
    ['jxl-rgb.jxl', 'image/jxl'],
    ['svg-rgb.svg', 'image/svg+xml'],
  ];
  for (const [file, type] of UNSUPPORTED) {
    it(`${file}: ERR_UNSUPPORTED_MEDIA naming ${type}`, async () => {
      const err = await processMedia(fixture(file)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MediaError);
      expect(err).toMatchObject({
        code: 'ERR_UNSUPPORTED_MEDIA',
        mediaType: type,
        message: `${type} is not supported; convert it to PNG or JPEG`,
      });
    });
  }

  it('RLE BMP: ERR_UNSUPPORTED_MEDIA saying why', async () => {
    await expect(processMedia(fixture('bmp-rle8.bmp'))).rejects.toMatchObject({
      code: 'ERR_UNSUPPORTED_MEDIA',
      message: expect.stringContaining('RLE'),
    });
  });

  it('unrecognised bytes: ERR_UNSUPPORTED_MEDIA', async () => {
    await expect(processMedia(Buffer.from('just some text'))).rejects.toMatchObject({
      code: 'ERR_UNSUPPORTED_MEDIA',
    });
  });

  it('corrupt data: ERR_CORRUPT_MEDIA with the decoder reason', async () => {
    const jpeg = Buffer.from(fixture('jpeg-baseline.jpg'));
    const truncated = jpeg.subarray(0, jpeg.length - 40);
    await expect(processMedia(truncated)).rejects.toMatchObject({
      code: 'ERR_CORRUPT_MEDIA',
      message: expect.stringMatching(/image\/jpeg is corrupt: .+/),
    });
    const png = Buffer.from(fixture('png-rgb.png'));
    png.writeUInt8((png[png.length - 20] as number) ^ 0xff, png.length - 20); // inside IDAT: CRC mismatch
    await expect(processMedia(png)).rejects.toMatchObject({ code: 'ERR_CORRUPT_MEDIA' });
  });

  it('a JPEG with hundreds of scans is refused before decoding (CPU bomb)', async () => {
    const jpeg = fixture('jpeg-progressive.jpg');
    const emptyScan = Buffer.from([0xff, 0xda, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3f, 0x00]);
    const bomb = Buffer.concat([jpeg.subarray(0, -2), ...Array(300).fill(emptyScan), jpeg.subarray(-2)]);
    await expect(processMedia(bomb, { maxDimension: 32 })).rejects.toMatchObject({
      code: 'ERR_CORRUPT_MEDIA',
      message: expect.stringMatching(/scan/),
    });
  });

  it('caps: input bytes and pixels, with the numbers in the message', async () => {
    await expect(processMedia(fixture('png-rgb.png'), { maxInputBytes: 100 })).rejects.toMatchObject({
      code: 'ERR_MEDIA_TOO_LARGE',
      message: expect.stringContaining('185 bytes'),
    });
    await expect(processMedia(fixture('png-rgb.png'), { maxPixels: 1000 })).rejects.toMatchObject({
      code: 'ERR_MEDIA_TOO_LARGE',
      message: 'image/png is 64x48 = 3,072 pixels; the limit is 1,000 pixels',
    });
  });

  it('invalid arguments: ERR_INVALID_ARGUMENT', async () => {
    const png = fixture('png-rgb.png');
    const bad: unknown[] = [
      { maxDimension: 0 },
      { maxDimension: 1.5 },
      { maxDimension: '2000' },
      { jpegQuality: 101 },
      { keepMetadata: 'yes' },
      { format: 'gif' },
      { mediaTypeHint: 7 },
      { unknownOption: true },
      'options',
    ];
    for (const options of bad) {
      await expect(processMedia(png, options as never), JSON.stringify(options)).rejects.toMatchObject({
        code: 'ERR_INVALID_ARGUMENT',
      });
    }
    await expect(processMedia('not bytes' as never)).rejects.toMatchObject({ code: 'ERR_INVALID_ARGUMENT' });
  });

  it('the addon re-checks numbers itself: NaN, Infinity and negatives never reach a cast', () => {
    const png = fixture('png-rgb.png');
    const addon = loadNativeAddon();
    for (const n of [Number.NaN, Number.POSITIVE_INFINITY, -1, 0.5]) {
      expect(
        () => addon.process(png, { ...DEFAULT_PROCESS_OPTIONS, maxPixels: n }),
        `process maxPixels ${n}`,
      ).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }));
      expect(() => addon.decodeToRgba(png, n), `decodeToRgba ${n}`).toThrow(
        expect.objectContaining({
          code: 'ERR_INVALID_ARGUMENT',
          message: expect.stringContaining('maxPixels'),
        }),
      );
    }
    expect(addon.decodeToRgba(png, 3072).width).toBe(64);
    expect(() => addon.decodeToRgba(png, 3071)).toThrow(
      expect.objectContaining({ code: 'ERR_MEDIA_TOO_LARGE' }),
    );
  });
});

describe('concurrency', () => {
  it('many calls in flight on the threadpool all complete with their own results', async () => {
    const files = ['png-rgb.png', 'jpeg-orient-6.jpg', 'gif-animated.gif', 'bmp-24.bmp', 'webp-lossy.webp'];
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        processMedia(fixture(files[i % files.length] as string), { maxDimension: 32 }),
      ),
    );
    for (const r of results) expectPicture(decode(r.data), r.original.mediaType, 0.5, 40);
  });
});
