/**
 * Which image/PDF of a request a provider's 4xx blamed, so the agent can leave that one part out and retry once.
 *
 * Contract: returns the blamed `MediaRef` only when the error names it unambiguously —
 * - a request path in the message or `param`, in any of the surfaces' spellings (`messages.3.content.0.content.1`,
 *   `messages.3.content.0.tool_result.content.1`,
 *   `messages.[3].content.[1].image_url`, `input[2].output[0]`, `contents[4].parts[1].inline_data`), matched against
 *   the serializer's `MediaRef.path`s (longest match wins);
 * - or, with no path, a message about an image (or a PDF/document/file) when the request holds exactly one part of
 *   that kind.
 * Otherwise `undefined`: the caller surfaces the error instead of guessing.
 */

import type { Message } from '../conversation.js';
import type { MediaRef } from '../providers/common/serialize-options.js';
import type { ProviderError } from '../providers/transport/provider-error.js';

/** Statuses that can mean "this request's content is bad" (not auth, not rate limits). */
const CONTENT_STATUSES = new Set([400, 413, 415, 422]);

/** Normalise every index spelling to brackets: `a.3` / `a.[3]` / `a[3]` → `a[3]`. */
export function normalizeRequestPath(text: string): string {
  return (
    text
      .replace(/\.\[(\d+)\]/g, '[$1]')
      .replace(/\.(\d+)(?=$|[^\d])/g, '[$1]')
      // Anthropic names the block type inside a path: `content.0.tool_result.content.1`.
      .replace(/\]\.tool_result\./g, '].')
      .replace(/function_response/g, 'functionResponse')
  );
}

export function findRejectedMedia(error: ProviderError, media: readonly MediaRef[]): MediaRef | undefined {
  if (media.length === 0) return undefined;
  if (error.status !== undefined && !CONTENT_STATUSES.has(error.status)) return undefined;
  if (error.status === undefined && error.retryable) return undefined;
  const text = normalizeRequestPath(`${error.param ?? ''} ${error.providerMessage}`);
  let best: MediaRef | undefined;
  for (const ref of media) {
    if (text.includes(ref.path) && (best === undefined || ref.path.length > best.path.length)) best = ref;
  }
  if (best !== undefined) return best;
  const lower = text.toLowerCase();
  const images = media.filter((m) => m.type === 'image');
  const documents = media.filter((m) => m.type === 'document');
  const aboutImage = /\bimages?\b|image_url|inline_?data|picture/.test(lower);
  const aboutDocument = /\bpdfs?\b|\bdocuments?\b|\bfiles?\b|file_data/.test(lower);
  if (aboutImage && !aboutDocument && images.length === 1) return images[0];
  if (aboutDocument && !aboutImage && documents.length === 1) return documents[0];
  return undefined;
}

/**
 * The base64 of the image/PDF a `MediaRef` points at in `messages` (its `key` is the serializer's
 * `messageIndex:blockIndex:partIndex`, see `partKey`), or undefined when the key points at no media part.
 */
export function mediaDataAt(messages: readonly Message[], ref: MediaRef): string | undefined {
  const [m, b, p] = ref.key.split(':').map(Number) as [number, number, number];
  const message = messages[m];
  const parts =
    message?.role === 'user'
      ? message.content
      : message?.role === 'tool'
        ? message.results[b]?.parts
        : undefined;
  const part = parts?.[p];
  return part !== undefined && part.type !== 'text' ? part.data : undefined;
}
