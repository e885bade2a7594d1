/**
 * One-line descriptions of what the media pipeline did to a file, shared by `panto image`, `panto tool` and
 * `panto chat`. Sizes of an EXIF-rotated photo are given upright (as people and the model see it), with the stored
 * pixel size named as such, so "input 1800x2400 … original 2400x1800" never reads as a contradiction. A PDF is
 * described by its page count, never as `0x0`.
 */
import { formatBytes } from './cli-io.js';

export interface MediaSide {
  mediaType: string;
  width: number;
  height: number;
  byteLength: number;
  /** PDF page count, when known. */
  pages?: number | undefined;
}

/** True when an EXIF orientation (5..8) turns the stored picture by 90 degrees. */
export function orientationSwapsAxes(orientation: number): boolean {
  return orientation >= 5 && orientation <= 8;
}

/**
 * Whether the stored input was turned by 90 degrees on its way out, judged from the sizes when the EXIF orientation
 * value itself is not at hand (tool events carry only `changes: ['oriented', ...]`).
 */
export function inferSwapped(input: MediaSide, output: MediaSide, changes: readonly string[]): boolean {
  if (!changes.includes('oriented') || input.width <= 0 || output.width <= 0) return false;
  const inLandscape = input.width > input.height;
  const outLandscape = output.width > output.height;
  return input.width !== input.height && inLandscape !== outLandscape;
}

/** `image/jpeg 2000x1500, 115.9 KB` or `application/pdf, 2 pages, 2.8 KB`. */
export function describeSide(side: MediaSide): string {
  if (side.mediaType === 'application/pdf' || side.width <= 0) {
    const pages =
      side.pages === undefined || side.pages <= 0 ? '' : `, ${side.pages} page${side.pages === 1 ? '' : 's'}`;
    return `${side.mediaType}${pages}, ${formatBytes(side.byteLength)}`;
  }
  return `${side.mediaType} ${side.width}x${side.height}, ${formatBytes(side.byteLength)}`;
}

/**
 * The input side: for a rotated photo, `image/jpeg 2400x1800 upright (stored as 1800x2400, EXIF-rotated), 95.7 KB`.
 */
export function describeInput(input: MediaSide, swapped: boolean): string {
  if (!swapped) return describeSide(input);
  return (
    `${input.mediaType} ${input.height}x${input.width} upright ` +
    `(stored as ${input.width}x${input.height}, EXIF-rotated), ${formatBytes(input.byteLength)}`
  );
}

/** `image/jpeg 2000x1500, 115.9 KB (from image/jpeg 2400x1800 upright (…), 95.7 KB; changes: resized, oriented)`. */
export function describeProcessed(output: MediaSide, input: MediaSide, changes: readonly string[]): string {
  if (
    changes.length === 0 &&
    input.mediaType === output.mediaType &&
    input.byteLength === output.byteLength
  ) {
    return `${describeSide(output)} (passed through unchanged)`;
  }
  const swapped = inferSwapped(input, output, changes);
  const inputPages = input.pages ?? output.pages;
  return (
    `${describeSide(output)} (from ${describeInput({ ...input, pages: inputPages }, swapped)}; ` +
    `changes: ${changes.length === 0 ? 'none' : changes.join(', ')})`
  );
}
