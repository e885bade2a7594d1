/**
 * Pixel bombs: tiny, structurally valid files whose headers declare far more pixels than any sane cap. A pipeline
 * that allocates from the header before checking `width * height` pays gigabytes for a few bytes (a 35-byte GIF
 * declaring 20000x20000 cost stb 3.5 GB / 6.5 s). Every builder returns fresh bytes; none allocates more than a few KB.
 */

import { crc32, deflateSync } from 'node:zlib';
import { PNG_SIGNATURE, pngChunk } from './png-file.js';

/**
 * A PNG (8-bit RGB) declaring `width` x `height` with a valid IHDR CRC, followed by one IDAT holding a zlib stream
 * of only the first `rows` filtered rows (all zero), and IEND. Decoders that trust the header allocate the full
 * canvas before discovering the data is short.
 */
export function pngBomb(width = 20000, height = 20000, rows = 1): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type: truecolour
  const idat = deflateSync(Buffer.alloc((width * 3 + 1) * rows), { level: 9 });
  return Buffer.concat([
    PNG_SIGNATURE,
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', idat),
    pngChunk('IEND', new Uint8Array(0)),
  ]);
}

/**
 * A 35-byte GIF89a declaring a `width` x `height` logical screen and one image of the same size, with a 2-bit LZW
 * stream that codes a couple of pixels and ends. Max side 65535.
 */
export function gifBomb(width = 20000, height = 20000): Buffer {
  const out = Buffer.alloc(35);
  out.write('GIF89a', 0, 'latin1');
  out.writeUInt16LE(width, 6);
  out.writeUInt16LE(height, 8);
  out[10] = 0x80; // global colour table present, 2 entries
  out[11] = 0; // background index
  out[12] = 0; // aspect
  // global colour table: black, white (6 bytes) -> offset 13..18
  out.set([0, 0, 0, 255, 255, 255], 13);
  // image descriptor at 19
  out[19] = 0x2c;
  out.writeUInt16LE(0, 20);
  out.writeUInt16LE(0, 22);
  out.writeUInt16LE(width, 24);
  out.writeUInt16LE(height, 26);
  out[28] = 0; // no local table, not interlaced
  out[29] = 2; // LZW minimum code size
  out[30] = 2; // sub-block length
  out[31] = 0x44; // codes: clear(4), 0, 1 ... (3-bit codes)
  out[32] = 0x01;
  out[33] = 0; // block terminator
  out[34] = 0x3b; // trailer
  return out;
}

/** A 24-bit BMP (BITMAPINFOHEADER) declaring `width` x `height` (negative height = top-down) with 16 pixel bytes. */
export function bmpBomb(width = 20000, height = 20000): Buffer {
  const out = Buffer.alloc(54 + 16);
  out.write('BM', 0, 'latin1');
  out.writeUInt32LE(out.length, 2);
  out.writeUInt32LE(54, 10);
  out.writeUInt32LE(40, 14);
  out.writeInt32LE(width, 18);
  out.writeInt32LE(height, 22);
  out.writeUInt16LE(1, 26); // planes
  out.writeUInt16LE(24, 28); // bpp
  out.writeUInt32LE(0, 30); // BI_RGB
  return out;
}

/**
 * A lossless WebP (simple VP8L) declaring `width` x `height` (each 1..16384) followed by a few garbage bytes.
 * 16384x16384 is 268 MP.
 */
export function webpBomb(width = 16384, height = 16384): Buffer {
  const vp8l = Buffer.alloc(5 + 15, 0); // even length: RIFF chunks are padded to 2 bytes
  vp8l[0] = 0x2f;
  // 14 bits width-1, 14 bits height-1, 1 bit alpha, 3 bits version (0), little-endian bit order.
  const bits = (width - 1) | ((height - 1) << 14);
  vp8l.writeUInt32LE(bits >>> 0, 1);
  const riffSize = 4 + 8 + vp8l.length;
  const out = Buffer.alloc(8 + riffSize);
  out.write('RIFF', 0, 'latin1');
  out.writeUInt32LE(riffSize, 4);
  out.write('WEBP', 8, 'latin1');
  out.write('VP8L', 12, 'latin1');
  out.writeUInt32LE(vp8l.length, 16);
  out.set(vp8l, 20);
  return out;
}

/**
 * A JPEG copied from a real file with its SOFn frame header rewritten to declare `width` x `height` (each <= 65535).
 * Throws if `jpeg` has no SOF marker before SOS.
 */
export function jpegWithDimensions(jpeg: Uint8Array, width: number, height: number): Buffer {
  const out = Buffer.from(jpeg);
  let o = 2;
  while (o + 4 <= out.length && out[o] === 0xff) {
    const marker = out[o + 1] as number;
    const len = out.readUInt16BE(o + 2);
    const isSof = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isSof) {
      out.writeUInt16BE(height, o + 5);
      out.writeUInt16BE(width, o + 7);
      return out;
    }
    if (marker === 0xda) break;
    o += 2 + len;
  }
  throw new Error('no SOF marker found');
}

/** A PNG copied from a real file with IHDR rewritten to declare `width` x `height`, the IHDR CRC recomputed. */
export function pngWithDimensions(png: Uint8Array, width: number, height: number): Buffer {
  const out = Buffer.from(png);
  if (out.toString('latin1', 12, 16) !== 'IHDR') throw new Error('IHDR is not the first chunk');
  out.writeUInt32BE(width, 16);
  out.writeUInt32BE(height, 20);
  out.writeUInt32BE(crc32(out.subarray(12, 29)), 29);
  return out;
}

/** Every bomb that declares more than 100 MP, by name (for table-driven tests). */
export function allPixelBombs(fixtures: { jpeg: Uint8Array; png: Uint8Array }): Record<string, Buffer> {
  return {
    'gif 35 bytes 20000x20000': gifBomb(),
    'png 20000x20000 valid IHDR': pngBomb(),
    'png fixture re-headed 20000x20000': pngWithDimensions(fixtures.png, 20000, 20000),
    'jpeg fixture re-headed 60000x60000': jpegWithDimensions(fixtures.jpeg, 60000, 60000),
    'bmp 20000x20000': bmpBomb(),
    'bmp top-down 20000x20000': bmpBomb(20000, -20000),
    'webp vp8l 16384x16384': webpBomb(),
  };
}
