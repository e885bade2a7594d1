import { beforeAll, describe, expect, it } from 'vitest';
import type {
  DocumentPart,
  ImagePart,
  StoredPart,
  ToolCallBlock,
  ToolResultBlock,
} from '../../src/conversation.js';
import { processMedia } from '../../src/media/index.js';
import type { ProcessOptions } from '../../src/media/types.js';
import { defineTool, type ResultPart } from '../../src/tool.js';
import { ToolRegistry } from '../../src/tool-source.js';
import {
  ABORTED_RESULT_TEXT,
  dispatchToolCalls,
  type ToolEvent,
  toStoredParts,
} from '../../src/tools/index.js';
import { encodePng, fixture, imageSize, noiseBytes, tiffHeader } from './dispatch-fixtures.js';

/** A tool that returns whatever parts the test puts under `outputs[key]`. */
const outputs = new Map<string, ResultPart[]>();
const attach = defineTool<{ key: string }>({
  name: 'attach',
  description: 'Returns prepared parts',
  inputSchema: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
  invoke: (args) => outputs.get(args.key) ?? [],
});
const tools = new ToolRegistry([[attach]]);

let seq = 0;
function callFor(parts: ResultPart[]): ToolCallBlock {
  const key = `k${seq++}`;
  outputs.set(key, parts);
  return { type: 'tool_call', id: `call-${key}`, name: 'attach', input: { key } };
}

async function run(
  parts: ResultPart[],
  media?: ProcessOptions,
): Promise<{ result: ToolResultBlock; events: ToolEvent[] }> {
  const events: ToolEvent[] = [];
  const [result] = await dispatchToolCalls([callFor(parts)], {
    tools,
    onEvent: (e) => events.push(e),
    ...(media ? { media } : {}),
  });
  if (!result) throw new Error('no result');
  return { result, events };
}

const media = (data: Uint8Array, extra: { mediaType?: string; name?: string } = {}): ResultPart => ({
  type: 'media',
  data,
  ...extra,
});
const text = (t: string): ResultPart => ({ type: 'text', text: t });
const types = (parts: StoredPart[]) => parts.map((p) => p.type);
const texts = (parts: StoredPart[]) => parts.flatMap((p) => (p.type === 'text' ? [p.text] : []));

/** Check a stored image against its own decoded header. */
function expectHonestImage(part: StoredPart | undefined): ImagePart {
  expect(part?.type).toBe('image');
  const image = part as ImagePart;
  const header = imageSize(Buffer.from(image.data, 'base64'));
  expect(header).toEqual({ type: image.mediaType, width: image.width, height: image.height });
  return image;
}

describe('a big PNG from a TS tool, end to end', () => {
  let big: Buffer;
  beforeAll(() => {
    big = encodePng(4000, 3000);
  });

  it('stores a <= 2000 px image whose base64 header matches, with the resize note right after it', async () => {
    const { result, events } = await run([text('Screenshot:'), media(big, { mediaType: 'image/png' })]);
    expect(result.isError).toBe(false);
    expect(types(result.parts)).toEqual(['text', 'image', 'text']);
    const image = expectHonestImage(result.parts[1]);
    expect([image.width, image.height]).toEqual([2000, 1500]);
    const note = texts(result.parts)[1];
    expect(note).toMatch(
      /^\[image: .*original 4000x3000, shown at 2000x1500; multiply coordinates by 2 to map to the original\]$/,
    );
    const processed = events.filter((e) => e.type === 'tool_media_processed');
    expect(processed).toHaveLength(1);
    expect(processed[0]).toMatchObject({
      partIndex: 1,
      width: 2000,
      height: 1500,
      original: { mediaType: 'image/png', width: 4000, height: 3000, byteLength: big.byteLength },
    });
    expect(processed[0]?.type === 'tool_media_processed' && processed[0].changes).toContain('resized');
  });

  it('applies the model policy it is given', async () => {
    const { result } = await run([media(big)], { maxDimension: 800 });
    const image = expectHonestImage(result.parts[0]);
    expect(Math.max(image.width, image.height)).toBe(800);
    expect(texts(result.parts)[0]).toContain(
      'original 4000x3000, shown at 800x600; multiply coordinates by 5 to map',
    );
  });

  it('drops it with a note naming the reason when it is over the policy’s pixel cap', async () => {
    const { result, events } = await run([text('before'), media(big), text('after')], {
      maxPixels: 1_000_000,
    });
    expect(result.isError).toBe(false);
    expect(types(result.parts)).toEqual(['text', 'text', 'text']);
    expect(texts(result.parts)[1]).toMatch(/^\[attachment dropped: too large to send: .*pixels.*\]$/);
    expect(events.find((e) => e.type === 'tool_media_dropped')).toMatchObject({
      code: 'ERR_MEDIA_TOO_LARGE',
      partIndex: 1,
    });
  });
});

describe('order of parts and calls', () => {
  it('keeps text and several media parts in the tool’s order', async () => {
    const { result, events } = await run([
      text('A'),
      media(fixture('png-rgb.png')),
      text('B'),
      media(fixture('pdf-2page.pdf'), { name: 'report.pdf' }),
      media(fixture('jpeg-baseline.jpg')),
      text('C'),
    ]);
    expect(types(result.parts)).toEqual(['text', 'image', 'text', 'document', 'image', 'text']);
    expect(texts(result.parts)).toEqual(['A', 'B', 'C']);
    expect(expectHonestImage(result.parts[1]).mediaType).toBe('image/png');
    expect(expectHonestImage(result.parts[4]).mediaType).toBe('image/jpeg');
    // Every media part went through the pipeline exactly once.
    const processed = events.filter((e) => e.type === 'tool_media_processed');
    expect(processed.map((e) => e.partIndex).sort()).toEqual([1, 3, 4]);
  });

  it('keeps call order across calls whose media take different times', async () => {
    const results = await dispatchToolCalls(
      [
        callFor([media(encodePng(3000, 2000))]),
        callFor([media(fixture('gif-still.gif'))]),
        callFor([text('only text')]),
        callFor([media(fixture('pdf-2page.pdf'))]),
      ],
      { tools },
    );
    expect(results.map((r) => r.parts[0]?.type)).toEqual(['image', 'image', 'text', 'document']);
    expect(results.map((r) => r.toolUseId)).toEqual(results.map((_, i) => `call-k${seq - 4 + i}`));
  });

  it('toStoredParts does the same for a user turn’s attachments', async () => {
    const parts = await toStoredParts([text('look'), media(fixture('png-rgb.png'))]);
    expect(types(parts)).toEqual(['text', 'image']);
    expect(expectHonestImage(parts[1])).toMatchObject({ width: 64, height: 48 });
  });
});

describe('honest notes', () => {
  it('a wrong media-type hint is corrected and said', async () => {
    const { result } = await run([media(fixture('png-rgb.png'), { mediaType: 'image/jpeg' })]);
    expect(expectHonestImage(result.parts[0]).mediaType).toBe('image/png');
    expect(texts(result.parts)).toEqual(['[image: declared as image/jpeg but the bytes are image/png]']);
  });

  it('an animated GIF says only its first frame is shown', async () => {
    const { result } = await run([media(fixture('gif-animated.gif'))]);
    expectHonestImage(result.parts[0]);
    expect(texts(result.parts)[0]).toMatch(/first frame of a 3-frame animation shown/);
  });

  it('a BMP says it was converted', async () => {
    const { result } = await run([media(fixture('bmp-24.bmp'), { name: 'shot.bmp' })]);
    const image = expectHonestImage(result.parts[0]);
    expect(texts(result.parts)[0]).toBe(`[image 'shot.bmp': converted from image/bmp to ${image.mediaType}]`);
  });

  it('an EXIF-rotated JPEG is stored upright and says so', async () => {
    const { result } = await run([media(fixture('jpeg-orient-6.jpg'))]);
    expect(expectHonestImage(result.parts[0])).toMatchObject({ width: 64, height: 48 });
    expect(texts(result.parts)[0]).toMatch(/rotated upright as its EXIF orientation asks/);
  });

  it('a rotated and resized JPEG gives the scale in upright terms', async () => {
    const { result } = await run([media(fixture('jpeg-orient-6.jpg'))], { maxDimension: 32 });
    expect(expectHonestImage(result.parts[0])).toMatchObject({ width: 32, height: 24 });
    expect(texts(result.parts)[0]).toMatch(
      /original 64x48, shown at 32x24; multiply coordinates by 2 to map/,
    );
  });

  it('stripping metadata is not worth a note (but the host sees it)', async () => {
    const { result, events } = await run([media(fixture('jpeg-metadata.jpg'))]);
    expect(types(result.parts)).toEqual(['image']);
    const processed = events.find((e) => e.type === 'tool_media_processed');
    expect(processed?.type === 'tool_media_processed' && processed.changes).toContain('metadata-stripped');
  });
});

describe('bytes that cannot be sent are dropped with a reason; the turn goes on', () => {
  it('a TIFF file and a bare TIFF header', async () => {
    const { result, events } = await run([
      text('Scans:'),
      media(fixture('tiff-rgb.tiff'), { name: 'scan.tiff' }),
      media(tiffHeader()),
      media(fixture('png-rgb.png')),
    ]);
    expect(result.isError).toBe(false);
    expect(types(result.parts)).toEqual(['text', 'text', 'text', 'image']);
    expect(texts(result.parts)).toEqual([
      'Scans:',
      "[attachment 'scan.tiff' dropped: image/tiff is not supported; convert it to PNG or JPEG]",
      '[attachment dropped: image/tiff is not supported; convert it to PNG or JPEG]',
    ]);
    // Events come in completion order (tool-events.ts); the parts themselves keep the tool's order.
    const dropped = events
      .filter((e) => e.type === 'tool_media_dropped')
      .sort((a, b) => a.partIndex - b.partIndex);
    expect(dropped.map((e) => [e.partIndex, e.code, e.mediaType])).toEqual([
      [1, 'ERR_UNSUPPORTED_MEDIA', 'image/tiff'],
      [2, 'ERR_UNSUPPORTED_MEDIA', 'image/tiff'],
    ]);
  });

  it('random bytes', async () => {
    const { result } = await run([media(noiseBytes(4096), { mediaType: 'image/png' })]);
    expect(result.isError).toBe(false);
    expect(texts(result.parts)).toEqual([
      '[attachment dropped: its 4096 bytes (declared as image/png) are not a supported image (PNG, JPEG, GIF, WebP, BMP) or PDF]',
    ]);
  });

  it('a truncated PNG', async () => {
    const png = fixture('png-rgb.png');
    const { result } = await run([media(png.subarray(0, png.length - 60))]);
    expect(texts(result.parts)[0]).toMatch(/^\[attachment dropped: image\/png is corrupt: .+\]$/);
  });

  it('a supported type in a variant the decoder cannot read (RLE BMP) says which variant', async () => {
    const { result } = await run([media(fixture('bmp-rle8.bmp'), { name: 'old.bmp' })]);
    expect(texts(result.parts)[0]).toMatch(
      /^\[attachment 'old.bmp' dropped: RLE-compressed BMP is not supported.*\]$/,
    );
  });
});

describe('PDF', () => {
  it('becomes a document part with its name and page count, bytes intact', async () => {
    const pdf = fixture('pdf-2page.pdf');
    const { result } = await run([
      text('The report:'),
      media(pdf, { name: 'report.pdf', mediaType: 'application/pdf' }),
    ]);
    expect(types(result.parts)).toEqual(['text', 'document']);
    const doc = result.parts[1] as DocumentPart;
    expect(doc).toMatchObject({ mediaType: 'application/pdf', name: 'report.pdf', pages: 2 });
    expect(Buffer.from(doc.data, 'base64').subarray(0, 5).toString('latin1')).toBe('%PDF-');
  });

  it('a PDF declared as an image is stored as a document and the hint is corrected', async () => {
    const { result } = await run([media(fixture('pdf-2page.pdf'), { mediaType: 'image/png' })]);
    expect(types(result.parts)).toEqual(['document', 'text']);
    expect(texts(result.parts)).toEqual([
      '[document: declared as image/png but the bytes are application/pdf]',
    ]);
  });
});

describe('abort while media is processing', () => {
  it('ends the call aborted at once; the late image never replaces it and no media event follows the end', async () => {
    const big = encodePng(4000, 3000);
    const controller = new AbortController();
    const abortingTool = defineTool({
      name: 'shot',
      description: 'Returns a big PNG, then the host cancels',
      inputSchema: { type: 'object' },
      invoke: () => {
        setImmediate(() => controller.abort());
        return [media(big)];
      },
    });
    const events: ToolEvent[] = [];
    const unhandled: unknown[] = [];
    const onUnhandled = (r: unknown) => unhandled.push(r);
    process.on('unhandledRejection', onUnhandled);
    try {
      const results = await dispatchToolCalls([{ type: 'tool_call', id: 's1', name: 'shot', input: {} }], {
        tools: new ToolRegistry([[abortingTool]]),
        signal: controller.signal,
        onEvent: (e) => events.push(e),
      });
      expect(results[0]).toMatchObject({
        isError: true,
        parts: [{ type: 'text', text: ABORTED_RESULT_TEXT }],
      });
      const snapshot = structuredClone(results);
      // Let the abandoned job on the threadpool finish (two more runs of the same work, queued after it).
      await processMedia(big);
      await processMedia(big);
      await new Promise((r) => setImmediate(r));
      expect(results).toEqual(snapshot);
      expect(events.map((e) => e.type)).toEqual(['tool_call_start', 'tool_call_end']);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
