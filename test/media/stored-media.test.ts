/**
 * `checkStoredMedia`: a stored image/PDF part against its own bytes, where parts enter a conversation without the
 * media pipeline (a session file, an Agent's handed-in history). Real files and the real pipeline: whatever the
 * pipeline stores passes as it is, and the header sizes it reads are the native probe's.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { DocumentPart, ImagePart, StoredPart } from '../../src/conversation.js';
import { probeMedia } from '../../src/media/probe-media.js';
import { checkStoredMedia } from '../../src/media/stored-media.js';
import { toStoredParts } from '../../src/tools/store-parts.js';

const FIXTURES = new URL('../fixtures/media/', import.meta.url);
const fixture = (name: string) => readFileSync(new URL(name, FIXTURES));
const stillImages = [
  'png-rgb.png',
  'png-interlaced.png',
  'png-16bit-rgba.png',
  'png-palette-trns.png',
  'jpeg-baseline.jpg',
  'jpeg-progressive.jpg',
  'jpeg-metadata.jpg',
  'jpeg-orient-6.jpg',
  'gif-still.gif',
  'webp-lossy.webp',
  'webp-lossless.webp',
  'webp-lossy-alpha.webp',
  'webp-orient-6.webp',
];

function imagePart(file: string, claim: Partial<ImagePart> = {}): ImagePart {
  const info = probeMedia(fixture(file));
  if (info === null) throw new Error(`${file}: not recognised`);
  return {
    type: 'image',
    mediaType: info.mediaType as ImagePart['mediaType'],
    data: fixture(file).toString('base64'),
    width: info.width,
    height: info.height,
    ...claim,
  };
}

describe('what the media pipeline stores passes as it is', () => {
  const files = readdirSync(FIXTURES).filter((f) => !f.endsWith('.md'));

  it('every fixture through toStoredParts: each stored image/PDF is ok', async () => {
    const stored = await toStoredParts(files.map((f) => ({ type: 'media' as const, data: fixture(f) })));
    const media = stored.filter((p): p is ImagePart | DocumentPart => p.type !== 'text');
    expect(media.length).toBeGreaterThan(20);
    for (const part of media) expect(checkStoredMedia(part)).toEqual({ kind: 'ok' });
  });

  it('a part resized by the pipeline (2000 px cap) is ok', async () => {
    const wide = (await toStoredParts([{ type: 'media', data: fixture('png-rgb.png') }], {
      media: { maxDimension: 32 },
    })) as StoredPart[];
    const image = wide.find((p): p is ImagePart => p.type === 'image') as ImagePart;
    expect(image.width).toBe(32);
    expect(checkStoredMedia(image)).toEqual({ kind: 'ok' });
  });
});

describe('the header size is the native probe’s', () => {
  it.each(stillImages)('%s claiming 1x1 is repaired to its real size', (file) => {
    const real = imagePart(file);
    const verdict = checkStoredMedia({ ...real, width: 1, height: 1 });
    expect(verdict).toMatchObject({
      kind: 'repaired',
      part: { width: real.width, height: real.height },
      lie: `it claims 1x1 but its header says ${real.width}x${real.height}`,
    });
  });
});

describe('lies and unusable data', () => {
  const jpeg = imagePart('jpeg-baseline.jpg');
  const pdf: DocumentPart = {
    type: 'document',
    mediaType: 'application/pdf',
    data: fixture('pdf-2page.pdf').toString('base64'),
  };

  it('a wrong mediaType is repaired from the magic bytes', () => {
    expect(checkStoredMedia({ ...jpeg, mediaType: 'image/png' })).toEqual({
      kind: 'repaired',
      part: jpeg,
      lie: 'its mediaType says image/png but its bytes are image/jpeg',
    });
  });

  it('base64 written another way (data: prefix, MIME lines, URL-safe, unpadded) is rewritten to the standard form', () => {
    const bytes = Buffer.from(jpeg.data, 'base64');
    const mime = (jpeg.data.match(/.{1,76}/g) ?? []).join('\r\n');
    for (const data of [
      `data:image/jpeg;base64,${jpeg.data}`,
      mime,
      bytes.toString('base64url'),
      jpeg.data.replace(/=+$/, ''),
    ]) {
      expect(data).not.toBe(jpeg.data);
      expect(checkStoredMedia({ ...jpeg, data })).toEqual({
        kind: 'repaired',
        part: jpeg,
        lie: 'its data is not standard padded base64',
      });
    }
  });

  it('data that is no image, not base64, empty or not a string is rejected', () => {
    const cases: Array<[unknown, string]> = [
      [
        Buffer.from('not an image at all').toString('base64'),
        'its data is not a PNG, JPEG, GIF or WebP image',
      ],
      ['%%%% not base64 ****', 'its data is not valid base64'],
      ['AAA=A', 'its data is not valid base64'],
      ['', 'its data is empty'],
      [42, 'its data is not a string'],
    ];
    for (const [data, rejected] of cases) {
      expect(checkStoredMedia({ ...jpeg, data } as ImagePart)).toEqual({ kind: 'rejected', rejected });
    }
  });

  it('a PDF part must hold a PDF', () => {
    expect(checkStoredMedia(pdf)).toEqual({ kind: 'ok' });
    expect(checkStoredMedia({ ...pdf, data: jpeg.data })).toEqual({
      kind: 'rejected',
      rejected: 'its data is not a PDF file',
    });
  });

  it('reads only the head of the data: an 8 MiB payload with a damaged byte deep inside is judged by its header', () => {
    // The contract: O(1) in the data size. Damage past the head is the provider's to refuse (media-rejection.ts).
    const head = Buffer.from(jpeg.data, 'base64');
    const body = Buffer.concat([head, Buffer.alloc(6 * 1024 * 1024, 0x41)]).toString('base64');
    const damaged = `${body.slice(0, 8_000_000)}*${body.slice(8_000_001)}`;
    expect(checkStoredMedia({ ...jpeg, data: damaged })).toEqual({ kind: 'ok' });
  });
});
