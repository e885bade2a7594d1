/**
 * Token estimates for messages, used to decide when and where to compact. Text counts ~1 token per 4 characters;
 * each image and PDF counts per `MediaEstimateOptions` (fixed by default, provider-aware when `imageTokenRule` is
 * given) — in user messages as well as in tool results. Tool-result `meta` is never sent to a model and is not counted.
 */

import type { Message, StoredPart } from '../conversation.js';
import {
  capTokens,
  checkEstimateOptions,
  documentTokensUnchecked,
  imageTokensUnchecked,
  type MediaEstimateOptions,
} from './image-tokens.js';

export type EstimateOptions = MediaEstimateOptions;

function textTokens(chars: number, options: EstimateOptions): number {
  return capTokens(Math.ceil(chars / (options.charsPerToken ?? 4)));
}

function partsTokens(parts: readonly StoredPart[], options: EstimateOptions): number {
  let chars = 0;
  let media = 0;
  for (const part of parts) {
    switch (part.type) {
      case 'text':
        chars += part.text.length;
        break;
      case 'image':
        media = capTokens(media + imageTokensUnchecked(part, options));
        break;
      case 'document':
        chars += part.name?.length ?? 0;
        media = capTokens(media + documentTokensUnchecked(part, options));
        break;
    }
  }
  return capTokens(textTokens(chars, options) + media);
}

/**
 * Estimated tokens of one message (0 .. `MAX_TOKEN_ESTIMATE`), for options the caller already passed through
 * `checkEstimateOptions` (find-cut-point.ts checks once, then estimates message by message).
 */
export function messageTokensUnchecked(message: Message, options: EstimateOptions): number {
  switch (message.role) {
    case 'system':
      return textTokens(message.content.length, options);
    case 'user':
      return partsTokens(message.content, options);
    case 'assistant': {
      let chars = 0;
      for (const block of message.content) {
        if (block.type === 'tool_call') chars += block.name.length + JSON.stringify(block.input).length;
        else chars += block.text.length;
      }
      return textTokens(chars, options);
    }
    case 'tool': {
      let total = 0;
      for (const result of message.results) {
        total = capTokens(
          total + textTokens(result.toolName.length, options) + partsTokens(result.parts, options),
        );
      }
      return total;
    }
  }
}

/**
 * Estimated input tokens of one message or a list of messages (sum of the per-message estimates): a finite integer
 * from 0 to `MAX_TOKEN_ESTIMATE` (2^53 - 1; every estimate and every sum is capped there). @throws PantoError `ERR_INVALID_ARGUMENT` for options out of range (`checkEstimateOptions`).
 */
export function estimateTokens(input: Message | readonly Message[], options: EstimateOptions = {}): number {
  checkEstimateOptions(options);
  if (!Array.isArray(input)) return messageTokensUnchecked(input as Message, options);
  let total = 0;
  for (const message of input as readonly Message[]) {
    total = capTokens(total + messageTokensUnchecked(message, options));
  }
  return total;
}
