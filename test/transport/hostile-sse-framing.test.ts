/**
 * Hostile SSE framing fed straight to `SseParser`: lines that never end, odd line endings, a BOM, splits at every
 * byte, floods of events. Every case ends in the right events or a typed `ProviderError`, never a hang or a crash.
 */
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../src/providers/transport/provider-error.js';
import { type SseEvent, SseParser } from '../../src/providers/transport/sse-parser.js';

const enc = new TextEncoder();

function parseAll(chunks: Iterable<string | Uint8Array>, maxLineChars?: number): SseEvent[] {
  const out: SseEvent[] = [];
  const p = new SseParser((e) => out.push(e), maxLineChars === undefined ? {} : { maxLineChars });
  for (const c of chunks) p.push(c);
  p.end();
  return out;
}

describe('hostile SSE framing: a line without a newline', () => {
  it('buffers a 100 MB data line pushed in 64 KiB chunks in linear time and delivers it whole', () => {
    // Each push used to re-scan (and flatten) the whole pending line: quadratic, minutes for 100 MB.
    const chunk = new Uint8Array(64 * 1024).fill(0x78);
    const count = Math.ceil((100 * 1024 * 1024) / chunk.length);
    const out: SseEvent[] = [];
    const p = new SseParser((e) => out.push(e));
    p.push('data: ');
    for (let i = 0; i < count; i++) p.push(chunk);
    expect(out).toEqual([]);
    p.push('\n\n');
    expect(out).toHaveLength(1);
    expect(out[0]?.data.length).toBe(count * chunk.length);
    expect(out[0]?.data.charCodeAt(12345)).toBe(0x78);
  }, 60_000);

  it('refuses a line that outgrows maxLineChars with a non-retryable ProviderError naming the api, then recovers', () => {
    const p = new SseParser(() => {}, { maxLineChars: 1024, api: 'openai-chat' });
    p.push('data: ');
    let caught: unknown;
    try {
      for (let i = 0; i < 100; i++) p.push('x'.repeat(100));
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ProviderError);
    expect((caught as ProviderError).code).toBe('ERR_PROVIDER');
    expect((caught as ProviderError).retryable).toBe(false);
    expect((caught as ProviderError).api).toBe('openai-chat');
    expect((caught as ProviderError).message).toMatch(/longer than 1024 characters/);
  });

  it('refuses an event whose many short data lines join past maxLineChars', () => {
    const lines = `${'data: 0123456789\n'.repeat(200)}\n`;
    expect(() => parseAll([lines], 1000)).toThrow(ProviderError);
  });

  it('keeps a line that stays under the limit across many chunks', () => {
    const pieces = Array.from({ length: 50 }, () => 'y'.repeat(19));
    const events = parseAll(['data:', ...pieces, '\n\n'], 1000);
    expect(events).toEqual([{ event: 'message', data: 'y'.repeat(950), id: '' }]);
  });
});

describe('hostile SSE framing: line endings, BOM, field spelling', () => {
  const text = '\uFEFFevent:a\rdata:1\r\rdata:  2\r\n\r\nevent: b\ndata:3\n\n';
  const expected: SseEvent[] = [
    { event: 'a', data: '1', id: '' },
    { event: 'message', data: ' 2', id: '' },
    { event: 'b', data: '3', id: '' },
  ];

  it('reads CR-only, CRLF and LF endings, a BOM and `data:` without a space, whole or one byte at a time', () => {
    const bytes = enc.encode(text);
    expect(parseAll([bytes])).toEqual(expected);
    expect(parseAll([...bytes].map((b) => Uint8Array.of(b)))).toEqual(expected);
  });

  it('drops only a leading BOM: one in the middle of the stream is part of the field name', () => {
    expect(parseAll(['data: a\n\n\uFEFFdata: b\n\ndata: c\n\n']).map((e) => e.data)).toEqual(['a', 'c']);
  });

  it('treats a lone CR at the very end of the stream as a line end', () => {
    expect(parseAll(['data: a\r'])).toEqual([{ event: 'message', data: 'a', id: '' }]);
  });

  it('replaces invalid UTF-8 with U+FFFD instead of throwing', () => {
    const bytes = Uint8Array.of(...enc.encode('data: '), 0xff, 0xc3, ...enc.encode('\n\n'));
    expect(parseAll([bytes])).toEqual([{ event: 'message', data: '\uFFFD\uFFFD', id: '' }]);
  });
});

describe('hostile SSE framing: floods', () => {
  it('delivers 20,000 events from one chunk in order', () => {
    let text = '';
    for (let i = 0; i < 20_000; i++) text += `event: e\ndata: ${i}\n\n`;
    const events = parseAll([text]);
    expect(events).toHaveLength(20_000);
    expect(events[19_999]).toEqual({ event: 'e', data: '19999', id: '' });
  });

  it('delivers nothing for a flood of comments and blank lines (no event without data)', () => {
    expect(parseAll([': keepalive\n\n'.repeat(50_000), '\n'.repeat(50_000)])).toEqual([]);
  });

  it('delivers an event that ends without a blank line, and nothing for a trailing field without data', () => {
    expect(parseAll(['data: a\n\ndata: b'])).toEqual([
      { event: 'message', data: 'a', id: '' },
      { event: 'message', data: 'b', id: '' },
    ]);
    expect(parseAll(['data: a\n\nevent: only'])).toHaveLength(1);
  });
});
