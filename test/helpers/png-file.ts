/** The PNG container for generated test images: chunks with real CRCs around rows the caller built. */

import { crc32, deflateSync } from 'node:zlib';

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** One PNG chunk: length, type, data, CRC-32 over type + data. */
export function pngChunk(type: string, data: Uint8Array): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  out.set(data, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

/** PNG colour types the helpers use: 0 grey, 2 RGB, 6 RGBA (8 bits per sample). */
export type PngColorType = 0 | 2 | 6;

/**
 * A complete 8-bit PNG: signature, IHDR, one IDAT of `rows` deflated at `level`, IEND. `rows` holds `height` rows,
 * each a filter-type byte followed by the row's samples.
 */
export function pngFile(
  width: number,
  height: number,
  colorType: PngColorType,
  rows: Uint8Array,
  level = 1,
): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = colorType;
  return Buffer.concat([
    PNG_SIGNATURE,
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(rows, { level })),
    pngChunk('IEND', new Uint8Array(0)),
  ]);
}
