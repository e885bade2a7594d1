/**
 * The built-in model catalog and the explicit opt-in for everything else.
 *
 * Known families (matched by id pattern, first match wins): Claude 4.x (`claude-opus-4*`, `claude-sonnet-4*`,
 * `claude-haiku-4*`), OpenAI `gpt-4o*`, `gpt-4.1*`, `gpt-5*`, `o3*`, `o4-mini*`, Google `gemini-2.*`, `gemini-3*`.
 * An id that matches none is TEXT-ONLY until the host declares otherwise — `resolveModel(id, {input: {image: true}})`
 * or `defineModel({...})` — so a picture is never handed to a model that would answer `[Unsupported Image]` or read
 * base64 as text.
 *
 * Sources of the limits: the providers' published docs (Anthropic vision and PDF support, OpenAI images and file
 * inputs guides, Gemini image and document understanding). Byte limits are base64 lengths. Where a provider documents
 * no number (OpenAI's request size), the value is a conservative guess a host can override.
 */

import { IMAGE_TOKEN_RULES, isImageTokenRule } from '../../compaction/image-tokens.js';
import type { ImageMediaType } from '../../conversation.js';
import { PantoError } from '../../errors.js';
import { DEFAULT_PROCESS_OPTIONS } from '../../media/policy.js';
import type { ProcessOptions } from '../../media/types.js';
import type { ModelApi, ModelInfo, ModelLimits, ModelOverrides, ModelSpec } from './model-info.js';

const MiB = 1024 * 1024;

type Family = Omit<ModelInfo, 'id' | 'known'>;

/** Claude models with a 200k-token context window (100 images per request; see `ANTHROPIC_1M` for the others). */
const ANTHROPIC_LIMITS: ModelLimits = {
  imagesPerRequest: 100,
  maxImageSide: 8000,
  manyImageRule: { over: 20, maxSide: 2000 },
  maxImageBytes: 5 * MiB,
  requestBytes: 32 * MiB,
  pdfBytes: 32 * MiB,
  pdfPages: 100,
  contextWindow: 200_000,
  maxOutputTokens: 64_000,
};

const OPENAI_LIMITS: ModelLimits = {
  imagesPerRequest: 500,
  maxImageBytes: 20 * MiB,
  totalImageBytes: 50 * MiB,
  requestBytes: 50 * MiB,
  pdfBytes: 32 * MiB,
  pdfPages: 100,
  contextWindow: 128_000,
  maxOutputTokens: 16_384,
};

const GEMINI_IMAGE_TYPES: readonly ImageMediaType[] = ['image/png', 'image/jpeg', 'image/webp'];

const GEMINI_LIMITS: ModelLimits = {
  imagesPerRequest: 3000,
  maxImageBytes: 100 * MiB,
  requestBytes: 100 * MiB,
  pdfBytes: 50 * MiB,
  pdfPages: 1000,
  contextWindow: 1_048_576,
  maxOutputTokens: 65_536,
};

/**
 * Images per request and context window of the Claude models whose context window is 1M tokens. Anthropic: "up to
 * 600 for API requests (100 for models with a 200k-token context window)" (https://platform.claude.com/docs/en/build-with-claude/vision,
 * "Basics and limits"). Which models have 1M: anthropics/skills
 * `skills/claude-api/shared/models.md` @ 2a6fda3f06c5d4fa6252ba54bee97eb538bee251 lists Claude Opus 4.6, 4.7, 4.8 and
 * Sonnet 4.6 at 1M, Haiku 4.5 at 200K. Sonnet 4 / 4.5 reach 1M only with a beta header this library does not send,
 * and Opus 4 / 4.1 / 4.5 have 200K: those keep 100 (`ANTHROPIC_LIMITS`).
 */
const ANTHROPIC_1M: Partial<ModelLimits> = { imagesPerRequest: 600, contextWindow: 1_000_000 };

function claude(maxOutputTokens: number, long: Partial<ModelLimits> = {}): Family {
  return {
    api: 'anthropic-messages',
    provider: 'anthropic',
    input: { text: true, image: true, pdf: true },
    limits: { ...ANTHROPIC_LIMITS, ...long, maxOutputTokens },
    imageTokenRule: 'anthropic',
    multimodalToolResults: true,
    reasoning: true,
  };
}

function openai(
  limits: Partial<ModelLimits>,
  imageTokenRule: 'openai-tile' | 'openai-patch',
  reasoning: boolean,
  image = true,
): Family {
  return {
    api: 'openai-responses',
    provider: 'openai',
    input: { text: true, image, pdf: image },
    limits: { ...OPENAI_LIMITS, ...limits },
    imageTokenRule,
    multimodalToolResults: true,
    reasoning,
  };
}

function gemini(maxOutputTokens: number, multimodalToolResults: boolean, reasoning: boolean): Family {
  return {
    api: 'gemini',
    provider: 'google',
    input: { text: true, image: true, pdf: true, imageTypes: GEMINI_IMAGE_TYPES },
    limits: { ...GEMINI_LIMITS, maxOutputTokens },
    imageTokenRule: 'gemini',
    multimodalToolResults,
    reasoning,
  };
}

/** First match wins: specific patterns before general ones. */
const FAMILIES: ReadonlyArray<readonly [RegExp, Family]> = [
  // Claude Opus 4 and 4.1 stop at 32k output tokens; later 4.x models at 64k.
  [/^claude-opus-4(-0|-1)?(-\d{8})?$/, claude(32_000)],
  // The 1M-context models (Opus 4.6+, Sonnet 4.6+; `4.6` as gateways spell it): 600 images per request.
  [/^claude-(opus|sonnet)-4[-.][6-9](-|$)/, claude(64_000, ANTHROPIC_1M)],
  [/^claude-(opus|sonnet|haiku)-4/, claude(64_000)],
  [/^o3-mini/, openai({ contextWindow: 200_000, maxOutputTokens: 100_000 }, 'openai-tile', true, false)],
  [/^o4-mini/, openai({ contextWindow: 200_000, maxOutputTokens: 100_000 }, 'openai-patch', true)],
  [/^o3/, openai({ contextWindow: 200_000, maxOutputTokens: 100_000 }, 'openai-tile', true)],
  [/^gpt-5(\.\d+)?-chat/, openai({ contextWindow: 128_000, maxOutputTokens: 16_384 }, 'openai-tile', false)],
  [
    /^gpt-5(\.\d+)?-(mini|nano)/,
    openai({ contextWindow: 400_000, maxOutputTokens: 128_000 }, 'openai-patch', true),
  ],
  [/^gpt-5/, openai({ contextWindow: 400_000, maxOutputTokens: 128_000 }, 'openai-tile', true)],
  [
    /^gpt-4\.1-(mini|nano)/,
    openai({ contextWindow: 1_047_576, maxOutputTokens: 32_768 }, 'openai-patch', false),
  ],
  [/^gpt-4\.1/, openai({ contextWindow: 1_047_576, maxOutputTokens: 32_768 }, 'openai-tile', false)],
  [/^(gpt-4o|chatgpt-4o)/, openai({}, 'openai-tile', false)],
  [/^gemini-[3-9]/, gemini(65_536, true, true)],
  [/^gemini-2\.0/, gemini(8_192, false, false)],
  [/^gemini-2/, gemini(65_536, false, true)],
];

/** Conservative limits for a model the catalog does not know (used once a host opts into images or PDFs). */
const UNKNOWN_LIMITS: ModelLimits = {
  imagesPerRequest: 20,
  maxImageBytes: 5 * MiB,
  requestBytes: 20 * MiB,
  pdfBytes: 20 * MiB,
  contextWindow: 128_000,
  maxOutputTokens: 8_192,
};

const APIS: readonly ModelApi[] = ['anthropic-messages', 'openai-chat', 'openai-responses', 'gemini'];

/** The built-in entry for `id`, or `undefined` when the catalog does not know it. */
export function getModel(id: string): ModelInfo | undefined {
  checkId(id);
  for (const [pattern, family] of FAMILIES) {
    if (pattern.test(id)) return { id, known: true, ...cloneFamily(family) };
  }
  // A gateway id (`openai/gpt-4o`, `anthropic/claude-sonnet-4.5`, `google/gemini-2.5-flash` on OpenRouter and the
  // like): the model's own inputs and limits, spoken to through the gateway's OpenAI Chat protocol.
  const slash = id.lastIndexOf('/');
  if (slash > 0 && slash < id.length - 1) {
    const base = getModel(id.slice(slash + 1));
    if (base)
      return { ...base, id, api: 'openai-chat', provider: 'openai-compatible', multimodalToolResults: true };
  }
  return undefined;
}

/**
 * A `ModelInfo` for any id: the catalog entry merged with `overrides`, or — for an id the catalog does not know — a
 * TEXT-ONLY model (images and PDFs become placeholders) whose API is guessed from the id (`claude*` Anthropic,
 * `gemini*` Gemini, `gpt*`/`o<digit>*` OpenAI Responses, anything else OpenAI Chat, the protocol most compatible
 * servers speak) until `overrides` say otherwise.
 *
 * @throws PantoError `ERR_INVALID_ARGUMENT` for an empty id or an invalid override (unknown API, a limit that is not a
 *   positive number).
 */
export function resolveModel(id: string, overrides: ModelOverrides = {}): ModelInfo {
  const base = getModel(id) ?? unknownModel(id, overrides.api ?? guessApi(id));
  return applyOverrides(base, overrides);
}

/**
 * Declare a model the catalog does not know (or replace what it says about one). Inputs other than text default to
 * off and limits to conservative values; `known` is false.
 *
 * @throws PantoError `ERR_INVALID_ARGUMENT` as `resolveModel`.
 */
export function defineModel(spec: ModelSpec): ModelInfo {
  return applyOverrides(unknownModel(spec.id, spec.api), spec);
}

/**
 * The media-pipeline options (`processMedia(bytes, options)`) that make a stored image valid for `model`: the tighter
 * of the pipeline defaults (2000 px, base64 <= 5 MiB, 32 MiB PDFs) and the model's own limits (including the
 * many-image side rule, so a long image-heavy session never trips it).
 */
export function mediaPolicyFor(
  model: ModelInfo,
): Required<Pick<ProcessOptions, 'maxDimension' | 'maxEncodedBytes' | 'maxPdfBytes'>> {
  const { limits } = model;
  const maxDimension = Math.min(
    DEFAULT_PROCESS_OPTIONS.maxDimension,
    limits.maxImageSide ?? Number.POSITIVE_INFINITY,
    limits.manyImageRule?.maxSide ?? Number.POSITIVE_INFINITY,
  );
  return {
    maxDimension,
    maxEncodedBytes: Math.min(DEFAULT_PROCESS_OPTIONS.maxEncodedBytes, rawBytesFor(limits.maxImageBytes)),
    maxPdfBytes: Math.min(
      DEFAULT_PROCESS_OPTIONS.maxPdfBytes,
      rawBytesFor(limits.pdfBytes ?? limits.requestBytes),
    ),
  };
}

/** Largest raw byte count whose base64 encoding fits in `base64Length` characters. */
function rawBytesFor(base64Length: number): number {
  return Math.floor(base64Length / 4) * 3;
}

function unknownModel(id: string, api: ModelApi): ModelInfo {
  checkId(id);
  return {
    id,
    api,
    provider: guessProvider(api),
    input: { text: true, image: false, pdf: false },
    limits: { ...UNKNOWN_LIMITS },
    imageTokenRule: 'fixed',
    multimodalToolResults: false,
    known: false,
  };
}

function guessApi(id: string): ModelApi {
  if (/^claude/i.test(id)) return 'anthropic-messages';
  if (/^gemini/i.test(id)) return 'gemini';
  if (/^(gpt-|chatgpt-|o\d)/i.test(id)) return 'openai-responses';
  return 'openai-chat';
}

function guessProvider(api: ModelApi): string {
  if (api === 'anthropic-messages') return 'anthropic';
  if (api === 'gemini') return 'google';
  return api === 'openai-responses' ? 'openai' : 'openai-compatible';
}

function cloneFamily(family: Family): Family {
  const input = { ...family.input };
  const limits = { ...family.limits };
  if (family.limits.manyImageRule) limits.manyImageRule = { ...family.limits.manyImageRule };
  return { ...family, input, limits };
}

function applyOverrides(base: ModelInfo, o: ModelOverrides): ModelInfo {
  if (o.api !== undefined && !APIS.includes(o.api)) {
    throw new PantoError('ERR_INVALID_ARGUMENT', `model '${base.id}': unknown api '${String(o.api)}'`);
  }
  const limits = { ...base.limits };
  for (const [key, value] of Object.entries(o.limits ?? {})) {
    if (value === undefined) continue;
    if (key === 'manyImageRule') {
      const rule = value as ModelLimits['manyImageRule'];
      checkCount(base.id, 'limits.manyImageRule.over', rule?.over);
      checkCount(base.id, 'limits.manyImageRule.maxSide', rule?.maxSide);
    } else {
      checkCount(base.id, `limits.${key}`, value);
    }
    (limits as Record<string, unknown>)[key] = value;
  }
  if (o.contextWindow !== undefined) {
    checkCount(base.id, 'contextWindow', o.contextWindow);
    limits.contextWindow = o.contextWindow;
  }
  if (!(limits.contextWindow >= 1)) {
    throw new PantoError(
      'ERR_INVALID_ARGUMENT',
      `model '${base.id}': the context window must be at least 1 token`,
    );
  }
  const input = { ...base.input, ...stripUndefined(o.input ?? {}) };
  const out: ModelInfo = { ...base, ...stripUndefined({ api: o.api, provider: o.provider }), input, limits };
  if (o.imageTokenRule !== undefined) {
    if (!isImageTokenRule(o.imageTokenRule)) {
      throw new PantoError(
        'ERR_INVALID_ARGUMENT',
        `model '${base.id}': imageTokenRule must be one of ${IMAGE_TOKEN_RULES.join(', ')} (got ${JSON.stringify(String(o.imageTokenRule)).slice(0, 60)})`,
      );
    }
    out.imageTokenRule = o.imageTokenRule;
  }
  if (o.multimodalToolResults !== undefined) out.multimodalToolResults = o.multimodalToolResults;
  if (o.reasoning !== undefined) out.reasoning = o.reasoning === true;
  return out;
}

function stripUndefined<T extends object>(o: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]: Exclude<T[K], undefined>;
  };
}

function checkId(id: string): void {
  if (typeof id !== 'string' || id.length === 0) {
    throw new PantoError('ERR_INVALID_ARGUMENT', 'a model id must be a non-empty string');
  }
}

function checkCount(id: string, name: string, value: unknown): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new PantoError('ERR_INVALID_ARGUMENT', `model '${id}': ${name} must be a non-negative number`);
  }
}
