import { describe, expect, it } from 'vitest';
import { MediaError } from '../../src/media/media-error.js';
import type { MediaChange, ProcessedMedia } from '../../src/media/types.js';
import { droppedNote, processedNote } from '../../src/tools/index.js';

/** A pipeline result as `processMedia` reports it (the notes are a pure function of it). */
function processed(
  changes: MediaChange[],
  shown: [number, number],
  original: [number, number],
  extra: Partial<ProcessedMedia['original']> = {},
  mediaType: ProcessedMedia['mediaType'] = 'image/jpeg',
): ProcessedMedia {
  return {
    data: Buffer.alloc(0),
    mediaType,
    width: shown[0],
    height: shown[1],
    original: {
      mediaType: 'image/jpeg',
      width: original[0],
      height: original[1],
      byteLength: 1,
      frames: 1,
      orientation: 1,
      ...extra,
    },
    changes,
  };
}

describe('processedNote', () => {
  it('gives the issue’s resize wording with a 3-decimal scale', () => {
    expect(processedNote(processed(['resized', 'reencoded'], [2000, 1500], [4032, 3024]), {})).toBe(
      '[image: original 4032x3024, shown at 2000x1500; multiply coordinates by 2.016 to map to the original]',
    );
  });

  it('gives separate x and y factors when rounding made them differ', () => {
    expect(processedNote(processed(['resized'], [2000, 3], [4001, 7]), {})).toBe(
      '[image: original 4001x7, shown at 2000x3; multiply x by 2.001 and y by 2.333 to map to the original]',
    );
  });

  it('maps to the upright original when a 90° orientation was applied, however the original is reported', () => {
    const stored = processed(['oriented', 'resized'], [1500, 2000], [4032, 3024], { orientation: 6 });
    const upright = processed(['oriented', 'resized'], [1500, 2000], [3024, 4032], { orientation: 6 });
    for (const m of [stored, upright]) {
      expect(processedNote(m, {})).toBe(
        '[image: rotated upright as its EXIF orientation asks; original 3024x4032, shown at 1500x2000; multiply coordinates by 2.016 to map to the original]',
      );
    }
  });

  it('lists every change worth telling, in a fixed order, with the file name', () => {
    const m = processed(
      [
        'hint-corrected',
        'converted',
        'first-frame',
        'flattened',
        'quality-reduced',
        'resized',
        'metadata-stripped',
      ],
      [1000, 500],
      [2000, 1000],
      { mediaType: 'image/gif', frames: 12 },
      'image/png',
    );
    expect(processedNote(m, { hint: 'image/jpeg', name: 'anim.gif' })).toBe(
      "[image 'anim.gif': declared as image/jpeg but the bytes are image/gif; converted from image/gif to image/png; " +
        'first frame of a 12-frame animation shown; transparent areas flattened onto a solid background; ' +
        're-compressed at lower quality to fit the size limit; original 2000x1000, shown at 1000x500; ' +
        'multiply coordinates by 2 to map to the original]',
    );
  });

  it('says nothing when nothing the model can see changed', () => {
    expect(
      processedNote(processed(['metadata-stripped', 'reencoded'], [64, 48], [64, 48]), {}),
    ).toBeUndefined();
    expect(processedNote(processed([], [64, 48], [64, 48]), {})).toBeUndefined();
  });
});

describe('droppedNote', () => {
  it('uses the pipeline’s reason for a recognised type and names the attachment', () => {
    const err = new MediaError(
      'ERR_UNSUPPORTED_MEDIA',
      'image/heic is not supported; convert it to PNG or JPEG',
      'image/heic',
    );
    expect(droppedNote(err, 10, { name: 'IMG_1.heic' })).toEqual({
      code: 'ERR_UNSUPPORTED_MEDIA',
      mediaType: 'image/heic',
      note: "[attachment 'IMG_1.heic' dropped: image/heic is not supported; convert it to PNG or JPEG]",
    });
  });

  it('names the size and declared type of bytes of no known type', () => {
    const err = new MediaError('ERR_UNSUPPORTED_MEDIA', 'unrecognised media');
    expect(droppedNote(err, 12, { hint: 'image/png' }).note).toBe(
      '[attachment dropped: its 12 bytes (declared as image/png) are not a supported image (PNG, JPEG, GIF, WebP, BMP) or PDF]',
    );
  });

  it('says corrupt, too large, or could not be processed', () => {
    const corrupt = new MediaError('ERR_CORRUPT_MEDIA', 'bad huffman table', 'image/jpeg');
    expect(droppedNote(corrupt, 1, {}).note).toBe(
      '[attachment dropped: the image/jpeg is corrupt or truncated (bad huffman table)]',
    );
    const large = new MediaError('ERR_MEDIA_TOO_LARGE', 'input is 9 bytes; the limit is 5 bytes');
    expect(droppedNote(large, 9, {}).note).toBe(
      '[attachment dropped: too large to send: input is 9 bytes; the limit is 5 bytes]',
    );
    expect(droppedNote(new Error('addon missing'), 9, {})).toEqual({
      code: 'ERR_INTERNAL',
      note: '[attachment dropped: it could not be processed: addon missing]',
    });
  });
});
