/** Types of the media pipeline's public API (`sniffMedia`, `probeMedia`, `processMedia`). */

/** Types the pipeline can read. */
export type SupportedMediaType =
  | 'image/png'
  | 'image/jpeg'
  | 'image/gif'
  | 'image/bmp'
  | 'image/webp'
  | 'application/pdf';

/** Types `sniffMedia` recognises only to name them in errors (cannot be processed). */
export type RecognizedMediaType =
  | 'image/tiff'
  | 'image/heic'
  | 'image/avif'
  | 'image/x-icon'
  | 'image/jxl'
  | 'image/svg+xml';

export type SniffedMediaType = SupportedMediaType | RecognizedMediaType;

/** What the pipeline outputs: types every provider accepts. */
export type OutputMediaType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp' | 'application/pdf';

/** Header facts, read without decoding pixels. For a PDF, width/height are 0 and `frames` is the page count if cheap. */
export interface MediaInfo {
  mediaType: SupportedMediaType;
  width: number;
  height: number;
  /** Animation frames (1 for a still image); pages for a PDF (0 when not counted). */
  frames: number;
  hasAlpha: boolean;
  /** EXIF orientation 1..8 (1 when absent). */
  orientation: number;
}

/** What `processMedia` did, in the order it happened. */
export type MediaChange =
  | 'resized'
  | 'reencoded'
  | 'oriented'
  | 'first-frame'
  | 'converted'
  | 'metadata-stripped'
  | 'quality-reduced'
  | 'hint-corrected'
  | 'flattened';

export interface ProcessOptions {
  /** Fit inside this many pixels per side, keeping aspect, never upscaling. Default 2000. */
  maxDimension?: number;
  /** Cap on output bytes. Default 3,932,160 (base64 <= 5 MiB, Anthropic's per-image limit). */
  maxEncodedBytes?: number;
  /** Cap on width*height, checked from the header before any pixel allocation. Default 100,000,000. */
  maxPixels?: number;
  /** Cap on input bytes. Default 64 MiB. */
  maxInputBytes?: number;
  /** Cap on PDF bytes. Default 32 MiB. */
  maxPdfBytes?: number;
  /** JPEG quality for re-encodes. Default 80. */
  jpegQuality?: number;
  /** Keep EXIF/XMP/comments/text chunks on pass-through. Default false (privacy metadata stripped). */
  keepMetadata?: boolean;
  /** A media-type hint (e.g. from a file extension). Never overrides the bytes; a wrong hint is listed in changes. */
  mediaTypeHint?: string;
  /**
   * Output codec. `auto` (default) keeps the input's codec where providers accept it (GIF and BMP become PNG).
   * Forcing a codec re-encodes even an image that could pass through; `jpeg` flattens transparency onto white.
   */
  format?: OutputFormat;
}

/** Options of one `processMedia` call: the policy plus per-call controls. */
export interface ProcessMediaOptions extends ProcessOptions {
  /** Aborting rejects the call at once with ERR_ABORTED and stops the native work between rows/scans. */
  signal?: AbortSignal | undefined;
  /**
   * Hand the input's memory to the call instead of copying it (default false). Taken only when `bytes` is the whole
   * of a detachable, non-shared, fixed-length ArrayBuffer: that buffer is then detached before `processMedia`
   * returns (all its views read as empty). Anything else is copied as usual, without notice; check
   * `bytes.byteLength === 0` after the call to know. See docs/images-and-pdfs.md, "Ownership".
   */
  transfer?: boolean | undefined;
}

/** Output codec request for `ProcessOptions.format`. */
export type OutputFormat = 'auto' | 'jpeg' | 'png' | 'webp';

export interface ProcessedMedia {
  data: Buffer;
  mediaType: OutputMediaType;
  width: number;
  height: number;
  /** Page count for a PDF when cheap to find, else undefined. */
  pages?: number;
  original: {
    mediaType: SupportedMediaType;
    width: number;
    height: number;
    byteLength: number;
    frames: number;
    orientation: number;
  };
  changes: MediaChange[];
}
