/**
 * Shortening a tool result to a number of text characters (compaction/shorten-result.ts), and compaction using it on a
 * kept result that alone is longer than `keepRecentTokens`, recorded so the session reloads shortened.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compact } from '../../src/compaction/compact.js';
import { shortenToolResult } from '../../src/compaction/shorten-result.js';
import type { ImagePart, Message, StoredPart, ToolResultBlock } from '../../src/conversation.js';
import { SessionLog } from '../../src/session/index.js';
import { pngBase64 } from '../session/helpers/media.js';

const dir = mkdtempSync(join(tmpdir(), 'panto-shorten-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const result = (...parts: StoredPart[]): ToolResultBlock => ({
  type: 'tool_result',
  toolUseId: 'c1',
  toolName: 'dump',
  parts,
  isError: false,
});
const text = (t: string): StoredPart => ({ type: 'text', text: t });
const textOf = (p: StoredPart | undefined) => (p?.type === 'text' ? p.text : '');
const digits = (n: number) => Array.from({ length: n }, (_, i) => String(i % 10)).join('');

describe('shortenToolResult', () => {
  it('returns the same block when its text fits', () => {
    const block = result(text('short'), text('also short'));
    expect(shortenToolResult(block, 15)).toBe(block);
  });

  it('cuts a long text from the middle: head and tail kept, the note counts what was cut, within the limit', () => {
    const long = digits(100_000);
    const out = shortenToolResult(result(text(long)), 10_000);
    const kept = textOf(out.parts[0]);
    expect(kept.length).toBeLessThanOrEqual(10_000);
    const m = /\[… (\d+) of this tool result's 100000 characters were cut here/.exec(kept);
    const cut = Number(m?.[1]);
    const [head, tail] = kept.split(/\n\n\[…[^\]]*…\]\n\n/);
    expect(long.startsWith(head as string)).toBe(true);
    expect(long.endsWith(tail as string)).toBe(true);
    expect((head as string).length + (tail as string).length + cut).toBe(100_000);
    expect((head as string).length).toBeGreaterThan((tail as string).length);
  });

  it('keeps short parts whole and shares the room among the long ones; media untouched', () => {
    const image: ImagePart = {
      type: 'image',
      mediaType: 'image/png',
      data: pngBase64(4, 4),
      width: 4,
      height: 4,
    };
    const out = shortenToolResult(
      result(text('header'), text(digits(50_000)), image, text(digits(50_000))),
      20_000,
    );
    expect(out.parts[0]).toEqual(text('header'));
    expect(out.parts[2]).toBe(image);
    const a = textOf(out.parts[1]).length;
    const b = textOf(out.parts[3]).length;
    expect(a + b + 'header'.length).toBeLessThanOrEqual(20_000);
    expect(Math.abs(a - b)).toBeLessThanOrEqual(1);
  });

  it('never splits a surrogate pair, and a limit of 0 leaves only the note', () => {
    const emoji = '😀'.repeat(20_000);
    const kept = textOf(shortenToolResult(result(text(emoji)), 1001).parts[0]);
    expect(Buffer.from(kept, 'utf8').toString('utf8')).toBe(kept); // no lone surrogate
    const none = textOf(shortenToolResult(result(text(emoji)), 0).parts[0]);
    expect(none).toMatch(/^\n\n\[… 40000 of this tool result's 40000 characters were cut here/);
  });
});

describe('compaction shortens a kept tool result that alone is longer than keepRecentTokens', () => {
  const huge = digits(400_000);
  const conversation = (): Message[] => [
    { role: 'user', content: [text('dump it')] },
    {
      role: 'assistant',
      content: [{ type: 'tool_call', id: 'c1', name: 'dump', input: {} }],
      stopReason: 'tool_use',
    },
    { role: 'tool', results: [result(text(huge))] },
    { role: 'user', content: [text('and now?')] },
  ];

  it('the result goes into the replacement shortened; the rest is kept; the record reloads the same', async () => {
    const path = join(dir, 'kept.jsonl');
    const log = await SessionLog.create(path);
    for (const m of conversation()) log.appendMessage(m);
    const out = await compact(log.conversation, async () => 'the user asked for a dump', {
      keepRecentTokens: 5000,
    });
    if (out === null) throw new Error('expected a compaction');
    const messages = out.conversation.messages;
    const tool = messages.find((m) => m.role === 'tool');
    const kept = tool?.role === 'tool' ? textOf(tool.results[0]?.parts[0]) : '';
    expect(kept.length).toBeLessThanOrEqual(20_000);
    expect(kept.endsWith(huge.slice(-50))).toBe(true);
    expect(out.compaction.firstKeptIndex).toBe(3);
    expect(messages.at(-1)).toEqual({ role: 'user', content: [text('and now?')] });
    expect(out.compaction.tokensAfter).toBeLessThan(10_000);
    log.appendCompaction(out.compaction);
    log.close();
    const reopened = await SessionLog.open(path);
    expect(reopened.conversation.messages).toStrictEqual(JSON.parse(JSON.stringify(messages)));
    reopened.close();
  });

  it('nothing older to summarize: the result is still shortened, with an empty summary and no summary message', async () => {
    const messages = conversation().slice(1, 3);
    let calls = 0;
    const out = await compact(
      { messages },
      async () => {
        calls++;
        return 'never';
      },
      { keepRecentTokens: 5000 },
    );
    expect(calls).toBe(0);
    expect(out?.compaction.summary).toBe('');
    expect(out?.compaction.replacement.map((m) => m.role)).toEqual(['assistant', 'tool']);
    expect(out?.compaction.firstKeptIndex).toBe(2);
  });

  it('never cuts between a call and its result: results split over two tool messages stay together (fuzz-sessions seed 5)', async () => {
    const messages: Message[] = [
      { role: 'user', content: [text('two calls')] },
      {
        role: 'assistant',
        content: [
          { type: 'tool_call', id: 'a', name: 'dump', input: {} },
          { type: 'tool_call', id: 'b', name: 'dump', input: {} },
        ],
        stopReason: 'tool_use',
      },
      { role: 'tool', results: [{ ...result(text(huge)), toolUseId: 'a' }] },
      { role: 'tool', results: [{ ...result(text('small')), toolUseId: 'b' }] },
      { role: 'user', content: [text('next')] },
    ];
    const out = await compact({ messages }, async () => 's', { keepRecentTokens: 5000 });
    expect(out?.compaction.firstKeptIndex).toBe(4);
    expect(out?.compaction.replacement.at(-1)).toEqual(messages[3]);
  });

  it('a conversation with no oversized result compacts as before (kept messages untouched)', async () => {
    const small = conversation().map((m) =>
      m.role === 'tool' ? { role: 'tool' as const, results: [result(text('ok'))] } : m,
    );
    const out = await compact({ messages: small }, async () => 's', { keepRecentTokens: 1 });
    expect(out?.compaction.replacement).toHaveLength(1);
    expect(out?.conversation.messages.slice(1)).toEqual(small.slice(out?.compaction.firstKeptIndex));
  });
});
