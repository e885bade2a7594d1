import { describe, expect, it } from 'vitest';
import { MediaError, probeMedia, sniffMedia } from '../../src/media/index.js';
import { gifBomb, pngBomb } from '../helpers/media-bombs.js';
import { fixture } from './pixel-helpers.js';

const SNIFFED: Record<string, string> = {
  'png-rgb.png': 'image/png',
  'png-16bit.png': 'image/png',
  'jpeg-baseline.jpg': 'image/jpeg',
  'jpeg-progressive.jpg': 'image/jpeg',
  'gif-animated.gif': 'image/gif',
  'bmp-24.bmp': 'image/bmp',
  'bmp-32-alpha.bmp': 'image/bmp',
  'webp-lossy.webp': 'image/webp',
  'webp-lossless.webp': 'image/webp',
  'webp-animated.webp': 'image/webp',
  'pdf-2page.pdf': 'application/pdf',
  'tiff-rgb.tiff': 'image/tiff',
  'heic-rgb.heic': 'image/heic',
  'avif-rgb.avif': 'image/avif',
  'ico-32.ico': 'image/x-icon',
  'jxl-rgb.jxl': 'image/jxl',
  'svg-rgb.svg': 'image/svg+xml',
};

describe('sniffMedia', () => {
  for (const [file, type] of Object.entries(SNIFFED)) {
    it(`names ${file} as ${type}`, () => {
      expect(sniffMedia(fixture(file))).toBe(type);
    });
  }

  it('returns null for unrecognised or empty bytes', () => {
    expect(sniffMedia(Buffer.from('hello, world'))).toBeNull();
    expect(sniffMedia(new Uint8Array(0))).toBeNull();
    expect(sniffMedia(Buffer.from('<html><body>no svg here</body></html>'))).toBeNull();
  });

  it('accepts a plain Uint8Array view into a larger buffer', () => {
    const png = fixture('png-rgb.png');
    const big = new Uint8Array(png.length + 10);
    big.set(png, 10);
    expect(sniffMedia(big.subarray(10))).toBe('image/png');
  });

  it('rejects a non-byte argument with ERR_INVALID_ARGUMENT', () => {
    expect(() => sniffMedia('abc' as unknown as Uint8Array)).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }),
    );
  });
});

describe('probeMedia', () => {
  it('reads dimensions and alpha from headers', () => {
    expect(probeMedia(fixture('png-rgb.png'))).toEqual({
      mediaType: 'image/png',
      width: 64,
      height: 48,
      frames: 1,
      hasAlpha: false,
      orientation: 1,
    });
    expect(probeMedia(fixture('png-rgba.png'))?.hasAlpha).toBe(true);
    expect(probeMedia(fixture('png-palette-trns.png'))?.hasAlpha).toBe(true);
    expect(probeMedia(fixture('gif-transparent.gif'))?.hasAlpha).toBe(true);
    expect(probeMedia(fixture('webp-lossy-alpha.webp'))?.hasAlpha).toBe(true);
    expect(probeMedia(fixture('webp-lossy.webp'))?.hasAlpha).toBe(false);
    expect(probeMedia(fixture('jpeg-gray.jpg'))).toMatchObject({ width: 64, height: 48, hasAlpha: false });
  });

  it('counts GIF and WebP animation frames without decoding', () => {
    expect(probeMedia(fixture('gif-animated.gif'))?.frames).toBe(3);
    expect(probeMedia(fixture('gif-still.gif'))?.frames).toBe(1);
    expect(probeMedia(fixture('webp-animated.webp'))).toMatchObject({ width: 64, height: 48, frames: 3 });
  });

  it('reads EXIF orientation from APP1 and reports the stored (unrotated) size', () => {
    for (let o = 1; o <= 8; o++) {
      const info = probeMedia(fixture(`jpeg-orient-${o}.jpg`));
      expect(info?.orientation, `orientation ${o}`).toBe(o);
      expect([info?.width, info?.height], `orientation ${o}`).toEqual(o >= 5 ? [48, 64] : [64, 48]);
    }
  });

  it('reports a top-down BMP with a positive height', () => {
    expect(probeMedia(fixture('bmp-topdown.bmp'))).toMatchObject({ width: 64, height: 48 });
  });

  it('counts PDF pages', () => {
    expect(probeMedia(fixture('pdf-2page.pdf'))).toMatchObject({ mediaType: 'application/pdf', frames: 2 });
  });

  it('reads the header of a pixel bomb without allocating its pixels', () => {
    const before = process.memoryUsage().rss;
    expect(probeMedia(gifBomb())).toMatchObject({ width: 20000, height: 20000, frames: 1 });
    expect(probeMedia(pngBomb())).toMatchObject({ width: 20000, height: 20000 });
    expect(process.memoryUsage().rss - before).toBeLessThan(50 * 1024 * 1024);
  });

  it('returns null for unsupported or unrecognised types', () => {
    expect(probeMedia(fixture('tiff-rgb.tiff'))).toBeNull();
    expect(probeMedia(fixture('svg-rgb.svg'))).toBeNull();
    expect(probeMedia(Buffer.from('plain text'))).toBeNull();
  });

  it('throws ERR_CORRUPT_MEDIA for a supported type with a broken header', () => {
    const png = Buffer.from(fixture('png-rgb.png').subarray(0, 20));
    expect(() => probeMedia(png)).toThrow(MediaError);
    expect(() => probeMedia(png)).toThrow(expect.objectContaining({ code: 'ERR_CORRUPT_MEDIA' }));
  });

  it('throws ERR_UNSUPPORTED_MEDIA for an unsupported variant of a supported type', () => {
    expect(() => probeMedia(fixture('bmp-rle8.bmp'))).toThrow(
      expect.objectContaining({ code: 'ERR_UNSUPPORTED_MEDIA', mediaType: 'image/bmp' }),
    );
  });
});
