/**
 * A session file's images/PDFs are checked against their bytes where they enter (the loader's entry checks, on every
 * loading path, and `SessionLog.appendMessage`): serializers trust stored parts and never look at their bytes, so a
 * part that lies about its type or size, or holds no image at all, must be caught here.
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ImagePart, Message } from '../../src/conversation.js';
import { SessionLog } from '../../src/session/index.js';
import { toStoredParts } from '../../src/tools/store-parts.js';
import { HEADER, sameOnEveryPath } from './helpers/every-path.js';
import { pdfBase64, pngBase64 } from './helpers/media.js';

const dir = mkdtempSync(join(tmpdir(), 'panto-stored-media-'));
let n = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const jpegData = readFileSync(new URL('../fixtures/media/jpeg-baseline.jpg', import.meta.url)).toString(
  'base64',
);
const png: ImagePart = {
  type: 'image',
  mediaType: 'image/png',
  data: pngBase64(30, 20),
  width: 30,
  height: 20,
};

/** A session file whose second line is a user message holding `part`. */
function sessionWith(part: unknown): string {
  const path = join(dir, `s${n++}.jsonl`);
  const message = { role: 'user', content: [{ type: 'text', text: 'look' }, part] };
  const line = JSON.stringify({ type: 'message', id: 'a', parentId: null, timestamp: 't', message });
  writeFileSync(path, `${HEADER}\n${line}\n`);
  return path;
}

const same = (actual: unknown, expected: unknown, name: string) =>
  expect(actual, name).toStrictEqual(expected);

describe('a session file whose image/PDF lies is refused on every loading path', () => {
  it.each<[string, unknown, RegExp]>([
    [
      'JPEG bytes labelled image/png',
      { type: 'image', mediaType: 'image/png', data: jpegData, width: 64, height: 48 },
      /content\[1\]: its mediaType says image\/png but its bytes are image\/jpeg/,
    ],
    [
      'a size its header does not say',
      { ...png, width: 3000, height: 2000 },
      /claims 3000x2000 but its header says 30x20/,
    ],
    [
      'bytes that are no image',
      { ...png, data: Buffer.from('hello, not a picture').toString('base64') },
      /its data is not a PNG, JPEG, GIF or WebP image/,
    ],
    ['data that is not base64', { ...png, data: '%%%% ****' }, /its data is not valid base64/],
    ['an empty image', { ...png, data: '' }, /its data is empty/],
    [
      'a PDF part holding a PNG',
      { type: 'document', mediaType: 'application/pdf', data: png.data },
      /its data is not a PDF file/,
    ],
  ])('%s: ERR_SESSION_FORMAT naming the line and the lie', async (_name, part, lie) => {
    const path = sessionWith(part);
    const outcome = await sameOnEveryPath(path, same);
    expect(outcome).toMatchObject({ code: 'ERR_SESSION_FORMAT' });
    const message = (outcome as { message: string }).message;
    expect(message).toContain(`${path}:2:`);
    expect(message).toMatch(lie);
  });

  it('the parts the media pipeline stores load on every path', async () => {
    const parts = await toStoredParts([
      { type: 'media', data: Buffer.from(jpegData, 'base64') },
      { type: 'media', data: Buffer.from(pdfBase64(), 'base64') },
    ]);
    const path = join(dir, `s${n++}.jsonl`);
    const log = await SessionLog.create(path);
    log.appendMessage({ role: 'user', content: [png, ...parts] });
    log.close();
    const outcome = await sameOnEveryPath(path, same);
    expect(outcome).toHaveProperty('ok');
  });
});

describe('SessionLog.appendMessage refuses a part that lies, and writes nothing', () => {
  it('ERR_INVALID_ARGUMENT naming the part; the file is unchanged', async () => {
    const path = join(dir, `s${n++}.jsonl`);
    const log = await SessionLog.create(path);
    const before = readFileSync(path);
    const lying: Message = { role: 'user', content: [{ ...png, mediaType: 'image/jpeg' }] };
    expect(() => log.appendMessage(lying)).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_ARGUMENT',
        message: expect.stringMatching(
          /content\[0\]: its mediaType says image\/jpeg but its bytes are image\/png/,
        ),
      }),
    );
    log.close();
    expect(readFileSync(path)).toEqual(before);
  });
});
