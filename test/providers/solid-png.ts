/** A real, valid PNG of one colour at any size, built with node:zlib (for guard tests that need large sides). */

import type { ImagePart } from '../../src/conversation.js';
import { pngFile } from '../helpers/png-file.js';

/** An 8-bit greyscale PNG, `width` x `height`, every pixel `grey`. */
export function solidPng(width: number, height: number, grey = 128): ImagePart {
  const row = Buffer.alloc(width + 1, grey);
  row[0] = 0; // filter: none
  const png = pngFile(width, height, 0, Buffer.concat(Array.from({ length: height }, () => row)), 6);
  return { type: 'image', mediaType: 'image/png', data: png.toString('base64'), width, height };
}
