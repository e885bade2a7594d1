export type {
  CompactionRecord,
  CompactionResult,
  CompactOptions,
  Summarizer,
  SummaryRequest,
} from './compact.js';
export { compact, SUMMARY_PREFIX, summaryMessage } from './compact.js';
export type { EstimateOptions } from './estimate-tokens.js';
export { estimateTokens } from './estimate-tokens.js';
export { findCutPoint, validCutPoints } from './find-cut-point.js';
export type { MediaEstimateOptions } from './image-tokens.js';
export {
  anthropicImageTokens,
  DEFAULT_FIXED_IMAGE_CHARS,
  estimateDocumentTokens,
  estimateImageTokens,
  geminiImageTokens,
  openaiPatchImageTokens,
  openaiTileImageTokens,
} from './image-tokens.js';
export { type RenderOptions, renderSections, renderTranscript, shortenText } from './render-transcript.js';
