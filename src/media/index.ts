export type { MediaBackend } from './addon-types.js';
export { MediaError } from './media-error.js';
export { mediaMemoryInFlight, setMediaMemoryLimit } from './memory-limit.js';
export { mediaBackend } from './native-addon.js';
export {
  checkProcessOptions,
  DEFAULT_MEDIA_MEMORY_LIMIT,
  DEFAULT_PROCESS_OPTIONS,
  PROCESS_OPTION_RANGES,
  type ResolvedProcessOptions,
  resolveProcessOptions,
} from './policy.js';
export { probeMedia } from './probe-media.js';
export { processMedia } from './process-media.js';
export { sniffMedia } from './sniff-media.js';
export type {
  MediaChange,
  MediaInfo,
  OutputFormat,
  OutputMediaType,
  ProcessedMedia,
  ProcessMediaOptions,
  ProcessOptions,
  RecognizedMediaType,
  SniffedMediaType,
  SupportedMediaType,
} from './types.js';
