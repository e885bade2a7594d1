/**
 * Test inputs for dispatch tests: a PNG encoder for big generated images, a header reader that checks stored
 * images independently of the media pipeline, committed media fixtures, and tools built with `defineTool`.
 */

import { readFileSync } from 'node:fs';
import { pngFile } from '../helpers/png-file.js';

/**
 * An 8-bit RGB PNG of `width` x `height`: smooth gradients with a grid of darker lines (photo-ish but compressible).
 * Rows use filter 0; zlib level 1 keeps a 4000x3000 image fast to build.
 */
export function encodePng(width: number, height: number): Buffer {
  const stride = width * 3 + 1;
  const raw = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const row = y * stride;
    for (let x = 0; x < width; x++) {
      const o = row + 1 + x * 3;
      const line = x % 250 < 4 || y % 250 < 4;
      raw[o] = line ? 20 : (x * 255) / width;
      raw[o + 1] = line ? 20 : (y * 255) / height;
      raw[o + 2] = line ? 20 : 128;
    }
  }
  return pngFile(width, height, 2, raw);
}

/** Width/height from a PNG, JPEG or GIF header (independent of the media pipeline). Throws for anything else. */
export function imageSize(bytes: Uint8Array): { type: string; width: number; height: number } {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.subarray(1, 4).toString('latin1') === 'PNG') {
    return { type: 'image/png', width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
  }
  if (b.subarray(0, 3).toString('latin1') === 'GIF') {
    return { type: 'image/gif', width: b.readUInt16LE(6), height: b.readUInt16LE(8) };
  }
  if (b[0] === 0xff && b[1] === 0xd8) {
    let o = 2;
    while (o + 9 < b.length) {
      if (b[o] !== 0xff) throw new Error(`bad JPEG marker at ${o}`);
      const marker = b[o + 1] as number;
      const len = b.readUInt16BE(o + 2);
      const isSof = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
      if (isSof) return { type: 'image/jpeg', width: b.readUInt16BE(o + 7), height: b.readUInt16BE(o + 5) };
      o += 2 + len;
    }
    throw new Error('JPEG without SOF');
  }
  throw new Error(`not a PNG/JPEG/GIF: ${b.subarray(0, 8).toString('hex')}`);
}

/** A committed fixture from test/fixtures/media (see its README). */
export function fixture(name: string): Buffer {
  return readFileSync(new URL(`../fixtures/media/${name}`, import.meta.url));
}

/** A minimal little-endian TIFF header (`II*\0`, first IFD at 8, zero entries). */
export function tiffHeader(): Buffer {
  return Buffer.from([0x49, 0x49, 0x2a, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]);
}

/** Deterministic bytes that are no known format. */
export function noiseBytes(n: number, seed = 7): Buffer {
  const out = Buffer.alloc(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    out[i] = s >>> 24;
  }
  // Never start with a magic number by accident.
  out[0] = 0x01;
  return out;
}

/** A promise with its resolve/reject exposed, for tools whose completion a test controls. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve: (v: T) => void;
  reject: (e: unknown) => void;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
