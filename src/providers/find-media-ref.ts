/**
 * Which image/document of a request a provider's error message points at, so a transport can leave exactly that part
 * out of a retry (`omitParts`). Providers name the failing field by its path in the body, in either notation:
 * Anthropic `messages.2.content.1.content.0.source.base64: image exceeds 5 MB maximum`, OpenAI
 * `Invalid 'messages[5].content[1].image_url.url'` / `input[3].output[0].image_url`. A Gemini error rarely names a
 * path; then there is no match and the caller decides (e.g. omit the newest media or give up).
 */

import type { MediaRef } from './serialize-options.js';

const PATH = /\b(?:messages|input|contents)(?:\.\d+|\[\d+\]|\.[A-Za-z_]\w*)+/g;

/** Bracket notation for array indices: `messages.2.content` → `messages[2].content`. */
function normalize(path: string): string {
  return path.replace(/\.(\d+)(?=\.|\[|$)/g, '[$1]');
}

/**
 * The `MediaRef` (from `SerializeResult.media`) whose body path a path in `errorText` falls inside, or `undefined`.
 * When several paths match, the first one in the text wins.
 */
export function findMediaRef(media: readonly MediaRef[], errorText: string): MediaRef | undefined {
  for (const match of errorText.matchAll(PATH)) {
    const path = normalize(match[0]);
    let best: MediaRef | undefined;
    for (const ref of media) {
      const inside = path === ref.path || path.startsWith(`${ref.path}.`) || path.startsWith(`${ref.path}[`);
      if (inside && (!best || ref.path.length > best.path.length)) best = ref;
    }
    if (best) return best;
  }
  return undefined;
}
