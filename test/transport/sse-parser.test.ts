import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../src/providers/transport/provider-error.js';
import { readSseEvents, type SseEvent, SseParser } from '../../src/providers/transport/sse-parser.js';

function parseAll(chunks: Array<string | Uint8Array>): SseEvent[] {
  const out: SseEvent[] = [];
  const p = new SseParser((e) => out.push(e));
  for (const c of chunks) p.push(c);
  p.end();
  return out;
}

const enc = new TextEncoder();

describe('SseParser: the event stream format', () => {
  it('dispatches events with names, data and sticky ids', () => {
    const events = parseAll(['event: a\ndata: {"x":1}\nid: 7\n\ndata: plain\n\n']);
    expect(events).toEqual([
      { event: 'a', data: '{"x":1}', id: '7' },
      { event: 'message', data: 'plain', id: '7' },
    ]);
  });

  it('joins multi-line data with LF and strips only one leading space', () => {
    const events = parseAll(['data:first\ndata:  second\ndata\n\n']);
    expect(events).toEqual([{ event: 'message', data: 'first\n second\n', id: '' }]);
  });

  it('ignores comments, unknown fields, and events without data', () => {
    const events = parseAll([': keep-alive\n\nevent: ping\n\nfoo: bar\ndata: x\n\n']);
    expect(events).toEqual([{ event: 'message', data: 'x', id: '' }]);
  });

  it('accepts CRLF, CR and LF line endings, mixed', () => {
    const events = parseAll(['data: a\r\n\r\ndata: b\r\rdata: c\n\nevent: e\rdata: d\r\n\n']);
    expect(events.map((e) => [e.event, e.data])).toEqual([
      ['message', 'a'],
      ['message', 'b'],
      ['message', 'c'],
      ['e', 'd'],
    ]);
  });

  it('gives the same events whatever the chunk boundaries (every split point, bytes)', () => {
    const text =
      '\uFEFFevent: content_block_delta\r\ndata: {"t":"héllo 🌍 wörld"}\r\n\r\n: c\n' +
      'data: line1\ndata: line2\r\rid: 9\nretry: 1500\nevent: end\ndata: [DONE]\n\n';
    const bytes = enc.encode(text);
    const whole = parseAll([bytes]);
    expect(whole).toEqual([
      { event: 'content_block_delta', data: '{"t":"héllo 🌍 wörld"}', id: '' },
      { event: 'message', data: 'line1\nline2', id: '' },
      { event: 'end', data: '[DONE]', id: '9' },
    ]);
    for (let i = 1; i < bytes.length; i++) {
      expect(parseAll([bytes.subarray(0, i), bytes.subarray(i)])).toEqual(whole);
    }
    // One byte at a time: CR/LF pairs and 4-byte UTF-8 sequences split everywhere.
    expect(parseAll([...bytes].map((b) => Uint8Array.of(b)))).toEqual(whole);
  });

  it('treats a CR at a chunk end followed by LF as one line ending', () => {
    expect(parseAll(['data: a\r', '\n\r', '\ndata: b\n\n'])).toEqual([
      { event: 'message', data: 'a', id: '' },
      { event: 'message', data: 'b', id: '' },
    ]);
  });

  it('records the retry field and ignores ids containing NUL', () => {
    const out: SseEvent[] = [];
    const p = new SseParser((e) => out.push(e));
    p.push('retry: 2500\nid: a\0b\ndata: x\n\nretry: soon\n');
    p.end();
    expect(p.retry).toBe(2500);
    expect(out[0]?.id).toBe('');
  });

  it('delivers an unterminated final event at end of stream', () => {
    expect(parseAll(['data: {"done":true}'])).toEqual([{ event: 'message', data: '{"done":true}', id: '' }]);
  });
});

describe('readSseEvents: a byte stream as events', () => {
  it('reads a ReadableStream and cancels it when the consumer stops early', async () => {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(enc.encode('data: 1\n\ndata: 2\n\n'));
      },
      cancel() {
        cancelled = true;
      },
    });
    const seen: string[] = [];
    for await (const e of readSseEvents(body)) {
      seen.push(e.data);
      break;
    }
    expect(seen).toEqual(['1']);
    expect(cancelled).toBe(true);
  });
});

describe('SseParser memory bound', () => {
  it('refuses to buffer a line or an event longer than maxLineChars, with a typed error', () => {
    const events: string[] = [];
    const parser = new SseParser((e) => events.push(e.data), { maxLineChars: 64, api: 'openai-chat' });
    parser.push(`data: ${'a'.repeat(50)}\n\n`);
    expect(events).toEqual(['a'.repeat(50)]);
    parser.push('data: ');
    let error: unknown;
    try {
      for (let i = 0; i < 10; i++) parser.push('b'.repeat(10));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).code).toBe('ERR_PROVIDER');
    expect((error as ProviderError).retryable).toBe(false);
    expect((error as ProviderError).api).toBe('openai-chat');

    const joined = new SseParser(() => {}, { maxLineChars: 64 });
    expect(() => {
      for (let i = 0; i < 10; i++) joined.push(`data: ${'c'.repeat(20)}\n`);
    }).toThrow(ProviderError);
  });
});
