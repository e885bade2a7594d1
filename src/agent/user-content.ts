/**
 * A user message from what a host has: text, raw file bytes (a pasted screenshot, an attached PDF), or parts that
 * already look stored.
 *
 * Contract: every image/PDF — raw bytes AND already-stored base64 parts — goes through `processMedia` with the given
 * policy exactly as tool output does (`toStoredParts`), so a user turn can never put into history a picture some
 * provider would reject. Bytes the pipeline refuses become a `[attachment dropped: …]` text part in their place and
 * are reported through `onMedia`; nothing rejects for bad bytes.
 */

import type { StoredPart, UserMessage } from '../conversation.js';
import { PantoError } from '../errors.js';
import type { ProcessOptions } from '../media/types.js';
import type { MediaResultPart, ResultPart } from '../tool.js';
import { markPrivateMedia } from '../tools/private-media.js';
import { type MediaOutcome, toStoredParts } from '../tools/store-parts.js';

/** One piece of user content: text, raw media bytes, or a stored part. */
export type UserContentPart = string | StoredPart | MediaResultPart;

/** What `Agent.prompt` and `buildUserMessage` accept. */
export type UserContent = string | readonly UserContentPart[];

export interface BuildUserMessageOptions {
  /** The media policy (usually `mediaPolicyFor(model)`). */
  media?: ProcessOptions | undefined;
  onMedia?: ((outcome: MediaOutcome) => void) | undefined;
}

/**
 * Build a user message. Throws `ERR_INVALID_ARGUMENT` for content that is not a string or an array of parts.
 * @example buildUserMessage(['What is in this picture?', { type: 'media', data: await readFile('shot.png') }])
 */
export async function buildUserMessage(
  content: UserContent,
  options: BuildUserMessageOptions = {},
): Promise<UserMessage> {
  if (typeof content === 'string') return { role: 'user', content: [{ type: 'text', text: content }] };
  if (!Array.isArray(content)) {
    throw new PantoError('ERR_INVALID_ARGUMENT', 'user content must be a string or an array of parts');
  }
  const parts: ResultPart[] = content.map((c, i) => toResultPart(c, i));
  if (parts.every((p) => p.type === 'text')) {
    return {
      role: 'user',
      content: parts.map((p) => ({ type: 'text', text: (p as { text: string }).text })),
    };
  }
  return {
    role: 'user',
    content: await toStoredParts(parts, { media: options.media, onMedia: options.onMedia }),
  };
}

function toResultPart(part: UserContentPart, index: number): ResultPart {
  if (typeof part === 'string') return { type: 'text', text: part };
  switch (part?.type) {
    case 'text':
      if (typeof part.text === 'string') return { type: 'text', text: part.text };
      break;
    case 'media':
      if (part.data instanceof Uint8Array) return part;
      break;
    case 'image':
    case 'document':
      if (typeof part.data === 'string') {
        // Re-validate stored parts from the host: same pipeline, same guarantees as raw bytes.
        const media: MediaResultPart = {
          type: 'media',
          // Decoded here and referenced nowhere else: processMedia may take it over instead of copying it.
          data: markPrivateMedia(Buffer.from(part.data, 'base64')),
          mediaType: part.mediaType,
        };
        if (part.type === 'document' && part.name !== undefined) media.name = part.name;
        return media;
      }
      break;
    default:
      break;
  }
  throw new PantoError(
    'ERR_INVALID_ARGUMENT',
    `user content part ${index} is not a string, {type:'text', text}, {type:'media', data: Uint8Array} or a stored image/document`,
  );
}
