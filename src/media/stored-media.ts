/**
 * A stored image/PDF part (`ImagePart` / `DocumentPart`) checked against its own bytes, where a part enters a
 * conversation without going through the media pipeline: a session file's lines (the loader's entry checks and
 * `SessionLog.appendMessage`) and a history handed to `new Agent({ messages })`. Serializers trust stored parts and
 * never look at their bytes.
 *
 * What is checked, reading at most the first 64 KiB of base64 (never the whole payload, so a check costs the same on a
 * 50 MB picture as on a small one): the data is standard, padded base64 (length a multiple of 4, the standard
 * alphabet in its first 4 KiB, padding only at the end); an image's first bytes are the PNG, JPEG, GIF or WebP its
 * `mediaType` names; its `width`/`height` are what its header says (PNG `IHDR`, GIF screen descriptor, WebP `VP8 ` /
 * `VP8L` / `VP8X`, a JPEG start-of-frame within the first 64 KiB; not checked when the header does not say); a PDF's
 * bytes start with `%PDF-`. A byte damaged deeper inside the payload is not seen here: the provider's refusal names
 * the part and the agent leaves it out (see agent/media-rejection.ts).
 */

import type { DocumentPart, ImageMediaType, ImagePart } from '../conversation.js';

/**
 * The verdict on a stored image/PDF: as claimed; repairable (`part` is what the bytes say — a `mediaType` taken from
 * the magic bytes, `width`/`height` from the header, base64 written another common way rewritten to the standard
 * form — and `lie` says what differed); or unusable (`rejected` says why: not a string, empty, not base64, not an
 * image of a supported type, not a PDF).
 */
export type StoredMediaVerdict =
  | { kind: 'ok' }
  | { kind: 'repaired'; part: ImagePart | DocumentPart; lie: string }
  | { kind: 'rejected'; rejected: string };

/** Base64 characters read from the head of the data: the alphabet check and the JPEG start-of-frame search. */
const HEAD_CHARS = 87_384;
const ALPHABET_CHARS = 4096;

/** Check `part` (a value claiming to be an image or document part) against its bytes. Pure; O(1) in the data size. */
export function checkStoredMedia(part: ImagePart | DocumentPart): StoredMediaVerdict {
  const stored: unknown = part.data;
  if (typeof stored !== 'string') return { kind: 'rejected', rejected: 'its data is not a string' };
  if (stored.length === 0) return { kind: 'rejected', rejected: 'its data is empty' };
  let data = stored;
  let lie: string | undefined;
  if (!looksStandard(stored)) {
    const standard = standardBase64(stored);
    if (standard === undefined) return { kind: 'rejected', rejected: 'its data is not valid base64' };
    data = standard;
    lie = 'its data is not standard padded base64';
  }
  if (part.type === 'document') {
    if (!data.startsWith('JVBERi0')) return { kind: 'rejected', rejected: 'its data is not a PDF file' };
    const claimed: unknown = part.mediaType;
    if (claimed !== 'application/pdf') lie ??= `its mediaType says ${String(claimed)}, not application/pdf`;
    return lie === undefined
      ? { kind: 'ok' }
      : { kind: 'repaired', part: { ...part, data, mediaType: 'application/pdf' }, lie };
  }
  const mediaType = sniffImage(data);
  if (mediaType === undefined) {
    return { kind: 'rejected', rejected: 'its data is not a PNG, JPEG, GIF or WebP image' };
  }
  if (mediaType !== part.mediaType)
    lie ??= `its mediaType says ${String(part.mediaType)} but its bytes are ${mediaType}`;
  const size = imageSize(data, mediaType);
  const width = size?.width ?? part.width;
  const height = size?.height ?? part.height;
  if (width !== part.width || height !== part.height) {
    lie ??= `it claims ${String(part.width)}x${String(part.height)} but its header says ${width}x${height}`;
  }
  return lie === undefined
    ? { kind: 'ok' }
    : { kind: 'repaired', part: { ...part, data, mediaType, width, height }, lie };
}

/**
 * Standard padded base64 as far as an O(1) look tells: a length that is a multiple of 4, the standard alphabet in the
 * first `ALPHABET_CHARS` characters, `=` only in the last two places.
 */
function looksStandard(data: string): boolean {
  if (data.length % 4 !== 0) return false;
  if (/[^A-Za-z0-9+/]/.test(data.slice(0, Math.min(data.length - 2, ALPHABET_CHARS)))) return false;
  const tail = data.slice(-2);
  return /^(?:[A-Za-z0-9+/]{2}|[A-Za-z0-9+/]=|==)$/.test(tail);
}

/**
 * Base64 written another common way, as the standard padded form the APIs take, or undefined: a `data:…;base64,`
 * prefix, line breaks or spaces (MIME), the URL-safe alphabet, missing padding. Reads the whole string (only for
 * data that does not look standard).
 */
function standardBase64(data: string): string | undefined {
  let out = data.replace(/^data:[^,]*;base64,/, '').replace(/\s+/g, '');
  if (/[-_]/.test(out)) out = out.replace(/-/g, '+').replace(/_/g, '/');
  if (out.length % 4 === 1) return undefined;
  if (out.length % 4 !== 0 && !out.endsWith('=')) out = out.padEnd(out.length + 4 - (out.length % 4), '=');
  if (out.length === 0 || out.length % 4 !== 0 || /[^A-Za-z0-9+/=]/.test(out)) return undefined;
  const pad = out.indexOf('=');
  return pad === -1 || pad === out.length - 1 || (pad === out.length - 2 && out.endsWith('='))
    ? out
    : undefined;
}

/** The image type of base64 data from its first bytes (magic numbers), or undefined. */
function sniffImage(data: string): ImageMediaType | undefined {
  const head = Buffer.from(data.slice(0, 16), 'base64');
  if (head[0] === 0x89 && head[1] === 0x50 && head[2] === 0x4e && head[3] === 0x47) return 'image/png';
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (head.toString('latin1', 0, 4) === 'GIF8') return 'image/gif';
  if (head.toString('latin1', 0, 4) === 'RIFF' && head.toString('latin1', 8, 12) === 'WEBP')
    return 'image/webp';
  return undefined;
}

/**
 * Width and height from an image's header: PNG `IHDR`, GIF screen descriptor, WebP `VP8 ` / `VP8L` / `VP8X`, JPEG
 * start-of-frame (looked for in the first 64 KiB). Undefined when the header does not say.
 */
function imageSize(data: string, type: ImageMediaType): { width: number; height: number } | undefined {
  const head = Buffer.from(data.slice(0, type === 'image/jpeg' ? HEAD_CHARS : 40), 'base64');
  if (type === 'image/png' && head.length >= 24) {
    return { width: head.readUInt32BE(16), height: head.readUInt32BE(20) };
  }
  if (type === 'image/gif' && head.length >= 10) {
    return { width: head.readUInt16LE(6), height: head.readUInt16LE(8) };
  }
  if (type === 'image/webp' && head.length >= 30) {
    const chunk = head.toString('latin1', 12, 16);
    if (chunk === 'VP8X') return { width: 1 + head.readUIntLE(24, 3), height: 1 + head.readUIntLE(27, 3) };
    if (chunk === 'VP8L') {
      const bits = head.readUInt32LE(21);
      return { width: 1 + (bits & 0x3fff), height: 1 + ((bits >>> 14) & 0x3fff) };
    }
    if (chunk === 'VP8 ')
      return { width: head.readUInt16LE(26) & 0x3fff, height: head.readUInt16LE(28) & 0x3fff };
    return undefined;
  }
  if (type === 'image/jpeg') {
    let o = 2;
    while (o + 9 < head.length && head[o] === 0xff) {
      const marker = head[o + 1] as number;
      if (marker === 0xff) {
        o++;
        continue;
      }
      const sof = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
      if (sof) return { width: head.readUInt16BE(o + 7), height: head.readUInt16BE(o + 5) };
      o += 2 + head.readUInt16BE(o + 2);
    }
  }
  return undefined;
}
