export type { MediaBackend } from './addon-types.js';
export { MediaError } from './media-error.js';
export { mediaBackend } from './native-addon.js';
export { probeMedia } from './probe-media.js';
export { checkProcessOptions, DEFAULT_PROCESS_OPTIONS, processMedia } from './process-media.js';
export { sniffMedia } from './sniff-media.js';
export type {
  MediaChange,
  MediaInfo,
  OutputFormat,
  OutputMediaType,
  ProcessedMedia,
  ProcessOptions,
  RecognizedMediaType,
  SniffedMediaType,
  SupportedMediaType,
} from './types.js';
