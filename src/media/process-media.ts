import { MediaError } from './media-error.js';
import { loadNativeAddon, type NativeProcessOptions } from './native-addon.js';
import { assertBytes } from './sniff-media.js';
import type {
  MediaChange,
  OutputMediaType,
  ProcessedMedia,
  ProcessOptions,
  SupportedMediaType,
} from './types.js';

/** Defaults of `ProcessOptions` (the policy in ARCHITECTURE.md / issue 2). */
export const DEFAULT_PROCESS_OPTIONS = {
  maxDimension: 2000,
  maxEncodedBytes: 3_932_160,
  maxPixels: 100_000_000,
  maxInputBytes: 64 * 1024 * 1024,
  maxPdfBytes: 32 * 1024 * 1024,
  jpegQuality: 80,
  keepMetadata: false,
  format: 'auto',
} as const satisfies Required<Omit<ProcessOptions, 'mediaTypeHint'>>;

const INTEGER_LIMITS = {
  maxDimension: [1, 65535],
  maxEncodedBytes: [1, Number.MAX_SAFE_INTEGER],
  maxPixels: [1, Number.MAX_SAFE_INTEGER],
  maxInputBytes: [1, Number.MAX_SAFE_INTEGER],
  maxPdfBytes: [1, Number.MAX_SAFE_INTEGER],
  jpegQuality: [1, 100],
} as const;

const FORMATS = new Set(['auto', 'jpeg', 'png', 'webp']);

/**
 * Makes raw image/PDF bytes provider-ready. Policy:
 * - JPEG/PNG/WebP within `maxDimension`, not animated, EXIF orientation 1 and within `maxEncodedBytes` pass
 *   through byte-identical except that privacy metadata is stripped losslessly (JPEG EXIF/XMP/comments, PNG text and
 *   eXIf chunks, WebP EXIF/XMP; ICC profiles kept) unless `keepMetadata`. Structure is verified first
 *   (truncated JPEG/PNG/WebP -> ERR_CORRUPT_MEDIA). GIF and BMP never pass through (always re-encoded as PNG).
 * - Otherwise decode (first frame) -> resize to fit `maxDimension` (Mitchell, premultiplied alpha, never upscaled) ->
 *   apply EXIF orientation -> encode: JPEG->JPEG at `jpegQuality`, PNG->PNG, WebP->WebP (lossless stays lossless),
 *   GIF/BMP->PNG; fully opaque alpha is dropped; a JPEG output never carries transparency (flattened onto white).
 * - Over `maxEncodedBytes`: opaque -> JPEG at quality 80/70/55/40, alpha -> lossy WebP at the same ladder, then the
 *   size steps down by 0.75 until it fits; never returns more than the cap.
 * - PDF: passed through after checking `%PDF-` and a trailing `%%EOF`; `pages` when cheap.
 * All pixel work runs on the libuv threadpool. The input is read in place (do not mutate it until the promise
 * settles); the returned `data` is a new Buffer the caller owns.
 *
 * Rejects with `MediaError`: ERR_UNSUPPORTED_MEDIA (names the sniffed type), ERR_CORRUPT_MEDIA (decoder's reason),
 * ERR_MEDIA_TOO_LARGE (input/pixel/output caps, with the numbers), ERR_INVALID_ARGUMENT (bad bytes or options;
 * checked before any work is queued); `PantoError` ERR_NATIVE_UNAVAILABLE when the addon cannot load.
 */
export async function processMedia(bytes: Uint8Array, options: ProcessOptions = {}): Promise<ProcessedMedia> {
  assertBytes(bytes);
  const native = toNativeOptions(options);
  const r = await loadNativeAddon().process(bytes, native);
  const result: ProcessedMedia = {
    data: r.data,
    mediaType: r.mediaType as OutputMediaType,
    width: r.width,
    height: r.height,
    original: {
      mediaType: r.original.mediaType as SupportedMediaType,
      width: r.original.width,
      height: r.original.height,
      byteLength: r.byteLength,
      frames: r.original.frames,
      orientation: r.original.orientation,
    },
    changes: r.changes as MediaChange[],
  };
  if (r.mediaType === 'application/pdf' && r.original.frames > 0) result.pages = r.original.frames;
  return result;
}

/**
 * Check a `ProcessOptions` value the way `processMedia` does, without processing anything: throws `MediaError`
 * `ERR_INVALID_ARGUMENT` naming the bad option. Lets a caller that holds a policy for later (the dispatcher, the
 * agent) fail at once instead of dropping every attachment.
 */
export function checkProcessOptions(options: unknown): void {
  toNativeOptions(options);
}

function toNativeOptions(options: unknown): NativeProcessOptions {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new MediaError('ERR_INVALID_ARGUMENT', 'options must be an object');
  }
  const o = options as Record<string, unknown>;
  const out: NativeProcessOptions = {};
  for (const [key, value] of Object.entries(o)) {
    if (value === undefined) continue;
    if (key in INTEGER_LIMITS) {
      const [min, max] = INTEGER_LIMITS[key as keyof typeof INTEGER_LIMITS];
      if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
        throw new MediaError(
          'ERR_INVALID_ARGUMENT',
          `${key} must be an integer in [${min}, ${max}], got ${String(value)}`,
        );
      }
      out[key as keyof typeof INTEGER_LIMITS] = value;
    } else if (key === 'keepMetadata') {
      if (typeof value !== 'boolean')
        throw new MediaError('ERR_INVALID_ARGUMENT', 'keepMetadata must be a boolean');
      out.keepMetadata = value;
    } else if (key === 'mediaTypeHint') {
      if (typeof value !== 'string')
        throw new MediaError('ERR_INVALID_ARGUMENT', 'mediaTypeHint must be a string');
      out.mediaTypeHint = value;
    } else if (key === 'format') {
      if (typeof value !== 'string' || !FORMATS.has(value)) {
        throw new MediaError(
          'ERR_INVALID_ARGUMENT',
          `format must be 'auto', 'jpeg', 'png' or 'webp', got ${String(value)}`,
        );
      }
      out.format = value as NativeProcessOptions['format'] & string;
    } else {
      throw new MediaError('ERR_INVALID_ARGUMENT', `unknown option ${key}`);
    }
  }
  return out;
}
