/**
 * Result assembly: a tool's `ResultPart[]` (text + raw media bytes) → the `StoredPart[]` a conversation holds.
 *
 * Every media part goes through `processMedia` exactly once (all parts of one output at the same time, on the libuv
 * threadpool) and its output is base64-encoded exactly once. A part the pipeline refuses is replaced by a text note
 * naming the reason; nothing here rejects for bad bytes. Bytes the library decoded itself (`markPrivateMedia`) are
 * handed to `processMedia` with `transfer: true` (no input copy; the part's `data` is left empty); a tool's or host's
 * own bytes are copied and left as they were.
 */

import type { ImagePart, StoredPart } from '../conversation.js';
import { processMedia } from '../media/index.js';
import type { ProcessedMedia, ProcessMediaOptions, ProcessOptions } from '../media/types.js';
import type { MediaResultPart, ResultPart } from '../tool.js';
import { type DroppedMedia, droppedNote, processedNote } from './media-notes.js';
import { isPrivateMedia } from './private-media.js';

/** What happened to one media part, reported as it completes. */
export type MediaOutcome =
  | { type: 'processed'; partIndex: number; media: ProcessedMedia }
  | { type: 'dropped'; partIndex: number; dropped: DroppedMedia };

export interface StorePartsOptions {
  /** The current model's media policy (sides, bytes, quality). The part's own `mediaType` becomes the hint. */
  media?: ProcessOptions | undefined;
  /** Aborts the media work of these parts (each ends as a dropped part with code ERR_ABORTED). */
  signal?: AbortSignal | undefined;
  /** Called once per media part, in completion order. If it throws, `toStoredParts` rejects with that error. */
  onMedia?: ((outcome: MediaOutcome) => void) | undefined;
}

/**
 * Store `parts` in order. An image becomes an `ImagePart` followed by a note when something worth telling changed
 * (resized, converted, first frame, oriented, hint corrected); a PDF becomes a `DocumentPart` (keeping the tool's
 * `name`); refused bytes become a `[attachment dropped: …]` text part in their place. Never rejects for bad bytes
 * (only for a throwing `onMedia`).
 */
export async function toStoredParts(
  parts: readonly ResultPart[],
  options: StorePartsOptions = {},
): Promise<StoredPart[]> {
  const stored: Array<StoredPart | StoredPart[]> = new Array(parts.length);
  const pending: Array<Promise<void>> = [];
  parts.forEach((part, i) => {
    if (part.type === 'text') {
      stored[i] = { type: 'text', text: part.text };
      return;
    }
    pending.push(
      storeMedia(part, i, options).then((out) => {
        stored[i] = out;
      }),
    );
  });
  if (pending.length > 0) await Promise.all(pending);
  return stored.flat();
}

async function storeMedia(
  part: MediaResultPart,
  partIndex: number,
  options: StorePartsOptions,
): Promise<StoredPart[]> {
  const label = { hint: part.mediaType, name: part.name };
  // Read before the call: bytes the library decoded itself are handed over (`transfer`), which empties `part.data`.
  const byteLength = part.data.byteLength;
  let media: ProcessedMedia;
  try {
    const policy: ProcessMediaOptions =
      part.mediaType === undefined
        ? { ...options.media }
        : { ...options.media, mediaTypeHint: part.mediaType };
    if (options.signal !== undefined) policy.signal = options.signal;
    if (isPrivateMedia(part.data)) policy.transfer = true;
    media = await processMedia(part.data, policy);
  } catch (err) {
    const dropped = droppedNote(err, byteLength, label);
    options.onMedia?.({ type: 'dropped', partIndex, dropped });
    return [{ type: 'text', text: dropped.note }];
  }
  options.onMedia?.({ type: 'processed', partIndex, media });
  const data = base64(media.data);
  const out: StoredPart[] = [];
  if (media.mediaType === 'application/pdf') {
    out.push({
      type: 'document',
      mediaType: 'application/pdf',
      data,
      ...(part.name === undefined ? {} : { name: part.name }),
      ...(media.pages === undefined ? {} : { pages: media.pages }),
    });
  } else {
    const image: ImagePart = {
      type: 'image',
      mediaType: media.mediaType,
      data,
      width: media.width,
      height: media.height,
    };
    out.push(image);
  }
  const note = processedNote(media, label);
  if (note !== undefined) out.push({ type: 'text', text: note });
  return out;
}

/** Base64 of the pipeline's output without copying the bytes (a `Buffer` view over the same memory). */
function base64(bytes: Uint8Array): string {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return buf.toString('base64');
}
