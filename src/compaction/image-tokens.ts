/**
 * Provider-aware token estimates for one image or PDF from its stored dimensions / page count. Pure arithmetic on
 * published rules (../../docs and the providers' vision pages); estimates, not billing-exact numbers.
 */

import type { DocumentPart, ImagePart, ImageTokenRule } from '../conversation.js';
import { PantoError } from '../errors.js';

/** Every `ImageTokenRule` the estimates know (model-catalog.ts checks `defineModel`'s rule against it). */
export const IMAGE_TOKEN_RULES: readonly ImageTokenRule[] = Object.freeze([
  'fixed',
  'anthropic',
  'openai-tile',
  'openai-patch',
  'gemini',
]);

const RULES: ReadonlySet<string> = new Set<string>(IMAGE_TOKEN_RULES);

/** True when `rule` is one of `IMAGE_TOKEN_RULES`. */
export function isImageTokenRule(rule: unknown): rule is ImageTokenRule {
  return typeof rule === 'string' && RULES.has(rule);
}

/**
 * Largest estimate any function here returns (2^53 - 1): every estimate and every sum of estimates is capped at it, so
 * options at the edge of their range (`charsPerToken: 5e-324`, `patchMultiplier: 1e308`) or absurd stored dimensions
 * and page counts give a large finite number, never `Infinity` or `NaN`.
 */
export const MAX_TOKEN_ESTIMATE = Number.MAX_SAFE_INTEGER;

/** `n` capped at `MAX_TOKEN_ESTIMATE` (`NaN` counts as too large). */
export function capTokens(n: number): number {
  return Number.isNaN(n) ? MAX_TOKEN_ESTIMATE : Math.min(n, MAX_TOKEN_ESTIMATE);
}

/**
 * Side length beyond which stored dimensions are clamped before a rule's arithmetic (2^31 - 1: no real image is
 * larger, and the products of two such sides stay exact enough). Keeps the per-rule formulas away from overflow.
 */
const MAX_ESTIMATED_SIDE = 2 ** 31 - 1;

/**
 * Throws `ERR_INVALID_ARGUMENT` when `options` cannot give a finite, non-negative estimate: an unknown
 * `imageTokenRule` (a JavaScript caller's typo), a `charsPerToken` or `patchMultiplier` that is not a finite number
 * > 0, a `fixedImageChars` that is not a number from 0 to 2^53 - 1. (Such options made estimates `NaN`, negative or
 * infinite, with which a cut point is silently never found, or always found.)
 */
export function checkEstimateOptions(options: MediaEstimateOptions): void {
  const { imageTokenRule, charsPerToken, fixedImageChars, patchMultiplier } = options;
  let problem: string | undefined;
  if (imageTokenRule !== undefined && !isImageTokenRule(imageTokenRule))
    problem = `imageTokenRule must be one of ${[...RULES].join(', ')} (got ${JSON.stringify(String(imageTokenRule)).slice(0, 60)})`;
  else if (charsPerToken !== undefined && !(Number.isFinite(charsPerToken) && charsPerToken > 0))
    problem = `charsPerToken must be a finite number > 0 (got ${charsPerToken})`;
  else if (
    fixedImageChars !== undefined &&
    !(fixedImageChars >= 0 && fixedImageChars <= Number.MAX_SAFE_INTEGER)
  )
    problem = `fixedImageChars must be a number from 0 to 2^53 - 1 (got ${fixedImageChars})`;
  else if (patchMultiplier !== undefined && !(Number.isFinite(patchMultiplier) && patchMultiplier > 0))
    problem = `patchMultiplier must be a finite number > 0 (got ${patchMultiplier})`;
  if (problem !== undefined) throw new PantoError('ERR_INVALID_ARGUMENT', problem);
}

export interface MediaEstimateOptions {
  /** How the target model charges for images (a provider's `ModelInfo` has this field). Default `fixed`. */
  imageTokenRule?: ImageTokenRule;
  /** Characters counted per image/document page under the `fixed` rule (default 4800, i.e. 1200 tokens). */
  fixedImageChars?: number;
  /** Characters per token for text (default 4). */
  charsPerToken?: number;
  /** Multiplier for the `openai-patch` rule (model-specific; default 1). */
  patchMultiplier?: number;
}

/** Default characters charged per image under the `fixed` rule (libpanto's value). */
export const DEFAULT_FIXED_IMAGE_CHARS = 4800;

/** Anthropic: long edge <= 1568 px and at most ~1.15 MP after its resize, then ceil(w/28) * ceil(h/28). */
export function anthropicImageTokens(width: number, height: number): number {
  const scale = Math.min(1, 1568 / Math.max(width, height), Math.sqrt(1_150_000 / (width * height)));
  const w = Math.max(1, Math.floor(width * scale));
  const h = Math.max(1, Math.floor(height * scale));
  return Math.ceil(w / 28) * Math.ceil(h / 28);
}

/** OpenAI tile models (detail high/auto): fit in 2048x2048, short side to 768, then 85 + 170 per 512 px tile. */
export function openaiTileImageTokens(width: number, height: number): number {
  let w = width;
  let h = height;
  const fit = Math.min(1, 2048 / Math.max(w, h));
  w *= fit;
  h *= fit;
  const shortScale = Math.min(1, 768 / Math.min(w, h));
  w = Math.floor(w * shortScale);
  h = Math.floor(h * shortScale);
  return 85 + 170 * Math.ceil(w / 512) * Math.ceil(h / 512);
}

/** OpenAI patch models: ceil(w/32) * ceil(h/32) patches, downscaled to at most 1536 patches, times a multiplier. */
export function openaiPatchImageTokens(width: number, height: number, multiplier = 1): number {
  const cap = 1536;
  let patches = Math.ceil(width / 32) * Math.ceil(height / 32);
  if (patches > cap) {
    const shrink = Math.sqrt((cap * 32 * 32) / (width * height));
    const w = width * shrink;
    const h = height * shrink;
    // Shrink further so whole patches fit (OpenAI's published adjustment), then count.
    const adjust = Math.min(Math.floor(w / 32) / (w / 32), Math.floor(h / 32) / (h / 32));
    patches = Math.min(cap, Math.ceil((w * adjust) / 32) * Math.ceil((h * adjust) / 32));
  }
  return Math.ceil(patches * multiplier);
}

/**
 * Gemini: 258 tokens when both sides <= 384 px, otherwise 258 per 768x768 tile — after the service scales a larger
 * picture down to fit 3072x3072 ("larger images are scaled down and padded to fit a maximum resolution of 3072 x 3072
 * while preserving their original aspect ratio", Firebase AI Logic / Vertex AI input requirements), so at most 16
 * tiles (4,128 tokens) whatever sides a header claims.
 */
export function geminiImageTokens(width: number, height: number): number {
  if (width <= 384 && height <= 384) return 258;
  const fit = Math.min(1, GEMINI_MAX_SIDE / Math.max(width, height));
  return 258 * Math.ceil((width * fit) / 768) * Math.ceil((height * fit) / 768);
}

const GEMINI_MAX_SIDE = 3072;

function fixedTokens(options: MediaEstimateOptions): number {
  return capTokens(
    Math.ceil((options.fixedImageChars ?? DEFAULT_FIXED_IMAGE_CHARS) / (options.charsPerToken ?? 4)),
  );
}

/** A stored side usable by the rules: a finite number > 0, clamped to `MAX_ESTIMATED_SIDE`; else `undefined`. */
function usableSide(side: number): number | undefined {
  return Number.isFinite(side) && side > 0 ? Math.min(side, MAX_ESTIMATED_SIDE) : undefined;
}

/**
 * Estimated tokens for one stored image under `options.imageTokenRule` (fixed when the dimensions are not finite
 * numbers > 0): an integer from 0 to `MAX_TOKEN_ESTIMATE`.
 * @throws PantoError `ERR_INVALID_ARGUMENT` for options out of range (see `checkEstimateOptions`).
 */
export function estimateImageTokens(
  part: Pick<ImagePart, 'width' | 'height'>,
  options: MediaEstimateOptions = {},
): number {
  checkEstimateOptions(options);
  return imageTokensUnchecked(part, options);
}

/** `estimateImageTokens` for options the caller already passed through `checkEstimateOptions`. */
export function imageTokensUnchecked(
  part: Pick<ImagePart, 'width' | 'height'>,
  options: MediaEstimateOptions,
): number {
  const rule = options.imageTokenRule ?? 'fixed';
  const width = usableSide(part.width);
  const height = usableSide(part.height);
  if (rule === 'fixed' || width === undefined || height === undefined) return fixedTokens(options);
  switch (rule) {
    case 'anthropic':
      return capTokens(anthropicImageTokens(width, height));
    case 'openai-tile':
      return capTokens(openaiTileImageTokens(width, height));
    case 'openai-patch':
      return capTokens(openaiPatchImageTokens(width, height, options.patchMultiplier ?? 1));
    case 'gemini':
      return capTokens(geminiImageTokens(width, height));
  }
}

/** Bytes of PDF assumed per page when the page count is unknown (a coarse guess; keeps big PDFs from counting as one). */
const BYTES_PER_UNKNOWN_PAGE = 100_000;

/**
 * Estimated tokens for one stored PDF: pages x per-page cost. Per page: Gemini 258; Anthropic and OpenAI ~1500
 * (extracted text plus a page image); `fixed` the fixed image estimate. Pages default to the decoded size / 100 KB,
 * at least 1 (also when `pages` is not a number > 0). The result is an integer from 0 to `MAX_TOKEN_ESTIMATE`.
 * @throws PantoError `ERR_INVALID_ARGUMENT` for options out of range (see `checkEstimateOptions`).
 */
export function estimateDocumentTokens(
  part: Pick<DocumentPart, 'data' | 'pages'>,
  options: MediaEstimateOptions = {},
): number {
  checkEstimateOptions(options);
  return documentTokensUnchecked(part, options);
}

/** `estimateDocumentTokens` for options the caller already passed through `checkEstimateOptions`. */
export function documentTokensUnchecked(
  part: Pick<DocumentPart, 'data' | 'pages'>,
  options: MediaEstimateOptions,
): number {
  const stored = part.pages;
  const pages =
    stored !== undefined && stored > 0
      ? stored
      : Math.max(1, Math.ceil((part.data.length * 3) / 4 / BYTES_PER_UNKNOWN_PAGE));
  const rule = options.imageTokenRule ?? 'fixed';
  const perPage = rule === 'fixed' ? fixedTokens(options) : rule === 'gemini' ? 258 : 1500;
  return capTokens(pages * perPage);
}
