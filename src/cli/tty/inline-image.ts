/**
 * A stored image (what the model sees) as the escape sequence that draws it inline, for the protocol the terminal
 * speaks (see image-protocol.ts). Kitty takes PNG only, so other types are converted by the media pipeline (at most
 * 1024 px a side); iTerm2 takes PNG, JPEG and GIF as they are (WebP is converted). Returns undefined when the picture
 * cannot be drawn (the caller prints its summary line instead).
 */
import { processMedia } from '../../media/index.js';
import { type ImageProtocol, imageColumns, itermImage, kittyImage } from './image-protocol.js';

export interface InlineImageInput {
  data: Uint8Array;
  mediaType: string;
  width: number;
  height: number;
  name?: string | undefined;
}

export interface InlineImageOptions {
  protocol: ImageProtocol;
  /** Widest the picture may be drawn, in columns. */
  maxColumns: number;
  /** Tallest, in rows. */
  maxRows: number;
}

const PREVIEW_SIDE = 1024;

export async function inlineImage(
  image: InlineImageInput,
  options: InlineImageOptions,
): Promise<string | undefined> {
  if (options.protocol === 'none' || !image.mediaType.startsWith('image/')) return undefined;
  const columns = imageColumns(image.width, image.height, options.maxColumns, options.maxRows);
  try {
    if (options.protocol === 'kitty') {
      const png =
        image.mediaType === 'image/png' && Math.max(image.width, image.height) <= PREVIEW_SIDE
          ? image.data
          : (await processMedia(image.data, { format: 'png', maxDimension: PREVIEW_SIDE })).data;
      return kittyImage(png, columns);
    }
    const data =
      image.mediaType === 'image/webp'
        ? (await processMedia(image.data, { format: 'png', maxDimension: PREVIEW_SIDE })).data
        : image.data;
    return itermImage(data, columns, image.name);
  } catch {
    return undefined;
  }
}
