/**
 * What a model accepts and how much of it: the facts the serializers, the request guard, the media policy and the
 * token estimate read. A `ModelInfo` is plain JSON data; build one with `resolveModel` / `defineModel`
 * (model-catalog.ts) rather than by hand so that defaults and validation apply.
 */

import type { ImageMediaType, ImageTokenRule } from '../../conversation.js';

/** The wire API a model is spoken to through. */
export type ModelApi = 'anthropic-messages' | 'openai-chat' | 'openai-responses' | 'gemini';

/** Which inputs a model takes besides text. `false` means the serializer sends an honest placeholder instead. */
export interface ModelInput {
  text: true;
  image: boolean;
  pdf: boolean;
  /** Image types the model accepts (all four stored types when absent). Gemini takes no GIF. */
  imageTypes?: readonly ImageMediaType[];
}

/**
 * A stricter side limit once a request holds many images: Anthropic requires every image to be at most 2000 px per
 * side when a request holds more than 20 images.
 */
export interface ManyImageRule {
  /** The rule applies when a request holds more than this many images. */
  over: number;
  /** Then every image must be at most this many pixels per side. */
  maxSide: number;
}

/**
 * Request limits. Byte limits count base64 characters (what is on the wire), not raw bytes. An absent optional limit
 * means the provider documents none the guard could check.
 */
export interface ModelLimits {
  /** Images per request. */
  imagesPerRequest: number;
  /** Longest side of one image in pixels (Anthropic: 8000). */
  maxImageSide?: number;
  manyImageRule?: ManyImageRule;
  /** Base64 length of one image (Anthropic: 5 MiB). */
  maxImageBytes: number;
  /** Base64 length of all images in one request (OpenAI: 50 MB). */
  totalImageBytes?: number;
  /** Size of the whole request body. */
  requestBytes: number;
  /** Base64 length of all PDFs in one request. */
  pdfBytes?: number;
  /** PDF pages per request, counted over documents whose page count is known. */
  pdfPages?: number;
  /** Context window in tokens. */
  contextWindow: number;
  /** Largest `max_tokens` the model accepts; the default when a request names none. */
  maxOutputTokens: number;
}

export interface ModelInfo {
  /** The id sent to the provider, e.g. `claude-sonnet-4-5`. */
  id: string;
  api: ModelApi;
  /** Who serves it (`anthropic`, `openai`, `google`, or a host's name for a compatible server). */
  provider: string;
  input: ModelInput;
  limits: ModelLimits;
  /** How the provider charges for an image (token estimates). */
  imageTokenRule: ImageTokenRule;
  /**
   * Gemini: images/PDFs may travel inside `functionResponse.parts` (Gemini 3+). When false they are sent as parts
   * in a user content after the function responses. Ignored by the other surfaces.
   */
  multimodalToolResults: boolean;
  /**
   * The model can reason before answering (Anthropic extended thinking, OpenAI reasoning effort, Gemini thinking), so
   * `SerializeOptions.thinking` applies. Absent means false: the serializers then ignore `thinking` with an
   * `option-ignored` warning. Unknown models are false until the host declares `reasoning: true`.
   */
  reasoning?: boolean;
  /** True when the model came from the built-in catalog (not a host declaration or an unknown-id default). */
  known: boolean;
}

/** A partial `ModelInfo` a host passes to override or declare a model. Nested objects merge field by field. */
export interface ModelOverrides {
  api?: ModelApi;
  provider?: string;
  input?: Partial<Omit<ModelInput, 'text'>>;
  limits?: Partial<ModelLimits>;
  imageTokenRule?: ImageTokenRule;
  multimodalToolResults?: boolean;
  reasoning?: boolean;
  /**
   * Shorthand for `limits.contextWindow` (wins over it): the context window in tokens, e.g. 8192 for a llama.cpp
   * server started with `-c 8192`. Unknown models default to 128,000.
   */
  contextWindow?: number;
}

/** What `defineModel` takes: an id and a wire API are required, everything else has a conservative default. */
export interface ModelSpec extends ModelOverrides {
  id: string;
  api: ModelApi;
}
