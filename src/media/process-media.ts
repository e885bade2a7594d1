import { MediaError } from './media-error.js';
import { loadNativeAddon, type NativeProcessResult } from './native-addon.js';
import { describe, resolveProcessOptions } from './policy.js';
import { assertBytes } from './sniff-media.js';
import { takeOwnership } from './take-ownership.js';
import type {
  MediaChange,
  OutputMediaType,
  ProcessedMedia,
  ProcessMediaOptions,
  SupportedMediaType,
} from './types.js';

/** The addon's code for "the process-wide memory pool cannot fit this call now" (retried here, never surfaced). */
const BUSY = 'ERR_MEDIA_BUSY';
/** How often a call waiting for memory held by ANOTHER worker thread re-tries (same-thread releases wake it at once). */
const BUSY_RETRY_MS = 25;

/**
 * Makes raw image/PDF bytes provider-ready. Policy (defaults and ranges: `src/media/policy.ts`):
 * - JPEG/PNG/WebP within `maxDimension`, not animated, EXIF orientation 1 and within `maxEncodedBytes` pass
 *   through byte-identical except that privacy metadata is stripped losslessly (JPEG EXIF/XMP/comments, PNG text and
 *   eXIf chunks, WebP EXIF/XMP; ICC profiles kept) unless `keepMetadata`. Structure is verified first
 *   (truncated JPEG/PNG/WebP -> ERR_CORRUPT_MEDIA). GIF and BMP never pass through (always re-encoded as PNG).
 *   A PNG ancillary chunk with a bad CRC is dropped (as libpng does); a bad critical chunk is corrupt.
 * - Otherwise decode (first frame) -> resize to fit `maxDimension` (Mitchell, premultiplied alpha, never upscaled) ->
 *   apply EXIF orientation -> encode: JPEG->JPEG at `jpegQuality`, PNG->PNG, WebP->WebP (lossless stays lossless),
 *   GIF/BMP->PNG; fully opaque alpha is dropped; a JPEG output never carries transparency (flattened onto white).
 * - Over `maxEncodedBytes`: opaque -> JPEG at quality 80/70/55/40, alpha -> lossy WebP at the same ladder, then the
 *   size steps down by 0.75 until it fits; never returns more than the cap.
 * - PDF: passed through after checking `%PDF-` and a trailing `%%EOF`; `pages` when cheap.
 * Cost: every call reserves a header-derived memory estimate from a process-wide pool (`setMediaMemoryLimit`,
 * default 1 GiB) before decoding; it waits while other calls hold the pool, and is refused (ERR_MEDIA_TOO_LARGE)
 * when its estimate alone exceeds the cap. Progressive JPEGs with inconsistent/redundant progressions or more scan
 * work than 16x the image's blocks are refused (ERR_CORRUPT_MEDIA).
 * All pixel work runs on the libuv threadpool. The input bytes are copied before this returns: the caller may reuse,
 * transfer or detach its buffer at once. The returned `data` is a new Buffer the caller owns.
 * `transfer: true` hands the input's memory to the call instead of copying it (src/media/take-ownership.ts): when
 * `bytes` is the whole of a detachable, non-shared, fixed-length ArrayBuffer, that ArrayBuffer is detached before
 * this returns (every view of it then has length 0) and the call reads the memory in place and may return consumed
 * pages of it to the OS; a pass-through `data` is then a view of that memory (still no copy). Any other `bytes`
 * (subarray, pooled small Buffer, SharedArrayBuffer, resizable or non-detachable buffer) is copied as without the
 * option, silently: `bytes.byteLength === 0` right after the call is the sign the memory was taken. Nothing is
 * detached when the call is refused before any work is queued (bad options, an aborted signal, input over the size
 * limit). Docs: docs/images-and-pdfs.md, "Ownership".
 * `signal`: aborting it rejects at once with ERR_ABORTED and stops the native work between rows/scans.
 *
 * Rejects with `MediaError`: ERR_UNSUPPORTED_MEDIA (names the sniffed type), ERR_CORRUPT_MEDIA (decoder's reason),
 * ERR_MEDIA_TOO_LARGE (input/pixel/output/memory caps, with the numbers; also running out of memory),
 * ERR_INVALID_ARGUMENT (bad bytes or options; checked before any work is queued), ERR_ABORTED; `PantoError`
 * ERR_NATIVE_UNAVAILABLE when the addon cannot load.
 */
export async function processMedia(
  bytes: Uint8Array,
  options: ProcessMediaOptions = {},
): Promise<ProcessedMedia> {
  assertBytes(bytes);
  const { signal, transfer, ...policy } = checkOptionsObject(options);
  if (signal !== undefined && !(signal instanceof AbortSignal))
    throw new MediaError('ERR_INVALID_ARGUMENT', 'signal must be an AbortSignal');
  if (transfer !== undefined && typeof transfer !== 'boolean')
    throw new MediaError('ERR_INVALID_ARGUMENT', `transfer must be a boolean, got ${describe(transfer)}`);
  const resolved = resolveProcessOptions(policy);
  if (signal?.aborted) throw abortedError(signal);
  const native = loadNativeAddon();
  // An input over the size limit is refused by the backend before any work: it is not taken either.
  const owned =
    transfer === true && bytes.byteLength <= Math.max(resolved.maxInputBytes, resolved.maxPdfBytes)
      ? takeOwnership(bytes)
      : undefined;
  const input = owned ?? bytes;
  const token = signal === undefined ? undefined : native.abortToken();
  let stop: ((err: MediaError) => void) | undefined;
  const aborted = signal && new Promise<never>((_, reject) => (stop = reject));
  const onAbort = (): void => {
    native.abort(token);
    stop?.(abortedError(signal as AbortSignal));
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for (;;) {
      // Every try (a BUSY retry too) hands over the same owned bytes: the backend holds them until it settles.
      const work = native.process(input, resolved, token, owned !== undefined);
      let r: NativeProcessResult;
      try {
        r = await (aborted ? Promise.race([work, aborted]) : work);
      } catch (err) {
        if ((err as { code?: unknown }).code !== BUSY) throw err;
        await memoryReleased(aborted);
        continue;
      } finally {
        work.then(wakeWaiters, wakeWaiters);
      }
      return toProcessed(r);
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

function checkOptionsObject(options: unknown): ProcessMediaOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new MediaError('ERR_INVALID_ARGUMENT', 'options must be an object');
  return options as ProcessMediaOptions;
}

function toProcessed(r: NativeProcessResult): ProcessedMedia {
  // A pass-through of an owned input comes back as a view of it (no copy): wrap it as a Buffer over the same memory.
  const data = Buffer.isBuffer(r.data)
    ? r.data
    : Buffer.from(r.data.buffer, r.data.byteOffset, r.data.byteLength);
  const result: ProcessedMedia = {
    data,
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

function abortedError(signal: AbortSignal): MediaError {
  const err = new MediaError('ERR_ABORTED', 'media processing was aborted');
  (err as { cause?: unknown }).cause = signal.reason;
  return err;
}

// Calls waiting for room in the process-wide memory pool. Any call of this thread that settles wakes them at once;
// memory freed by another worker thread is noticed by the timer.
const waiters = new Set<() => void>();

function wakeWaiters(): void {
  for (const wake of [...waiters]) wake();
}

function memoryReleased(aborted: Promise<never> | undefined): Promise<void> {
  let wake: (() => void) | undefined;
  const freed = new Promise<void>((resolve) => {
    const timer = setTimeout(done, BUSY_RETRY_MS);
    function done(): void {
      clearTimeout(timer);
      waiters.delete(done);
      resolve();
    }
    wake = done;
    waiters.add(done);
  });
  if (!aborted) return freed;
  return Promise.race([freed, aborted]).finally(() => wake?.());
}
