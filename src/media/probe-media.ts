import { loadNativeAddon } from './native-addon.js';
import { assertBytes } from './sniff-media.js';
import type { MediaInfo } from './types.js';

/**
 * Header facts of a supported image or PDF — `{mediaType, width, height, frames, hasAlpha, orientation}` — read
 * without decoding pixels (GIF/WebP/APNG frames are counted by walking blocks). `null` when the bytes are not a
 * supported type (unrecognised, or e.g. TIFF/HEIC). For a PDF width/height are 0 and `frames` is the page count when
 * cheap to find (else 0).
 * Throws `MediaError`: ERR_CORRUPT_MEDIA (supported type, unreadable header), ERR_UNSUPPORTED_MEDIA (an unsupported
 * variant such as arithmetic-coded JPEG or RLE BMP), ERR_INVALID_ARGUMENT (not a Uint8Array).
 */
export function probeMedia(bytes: Uint8Array): MediaInfo | null {
  assertBytes(bytes);
  return loadNativeAddon().probe(bytes) as MediaInfo | null;
}
