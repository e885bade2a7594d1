/**
 * A large camera-like JPEG with EXIF GPS: sharp encodes a noisy 4000x3000 picture (several MB, like a phone photo),
 * then the EXIF APP1 segment of the committed fixture `jpeg-metadata.jpg` (Make PantoCam, Artist Jane Doe, GPS
 * 48.8583 N 2.2945 E, written by exiftool) is spliced in after SOI.
 */

import sharp from 'sharp';
import { fixture } from '../../agent/dispatch-fixtures.js';

export const GPS_MARKERS = ['Exif\0\0', 'PantoCam', 'Jane Doe'];

/** The EXIF APP1 segment (marker + length + payload) of `jpeg-metadata.jpg`. */
function exifSegment(): Buffer {
  const d = fixture('jpeg-metadata.jpg');
  let i = 2;
  while (i + 4 <= d.length) {
    const marker = d[i + 1] as number;
    const len = d.readUInt16BE(i + 2);
    if (marker === 0xe1 && d.toString('latin1', i + 4, i + 10) === 'Exif\0\0')
      return d.subarray(i, i + 2 + len);
    if (marker === 0xda) break;
    i += 2 + len;
  }
  throw new Error('jpeg-metadata.jpg has no EXIF segment');
}

export async function photoWithGps(width = 4000, height = 3000): Promise<Buffer> {
  const jpeg = await sharp({
    create: {
      width,
      height,
      channels: 3,
      background: { r: 90, g: 140, b: 200 },
      noise: { type: 'gaussian', mean: 128, sigma: 40 },
    },
  })
    .jpeg({ quality: 92 })
    .toBuffer();
  return Buffer.concat([jpeg.subarray(0, 2), exifSegment(), jpeg.subarray(2)]);
}
