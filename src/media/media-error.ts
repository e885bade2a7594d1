import { PantoError, type PantoErrorCode } from '../errors.js';

/**
 * An error from the media pipeline. The native addon constructs this class (it is handed the constructor at load
 * time), so `instanceof MediaError` and `code` hold for errors raised in C++.
 */
export class MediaError extends PantoError {
  /** The sniffed type of the input, when known (e.g. `image/tiff` for ERR_UNSUPPORTED_MEDIA). */
  readonly mediaType: string | undefined;

  constructor(code: PantoErrorCode, message: string, mediaType?: string) {
    super(code, message);
    this.name = 'MediaError';
    this.mediaType = mediaType;
  }
}
