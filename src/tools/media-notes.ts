/**
 * The notes the model reads beside a stored image or document: what the media pipeline changed that matters for
 * reading the picture (scale, format, frame, rotation, a wrong declared type), and why an attachment was dropped.
 *
 * Quiet on purpose: metadata stripping and a same-format re-encode change nothing the model can see.
 */

import { isPantoError } from '../errors.js';
import type { MediaChange, ProcessedMedia } from '../media/types.js';

/** What a note needs from the tool's part besides the pipeline result. */
export interface MediaPartLabel {
  /** The tool's media-type hint, if it gave one. */
  hint?: string | undefined;
  /** The tool's file name, if it gave one. */
  name?: string | undefined;
}

/**
 * The note for a processed part, e.g. `[image: original 4032x3024, shown at 2000x1500; multiply coordinates by 2.016
 * to map to the original]`, or undefined when nothing worth telling changed.
 */
export function processedNote(media: ProcessedMedia, label: MediaPartLabel): string | undefined {
  const says: string[] = [];
  const { original } = media;
  const has = (c: MediaChange) => media.changes.includes(c);
  if (has('hint-corrected')) {
    says.push(`declared as ${label.hint ?? 'another type'} but the bytes are ${original.mediaType}`);
  }
  if (has('converted') && original.mediaType !== media.mediaType) {
    says.push(`converted from ${original.mediaType} to ${media.mediaType}`);
  }
  if (has('first-frame')) {
    says.push(
      original.frames > 1
        ? `first frame of a ${original.frames}-frame animation shown`
        : 'first frame of an animation shown',
    );
  }
  if (has('oriented')) says.push('rotated upright as its EXIF orientation asks');
  if (has('flattened')) says.push('transparent areas flattened onto a solid background');
  if (has('quality-reduced')) says.push('re-compressed at lower quality to fit the size limit');
  if (has('resized')) says.push(resizeNote(media));
  if (says.length === 0) return undefined;
  const kind = media.mediaType === 'application/pdf' ? 'document' : 'image';
  return `[${kind}${label.name ? ` '${label.name}'` : ''}: ${says.join('; ')}]`;
}

/** `original WxH, shown at wxh; multiply coordinates by S to map to the original`, in upright terms. */
function resizeNote(media: ProcessedMedia): string {
  let ow = media.original.width;
  let oh = media.original.height;
  // A 90°-turning orientation (5..8) swaps the sides; the model maps shown (upright) coordinates to the upright
  // original. Decide from the aspect ratios so it holds whichever way the pipeline reports the original.
  if (
    media.changes.includes('oriented') &&
    media.original.orientation >= 5 &&
    ow > oh !== media.width > media.height
  ) {
    [ow, oh] = [oh, ow];
  }
  const sx = formatScale(ow / media.width);
  const sy = formatScale(oh / media.height);
  const how = sx === sy ? `multiply coordinates by ${sx}` : `multiply x by ${sx} and y by ${sy}`;
  return `original ${ow}x${oh}, shown at ${media.width}x${media.height}; ${how} to map to the original`;
}

function formatScale(s: number): string {
  return String(Number(s.toFixed(3)));
}

/** What the model and the host learn about a dropped attachment. */
export interface DroppedMedia {
  code: string;
  note: string;
  mediaType?: string;
}

/**
 * The note for a part the pipeline refused, naming the reason, e.g. `[attachment dropped: image/tiff is not
 * supported; convert it to PNG or JPEG]`. The pipeline's own message is used where it is already model-readable
 * (it names the type, the limit or the decoder's finding); bytes of no known type get a note naming the size and
 * the declared type.
 */
export function droppedNote(err: unknown, byteLength: number, label: MediaPartLabel): DroppedMedia {
  const what = label.name ? `attachment '${label.name}'` : 'attachment';
  const sniffed = mediaTypeOf(err);
  const detail = (err instanceof Error ? err.message : String(err)).trim();
  const code = isPantoError(err) ? err.code : 'ERR_INTERNAL';
  let reason: string;
  switch (code) {
    case 'ERR_UNSUPPORTED_MEDIA':
      if (sniffed) {
        reason = detail || `${sniffed} is not supported; convert it to PNG or JPEG`;
      } else {
        const declared = label.hint ? ` (declared as ${label.hint})` : '';
        reason = `its ${byteLength} bytes${declared} are not a supported image (PNG, JPEG, GIF, WebP, BMP) or PDF`;
      }
      break;
    case 'ERR_CORRUPT_MEDIA':
      reason = /corrupt|truncated/i.test(detail)
        ? detail
        : `the ${sniffed ?? 'file'} is corrupt or truncated (${detail})`;
      break;
    case 'ERR_MEDIA_TOO_LARGE':
      reason = `too large to send: ${detail}`;
      break;
    case 'ERR_NATIVE_UNAVAILABLE':
      // The host's problem, not the file's: the model gets one line; the host's event carries the full message.
      reason = 'images and PDFs cannot be processed on this host (the native media addon is not installed)';
      break;
    default:
      reason = `it could not be processed: ${detail}`;
  }
  const dropped: DroppedMedia = { code, note: `[${what} dropped: ${reason}]` };
  if (sniffed) dropped.mediaType = sniffed;
  return dropped;
}

function mediaTypeOf(err: unknown): string | undefined {
  const t = (err as { mediaType?: unknown } | null)?.mediaType;
  return typeof t === 'string' && t !== '' ? t : undefined;
}
