import { describe, expect, it } from 'vitest';
import type { ImagePart } from '../../src/conversation.js';
import { mcpResultToCallResult } from '../../src/mcp/mcp-result.js';
import type { ResultPart } from '../../src/tool.js';
import { toStoredParts } from '../../src/tools/store-parts.js';
import { encodePng, fixture, imageSize } from '../agent/dispatch-fixtures.js';

const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');

async function okParts(
  result: Parameters<typeof mcpResultToCallResult>[0],
  options = {},
): Promise<ResultPart[]> {
  const out = await mcpResultToCallResult(result, options);
  if (!out.ok) throw new Error(`expected ok, got error ${out.error}`);
  return out.parts;
}

describe('MCP result → result parts', () => {
  it('text stays text; image and audio become raw bytes with the server mimeType as a hint', async () => {
    const png = fixture('png-rgb.png');
    const parts = await okParts({
      content: [
        { type: 'text', text: 'hello' },
        { type: 'image', data: b64(png), mimeType: 'image/png' },
        { type: 'audio', data: b64(Buffer.from('RIFF....WAVE')), mimeType: 'audio/wav' },
      ],
    });
    expect(parts[0]).toEqual({ type: 'text', text: 'hello' });
    expect(parts[1]).toMatchObject({ type: 'media', mediaType: 'image/png' });
    expect(Buffer.from((parts[1] as { data: Uint8Array }).data).equals(png)).toBe(true);
    expect(parts[2]).toMatchObject({ type: 'media', mediaType: 'audio/wav' });
  });

  it('images go through the same media pipeline: a big one is resized, a BMP converted, audio becomes a note', async () => {
    const big = encodePng(3000, 1500);
    const parts = await okParts({
      content: [
        { type: 'image', data: b64(big), mimeType: 'image/png' },
        { type: 'image', data: b64(fixture('bmp-24.bmp')), mimeType: 'image/bmp' },
        { type: 'audio', data: b64(Buffer.from('ID3\u0003 not really mp3')), mimeType: 'audio/mpeg' },
      ],
    });
    const stored = await toStoredParts(parts);
    const images = stored.filter((p): p is ImagePart => p.type === 'image');
    expect(images).toHaveLength(2);
    const first = images[0] as ImagePart;
    expect([first.width, first.height]).toEqual([2000, 1000]);
    expect(imageSize(Buffer.from(first.data, 'base64'))).toMatchObject({ width: 2000, height: 1000 });
    expect((images[1] as ImagePart).mediaType).toBe('image/png');
    const texts = stored.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text);
    expect(texts.some((t) => t.includes('dropped') && t.includes('audio/mpeg'))).toBe(true);
  });

  it('bad base64 never reaches the pipeline: it becomes a note naming the media type', async () => {
    const parts = await okParts({
      content: [{ type: 'image', data: '%%% not base64 %%%', mimeType: 'image/png' }],
    });
    expect(parts).toEqual([
      { type: 'text', text: '[MCP image (image/png) whose data is not valid base64 left out]' },
    ]);
  });

  it('embedded resources: text with its URI, a PDF blob as a named document, a text blob as text', async () => {
    const pdf = fixture('pdf-2page.pdf');
    const parts = await okParts({
      content: [
        {
          type: 'resource',
          resource: { uri: 'file:///notes.md', mimeType: 'text/markdown', text: '# Notes' },
        },
        {
          type: 'resource',
          resource: { uri: 'file:///docs/report%20q3.pdf', mimeType: 'application/pdf', blob: b64(pdf) },
        },
        {
          type: 'resource',
          resource: { uri: 'demo://r/1', mimeType: 'text/plain', blob: b64(Buffer.from('plain words')) },
        },
      ],
    });
    expect(parts[0]).toEqual({ type: 'text', text: '[resource file:///notes.md (text/markdown)]\n# Notes' });
    expect(parts[1]).toMatchObject({ type: 'media', mediaType: 'application/pdf', name: 'report q3.pdf' });
    expect(parts[2]).toEqual({ type: 'text', text: '[resource demo://r/1 (text/plain)]\nplain words' });
    const stored = await toStoredParts(parts);
    expect(stored[1]).toMatchObject({
      type: 'document',
      mediaType: 'application/pdf',
      name: 'report q3.pdf',
    });
  });

  it('resource links are read through the reader (capped per result); unreadable or unread links stay text', async () => {
    const png = fixture('png-rgb.png');
    const reads: string[] = [];
    const readResource = async (uri: string) => {
      reads.push(uri);
      if (uri.endsWith('missing')) throw new Error('Resource not found');
      return [{ uri, mimeType: 'image/png', blob: b64(png) }];
    };
    const link = (uri: string) => ({
      type: 'resource_link',
      uri,
      name: uri.split('/').pop(),
      mimeType: 'image/png',
    });
    const parts = await okParts(
      { content: [link('demo://a'), link('demo://missing'), link('demo://c')] },
      { readResource, maxLinkedResources: 2 },
    );
    expect(reads).toEqual(['demo://a', 'demo://missing']);
    expect(parts[0]).toMatchObject({ type: 'media', mediaType: 'image/png' });
    expect(parts[1]).toEqual({
      type: 'text',
      text: '[resource link missing: demo://missing (image/png)] (could not be read: Resource not found)',
    });
    expect(parts[2]).toEqual({ type: 'text', text: '[resource link c: demo://c (image/png)]' });
  });

  it('structuredContent becomes JSON text only when the content says nothing itself', async () => {
    expect(await okParts({ content: [], structuredContent: { t: 21 } })).toEqual([
      { type: 'text', text: '{"t":21}' },
    ]);
    expect(
      await okParts({ content: [{ type: 'text', text: 'It is 21' }], structuredContent: { t: 21 } }),
    ).toEqual([{ type: 'text', text: 'It is 21' }]);
    // server-filesystem mirrors its image into structuredContent: the picture must not turn into base64 text.
    const img = { type: 'image', data: b64(fixture('png-rgb.png')), mimeType: 'image/png' };
    const parts = await okParts({ content: [img], structuredContent: { content: [img] } });
    expect(parts).toHaveLength(1);
    expect(parts[0]?.type).toBe('media');
  });

  it('isError → an error result with the text; media left out and said so; unknown content types become notes', async () => {
    const out = await mcpResultToCallResult(
      {
        isError: true,
        content: [
          { type: 'text', text: 'disk full' },
          { type: 'image', data: b64(fixture('png-rgb.png')), mimeType: 'image/png' },
        ],
      },
      { meta: { mcpServer: 's' } },
    );
    expect(out).toEqual({
      ok: false,
      error: 'disk full\n[image/png left out of an error result]',
      meta: { mcpServer: 's' },
    });
    expect(await mcpResultToCallResult({ isError: true, content: [] })).toMatchObject({
      ok: false,
      error: 'the MCP tool reported an error without a message',
    });
    expect(await okParts({ content: [{ type: 'video', data: 'x' }, 42] })).toEqual([
      { type: 'text', text: '[MCP content of type "video" is not supported; left out]' },
      { type: 'text', text: '[MCP content item number is not an MCP content block; left out]' },
    ]);
    expect(await okParts({})).toEqual([{ type: 'text', text: '(the MCP tool returned no content)' }]);
  });
});

describe('MCP result from a hostile server', () => {
  it('20 000 tiny images keep the first 20 and one note for the rest', async () => {
    const png = b64(fixture('png-rgb.png'));
    const content = Array.from({ length: 20_000 }, () => ({
      type: 'image',
      data: png,
      mimeType: 'image/png',
    }));
    const parts = await okParts({ content });
    expect(parts.filter((p) => p.type === 'media')).toHaveLength(20);
    expect(parts).toHaveLength(21);
    expect(parts.at(-1)).toEqual({
      type: 'text',
      text: '[MCP 19980 more media items left out (at most 20 per result)]',
    });
  });

  it('structuredContent 100 000 levels deep, content not an array, isError not a boolean: a result, no throw', async () => {
    const deep = JSON.parse(`${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`) as unknown;
    const parts = await okParts({ content: 'nope' as unknown as unknown[], structuredContent: deep });
    expect(parts).toEqual([
      {
        type: 'text',
        text: expect.stringMatching(/^\[structuredContent could not be serialized: .*call stack.*\]$/),
      },
    ]);
    const withBigInt = await okParts({ content: [], structuredContent: { n: 1n } });
    expect(withBigInt).toEqual([
      { type: 'text', text: expect.stringMatching(/^\[structuredContent could not be serialized: .*BigInt/) },
    ]);
    const odd = await mcpResultToCallResult({
      content: [{ type: 'text', text: 'x' }],
      isError: 'yes' as unknown as boolean,
    });
    expect(odd).toEqual({ ok: true, parts: [{ type: 'text', text: 'x' }] });
  });

  it('a resource_link to file:///etc/passwd is only ever asked of the server, never read here', async () => {
    const asked: string[] = [];
    const parts = await okParts(
      { content: [{ type: 'resource_link', uri: 'file:///etc/passwd', name: 'passwd' }] },
      {
        readResource: async (uri: string) => {
          asked.push(uri);
          throw new Error('the server offers no resources');
        },
      },
    );
    expect(asked).toEqual(['file:///etc/passwd']);
    expect(parts).toEqual([
      {
        type: 'text',
        text: '[resource link passwd: file:///etc/passwd] (could not be read: the server offers no resources)',
      },
    ]);
    const unread = await okParts({ content: [{ type: 'resource_link', uri: 'file:///etc/passwd' }] });
    expect(unread).toEqual([{ type: 'text', text: '[resource link: file:///etc/passwd]' }]);
  });
});
