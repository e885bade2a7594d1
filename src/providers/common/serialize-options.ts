/**
 * Options, warnings and results shared by the four request serializers (`toAnthropicMessages`, `toOpenAIChat`,
 * `toOpenAIResponses`, `toGemini`).
 */

import type { DocumentPart, ImagePart } from '../../conversation.js';
import type { ToolDecl } from '../../tool.js';

/**
 * Where a stored image or document sits in the conversation. `blockIndex` is the index in a tool message's `results`;
 * it is always 0 for a user message (whose `content` is the part list itself).
 */
export interface PartRef {
  messageIndex: number;
  blockIndex: number;
  partIndex: number;
}

/** The stable key of a part: `${messageIndex}:${blockIndex}:${partIndex}`. */
export function partKey(ref: PartRef): string {
  return `${ref.messageIndex}:${ref.blockIndex}:${ref.partIndex}`;
}

/**
 * Parts to leave out of THIS request (the conversation is never changed): a set of `partKey`s, or a predicate over
 * each image/document. A left-out part becomes `[image omitted: <omitReason>]` / `[document omitted: <omitReason>]`.
 * Use: a provider rejected a request because of one image → serialize again with that part's key in `omitParts`
 * (keys of the parts in a body are listed in `SerializeResult.media`) and retry once.
 */
export type PartFilter = ReadonlySet<string> | ((ref: PartRef, part: ImagePart | DocumentPart) => boolean);

export interface SerializeOptions {
  /** Tools the model may call, declared in the surface's tool format. */
  tools?: readonly ToolDecl[];
  /** Output token cap; defaults to the model's `limits.maxOutputTokens` on surfaces that require one (Anthropic). */
  maxTokens?: number;
  temperature?: number;
  /**
   * The host's system prompt. System messages found in the conversation are appended after it (in order, separated
   * by a blank line); together they go to the surface's system field (`system`, a `system` message, `instructions`,
   * `systemInstruction`).
   */
  system?: string;
  /** Parts to replace by placeholders in this request only. */
  omitParts?: PartFilter;
  /** Why `omitParts` left a part out, shown to the model. Default: `left out of this request by the host`. */
  omitReason?: string;
  /**
   * How much the model reasons before answering (see thinking.ts for the mapping): Anthropic extended thinking with a
   * token budget (2,048 / 8,192 / 24,576), OpenAI Chat `reasoning_effort`, OpenAI Responses `reasoning.effort`,
   * Gemini `thinkingConfig` (a budget on 2.5, `thinkingLevel` on 3+, thoughts included). `'off'` (and absent) asks
   * for nothing: models that always reason keep their default. A level other than `'off'` for a model whose
   * `ModelInfo.reasoning` is not true is not sent and gives an `option-ignored` warning.
   */
  thinking?: ThinkingLevel;
  /**
   * Prompt caching. Anthropic: `cache_control` breakpoints on the system prompt, the last tool declaration and the
   * last block of the last message (3 of the API's 4), `{ttl: '1h'}` for the longer cache. OpenAI and Gemini cache
   * long prompts on their own; there the option changes nothing.
   */
  promptCache?: boolean | { ttl: '5m' | '1h' };
}

/** Reasoning effort, mapped per surface. */
export type ThinkingLevel = 'off' | 'low' | 'medium' | 'high';

/** What a serializer changed or dropped on the way to the wire; a host should show these. */
export type SerializeWarningCode =
  /** An image/PDF the model cannot take was replaced by a placeholder. */
  | 'unsupported-input'
  /** Older images/PDFs were replaced by placeholders to keep the request within the model's limits. */
  | 'request-limit'
  /** Parts named by `omitParts` were replaced by placeholders. */
  | 'omitted-by-host'
  /** An option the surface has no field for was ignored. */
  | 'option-ignored'
  /** An assistant message that ended in an error or was aborted was left out, with its tool results. */
  | 'turn-skipped'
  /** A tool call had no result; an error result saying so was sent in its place. */
  | 'missing-tool-result'
  /** A tool result matched no tool call of the preceding assistant message and was left out. */
  | 'orphan-tool-result';

export interface SerializeWarning {
  code: SerializeWarningCode;
  message: string;
  /** `partKey`s of the parts concerned (media warnings). */
  parts?: string[];
}

/** An image or document that made it into the body. */
export interface MediaRef {
  /** `partKey` of the stored part. */
  key: string;
  type: 'image' | 'document';
  /** Where it sits in the body, e.g. `messages[3].content[0].content[1]`. */
  path: string;
}

export interface SerializeResult<Body> {
  /** The JSON request body (send with `JSON.stringify`); shares the stored base64 strings, never copies them. */
  body: Body;
  warnings: SerializeWarning[];
  /** Every image/document in the body, oldest first. */
  media: MediaRef[];
}
