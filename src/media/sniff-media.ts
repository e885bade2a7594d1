import { MediaError } from './media-error.js';
import { loadNativeAddon } from './native-addon.js';
import type { SniffedMediaType } from './types.js';

/**
 * The media type of `bytes` from magic numbers only (PNG, JPEG, GIF, BMP, WebP, PDF; also TIFF, HEIC, AVIF, ICO,
 * JPEG XL and SVG so errors can name them), or `null` when unrecognised. Reads at most the first 1 KiB.
 * Throws `MediaError` ERR_INVALID_ARGUMENT when `bytes` is not a Uint8Array.
 */
export function sniffMedia(bytes: Uint8Array): SniffedMediaType | null {
  assertBytes(bytes);
  return loadNativeAddon().sniff(bytes) as SniffedMediaType | null;
}

/** Throws ERR_INVALID_ARGUMENT unless `bytes` is a Uint8Array (a Buffer is one). */
export function assertBytes(bytes: unknown): asserts bytes is Uint8Array {
  if (!(bytes instanceof Uint8Array)) {
    throw new MediaError(
      'ERR_INVALID_ARGUMENT',
      `bytes must be a Buffer or Uint8Array, got ${describe(bytes)}`,
    );
  }
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return `an object (${v.constructor?.name ?? 'no prototype'})`;
  return typeof v;
}
