/**
 * Test helpers for the media pipeline: fixtures, pixel access through the addon's TEST-ONLY `decodeToRgba`, and
 * generated inputs (big or noisy PNGs built with node:zlib, so no encoder of ours is involved in making them).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadNativeAddon } from '../../src/media/native-addon.js';
import { seededRandom } from '../helpers/media-corruption.js';
import { pngFile } from '../helpers/png-file.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/media/', import.meta.url));

export const fixture = (name: string): Buffer => readFileSync(`${FIXTURES}${name}`);

export interface Rgba {
  width: number;
  height: number;
  data: Buffer;
}

/** First-frame RGBA8 pixels of an encoded image, via the pipeline's own decoders (no orientation applied). */
export function decode(bytes: Uint8Array): Rgba {
  return loadNativeAddon().decodeToRgba(bytes);
}

export function pixel(img: Rgba, x: number, y: number): [number, number, number, number] {
  const i = (y * img.width + x) * 4;
  const d = img.data;
  return [d[i] ?? -1, d[i + 1] ?? -1, d[i + 2] ?? -1, d[i + 3] ?? -1];
}

/** True when every channel of `got` is within `tol` of `want` (RGB, or RGBA when `want` has 4 entries). */
export function near(got: readonly number[], want: readonly number[], tol = 24): boolean {
  return want.every((v, i) => Math.abs((got[i] ?? -999) - v) <= tol);
}

/** Mean absolute difference over RGB of two same-sized images. */
export function meanAbsDiff(a: Rgba, b: Rgba): number {
  if (a.width !== b.width || a.height !== b.height) return Number.POSITIVE_INFINITY;
  let sum = 0;
  for (let i = 0; i < a.data.length; i += 4) {
    for (let c = 0; c < 3; c++) sum += Math.abs((a.data[i + c] as number) - (b.data[i + c] as number));
  }
  return sum / ((a.data.length / 4) * 3);
}

/** PSNR in dB over RGB of two same-sized images (Infinity when identical, 0 when the sizes differ). */
export function psnr(a: Rgba, b: Rgba): number {
  if (a.width !== b.width || a.height !== b.height) return 0;
  let se = 0;
  for (let i = 0; i < a.data.length; i += 4) {
    for (let c = 0; c < 3; c++) {
      const d = (a.data[i + c] as number) - (b.data[i + c] as number);
      se += d * d;
    }
  }
  const mse = se / ((a.data.length / 4) * 3);
  return mse === 0 ? Number.POSITIVE_INFINITY : 10 * Math.log10((255 * 255) / mse);
}

/** The reference picture of test/fixtures/media/README.md, sampled at a scale: expected colours at named points. */
export const PICTURE_POINTS = [
  { name: 'red square', x: 4, y: 4, rgb: [255, 0, 0] },
  { name: 'yellow square', x: 40, y: 24, rgb: [255, 255, 0] },
  { name: 'blue bar', x: 60, y: 44, rgb: [0, 0, 255] },
  { name: 'grey background', x: 60, y: 4, rgb: [200, 200, 200] },
] as const;

/** The raw pixels (row-major, `channels` per pixel) of a `fill`-described image. */
export function makePixels(
  width: number,
  height: number,
  channels: 3 | 4,
  fill: (x: number, y: number, out: Uint8Array) => void,
): Uint8Array {
  const pixels = new Uint8Array(width * height * channels);
  const px = new Uint8Array(channels);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      fill(x, y, px);
      pixels.set(px, (y * width + x) * channels);
    }
  }
  return pixels;
}

/** PNG row filter residual of byte `i` of row `y` (0 None, 1 Sub, 2 Up, 3 Average, 4 Paeth; PNG spec 9.2). */
function filtered(p: Uint8Array, stride: number, bpp: number, y: number, i: number, filter: number): number {
  const x = p[y * stride + i] as number;
  const a = i >= bpp ? (p[y * stride + i - bpp] as number) : 0;
  const b = y > 0 ? (p[(y - 1) * stride + i] as number) : 0;
  const c = y > 0 && i >= bpp ? (p[(y - 1) * stride + i - bpp] as number) : 0;
  if (filter === 1) return (x - a) & 0xff;
  if (filter === 2) return (x - b) & 0xff;
  if (filter === 3) return (x - ((a + b) >> 1)) & 0xff;
  if (filter === 4) {
    const q = a + b - c;
    const pa = Math.abs(q - a);
    const pb = Math.abs(q - b);
    const pc = Math.abs(q - c);
    return (x - (pa <= pb && pa <= pc ? a : pb <= pc ? b : c)) & 0xff;
  }
  return x;
}

/**
 * An 8-bit PNG (RGB or RGBA) of `width` x `height` whose pixels come from `fill(x, y)`, built with node:zlib. Row
 * `y` uses filter `filterOf(y)` (default: None for every row).
 */
export function makePng(
  width: number,
  height: number,
  channels: 3 | 4,
  fill: (x: number, y: number, out: Uint8Array) => void,
  filterOf: (y: number) => number = () => 0,
): Buffer {
  const pixels = makePixels(width, height, channels, fill);
  const row = width * channels;
  const raw = Buffer.alloc((row + 1) * height);
  for (let y = 0; y < height; y++) {
    const f = filterOf(y);
    raw[y * (row + 1)] = f;
    for (let i = 0; i < row; i++) raw[y * (row + 1) + 1 + i] = filtered(pixels, row, channels, y, i, f);
  }
  return pngFile(width, height, channels === 4 ? 6 : 2, raw);
}

/** `n` deterministic pseudo-random bytes. */
export function seededBytes(n: number, seed: number): Uint8Array {
  const rand = seededRandom(seed);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.floor(rand() * 256);
  return out;
}

/** A PNG of seeded random noise (incompressible: about width*height*channels bytes). */
export function noisePng(width: number, height: number, channels: 3 | 4, seed = 1): Buffer {
  const noise = seededBytes(width * height * channels, seed);
  let i = 0;
  return makePng(width, height, channels, (_x, _y, out) => {
    for (let c = 0; c < channels; c++) out[c] = noise[i++] as number;
    if (channels === 4) out[3] = 128 + ((out[3] as number) >> 1); // translucent, never fully opaque
  });
}

/** A smooth two-axis gradient PNG (compresses well; photo-free). */
export function gradientPng(width: number, height: number): Buffer {
  return makePng(width, height, 3, (x, y, out) => {
    out[0] = Math.floor((x / width) * 255);
    out[1] = Math.floor((y / height) * 255);
    out[2] = 128;
  });
}

/** The PNG chunk types of `png`, in order. */
export function pngChunkTypes(png: Uint8Array): string[] {
  const b = Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  const types: string[] = [];
  for (let i = 8; i + 12 <= b.length; ) {
    const n = b.readUInt32BE(i);
    types.push(b.toString('latin1', i + 4, i + 8));
    i += 12 + n;
  }
  return types;
}

/** The JPEG marker bytes (0xE0 = APP0, ...) before the first scan. */
export function jpegMarkers(jpeg: Uint8Array): number[] {
  const markers: number[] = [];
  for (let i = 2; i + 4 <= jpeg.length; ) {
    const m = jpeg[i + 1] as number;
    markers.push(m);
    if (m === 0xda) break;
    i += 2 + (((jpeg[i + 2] as number) << 8) | (jpeg[i + 3] as number));
  }
  return markers;
}
