/**
 * Hostile conversations into compaction (the unit-run share; test/fuzz/fuzz-sessions.mjs runs the heavy ones: a 50 MB
 * message, 100k messages, a 10 MB summary). `compact` must settle (resolve or reject with a PantoError), never split
 * a tool call from its result, and give `replacement` + the kept messages.
 */
import { describe, expect, it } from 'vitest';
import { compact, findCutPoint, validCutPoints } from '../../src/compaction/index.js';
import type { Message } from '../../src/conversation.js';

const text = (t: string) => ({ type: 'text' as const, text: t });
const summarize = async () => 'summary';

describe('compact on hostile conversations', () => {
  // Fuzz finding (compaction case 2048977714, shrunk): only a system message before the cut. The rounds loop got no
  // summary and spun forever — the promise never settled and the event loop was blocked.
  it('settles when every message before the cut is a system message: nothing to summarize, null', async () => {
    const messages: Message[] = [
      { role: 'system', content: 'You are a test.' },
      { role: 'user', content: [text('x'.repeat(8000))] },
    ];
    expect(findCutPoint(messages, 10)).toBe(1);
    let calls = 0;
    const count = async () => {
      calls++;
      return 'summary';
    };
    await expect(compact({ messages }, count, { keepRecentTokens: 10 })).resolves.toBeNull();
    await expect(
      compact({ messages }, count, { keepRecentTokens: 10, maxSummaryInputTokens: 100_000 }),
    ).resolves.toBeNull();
    expect(calls).toBe(0);
  });

  it('a cut that would fall between a call and its results moves before the call', async () => {
    const messages: Message[] = [
      { role: 'user', content: [text('q'.repeat(4000))] },
      {
        role: 'assistant',
        content: [
          { type: 'tool_call', id: 'a', name: 'read', input: {} },
          { type: 'tool_call', id: 'b', name: 'read', input: {} },
        ],
        stopReason: 'tool_use',
      },
      {
        role: 'tool',
        results: [
          {
            type: 'tool_result',
            toolUseId: 'a',
            toolName: 'read',
            parts: [text('r'.repeat(40_000))],
            isError: false,
          },
        ],
      },
      {
        role: 'tool',
        results: [
          {
            type: 'tool_result',
            toolUseId: 'b',
            toolName: 'read',
            parts: [text('r'.repeat(40_000))],
            isError: false,
          },
        ],
      },
      { role: 'user', content: [text('end')] },
    ];
    const result = await compact({ messages }, summarize, { keepRecentTokens: 12_000 });
    expect(result?.compaction.firstKeptIndex).toBe(1);
    expect(result?.conversation.messages).toEqual([
      ...(result?.compaction.replacement ?? []),
      ...messages.slice(1),
    ]);
    expect(validCutPoints(messages)).toEqual([false, true, false, false, true, true]);
  });

  it('only tool results (no calls) and images only settle', async () => {
    const results: Message[] = Array.from({ length: 200 }, (_, i) => ({
      role: 'tool',
      results: [
        { type: 'tool_result', toolUseId: `r${i}`, toolName: 'read', parts: [text('ok')], isError: false },
      ],
    }));
    expect(await compact({ messages: results }, summarize, { keepRecentTokens: 10 })).toBeNull();
    const image = {
      type: 'image' as const,
      mediaType: 'image/png' as const,
      data: 'iVBORw0KGgo=',
      width: 4000,
      height: 3000,
    };
    const images: Message[] = Array.from({ length: 100 }, () => ({ role: 'user', content: [image, image] }));
    const r = await compact({ messages: images }, summarize, {
      keepRecentTokens: 5000,
      imageTokenRule: 'anthropic',
    });
    expect(r?.conversation.messages.length).toBeLessThan(images.length);
  });
});
