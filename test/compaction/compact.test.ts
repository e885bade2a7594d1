import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  compact,
  estimateTokens,
  renderTranscript,
  SUMMARY_PREFIX,
  type SummaryRequest,
  summaryMessage,
} from '../../src/compaction/index.js';
import type { Message } from '../../src/conversation.js';
import { isPantoError } from '../../src/errors.js';
import { loadSession, SessionLog } from '../../src/session/index.js';
import { pdfBase64, pngBase64 } from '../session/helpers/media.js';
import { agentTranscript } from './helpers/agent-transcript.js';

const dir = mkdtempSync(join(tmpdir(), 'panto-compaction-'));
let n = 0;
const file = () => join(dir, `s${n++}.jsonl`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A summarizer that records its requests and answers with a short digest. */
function recordingSummarizer() {
  const requests: SummaryRequest[] = [];
  const summarize = async (request: SummaryRequest) => {
    requests.push(request);
    return `digest of ${request.messages.length} messages`;
  };
  return { requests, summarize };
}

describe('compact', () => {
  it('replaces the older part with system messages + a summary and keeps the recent part verbatim', async () => {
    const messages = agentTranscript(10);
    const { requests, summarize } = recordingSummarizer();
    const result = await compact({ messages }, summarize, { keepRecentTokens: 3000 });
    expect(result).not.toBeNull();
    if (!result) return;
    const { compaction, conversation } = result;
    const cut = compaction.firstKeptIndex;
    expect(cut).toBeGreaterThan(1);
    expect(compaction.messageCountBefore).toBe(messages.length);
    expect(compaction.replacement).toStrictEqual([messages[0], summaryMessage(compaction.summary)]);
    expect(conversation.messages).toStrictEqual([...compaction.replacement, ...messages.slice(cut)]);
    expect(compaction.tokensBefore).toBe(estimateTokens(messages));
    expect(compaction.tokensAfter).toBe(estimateTokens(conversation.messages));
    expect(compaction.tokensAfter).toBeLessThan(compaction.tokensBefore);
    expect(requests).toHaveLength(1);
    expect(requests[0]?.messages).toStrictEqual(messages.slice(1, cut));
    expect(summaryMessage('s').content).toStrictEqual([{ type: 'text', text: `${SUMMARY_PREFIX}s` }]);
  });

  it('describes every image and PDF in the summarized part instead of dropping it', async () => {
    const messages: Message[] = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look at this' },
          { type: 'image', mediaType: 'image/png', data: pngBase64(30, 20), width: 30, height: 20 },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', text: 'secret reasoning' },
          { type: 'tool_call', id: 'c1', name: 'read', input: { path: 'shot.png' } },
          { type: 'tool_call', id: 'c2', name: 'read', input: { path: 'spec.pdf' } },
        ],
      },
      {
        role: 'tool',
        results: [
          {
            type: 'tool_result',
            toolUseId: 'c1',
            toolName: 'read',
            parts: [
              { type: 'text', text: 'Read image file [image/png]' },
              { type: 'image', mediaType: 'image/png', data: pngBase64(1200, 800), width: 1200, height: 800 },
            ],
            isError: false,
            meta: { path: 'shot.png' },
          },
          {
            type: 'tool_result',
            toolUseId: 'c2',
            toolName: 'read',
            parts: [
              {
                type: 'document',
                mediaType: 'application/pdf',
                data: pdfBase64(),
                name: 'spec.pdf',
                pages: 3,
              },
            ],
            isError: true,
          },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'x'.repeat(4000) }] },
      { role: 'user', content: [{ type: 'text', text: 'y'.repeat(4000) }] },
    ];
    const { requests, summarize } = recordingSummarizer();
    const result = await compact({ messages }, summarize, { keepRecentTokens: 1000 });
    expect(result?.compaction.firstKeptIndex).toBe(4);
    const text = requests[0]?.text ?? '';
    expect(text).toContain('[user]\nlook at this\n[image: image/png 30x20]');
    expect(text).toContain('[tool call read(path="shot.png")]');
    expect(text).toContain('[tool result read(path="shot.png")]\nRead image file [image/png]');
    expect(text).toContain('[image: image/png 1200x800] from tool read(path="shot.png")');
    expect(text).toContain(
      '[tool error read(path="spec.pdf")]\n[document: spec.pdf, 3 pages] from tool read(path="spec.pdf")',
    );
    expect(text).not.toContain('secret reasoning');
    expect(text).not.toContain('iVBOR'); // no base64 leaks into the summarizer's text
    expect(renderTranscript(messages.slice(0, 1))).toBe('[user]\nlook at this\n[image: image/png 30x20]');
  });

  it('returns null when there is nothing to compact', async () => {
    const messages = agentTranscript(2);
    const { requests, summarize } = recordingSummarizer();
    expect(await compact({ messages }, summarize, { keepRecentTokens: 1_000_000 })).toBeNull();
    expect(requests).toHaveLength(0);
  });

  it('rejects an empty summary, propagates summarizer failures and honours abort', async () => {
    const messages = agentTranscript(8);
    const opts = { keepRecentTokens: 2000 };
    const empty = await compact({ messages }, async () => '  ', opts).catch((e: unknown) => e);
    expect(isPantoError(empty, 'ERR_INVALID_ARGUMENT')).toBe(true);
    const boom = new Error('model down');
    await expect(
      compact(
        { messages },
        async () => {
          throw boom;
        },
        opts,
      ),
    ).rejects.toBe(boom);
    const controller = new AbortController();
    const aborted = compact(
      { messages },
      async ({ signal }) => {
        expect(signal).toBe(controller.signal);
        controller.abort();
        return 'late';
      },
      { ...opts, signal: controller.signal },
    );
    await expect(aborted).rejects.toMatchObject({ code: 'ERR_ABORTED' });
  });
});

describe('compaction in rounds (the summarizer input fits its window)', () => {
  const turn = (i: number, chars: number): Message[] => [
    { role: 'user', content: [{ type: 'text', text: `q${i} ${'u'.repeat(chars)}` }] },
    { role: 'assistant', content: [{ type: 'text', text: `a${i} ${'a'.repeat(chars)}` }], stopReason: 'end' },
  ];
  const history = (turns: number, chars: number) =>
    Array.from({ length: turns }, (_, i) => turn(i, chars)).flat();

  it('splits a long transcript into rounds within maxSummaryInputTokens, each after the previous summary', async () => {
    const messages = history(12, 2000);
    const { requests, summarize } = recordingSummarizer();
    const result = await compact({ messages }, summarize, {
      keepRecentTokens: 600,
      maxSummaryInputTokens: 3000,
    });
    expect(result).not.toBeNull();
    expect(requests.length).toBeGreaterThan(2);
    for (const [i, r] of requests.entries()) {
      expect(r.round).toEqual({ index: i + 1, count: requests.length });
      expect(Math.ceil(r.text.length / 4)).toBeLessThanOrEqual(3000);
      if (i > 0)
        expect(r.text.startsWith(`[summary of the conversation before this part]\ndigest of`)).toBe(true);
    }
    // Every summarized message went to exactly one round, in order.
    const rounds = requests.flatMap((r) => r.messages);
    expect(rounds).toEqual(messages.slice(0, result?.compaction.firstKeptIndex ?? 0));
    expect(result?.compaction.summary).toBe(`digest of ${requests.at(-1)?.messages.length} messages`);
  });

  it('shortens a tool output longer than a quarter of a round, keeping its head and tail', async () => {
    const big = `HEAD ${'x'.repeat(50_000)} TAIL`;
    const messages: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'read it' }] },
      {
        role: 'assistant',
        content: [{ type: 'tool_call', id: 't1', name: 'read', input: { path: 'big.log' } }],
        stopReason: 'tool_use',
      },
      {
        role: 'tool',
        results: [
          {
            type: 'tool_result',
            toolUseId: 't1',
            toolName: 'read',
            parts: [{ type: 'text', text: big }],
            isError: false,
          },
        ],
      },
      ...history(2, 100),
    ];
    const { requests, summarize } = recordingSummarizer();
    await compact({ messages }, summarize, { keepRecentTokens: 50, maxSummaryInputTokens: 2000 });
    const text = requests.map((r) => r.text).join('\n');
    expect(text).toContain('HEAD');
    expect(text).toContain('TAIL');
    expect(text).toMatch(/\[… \d+ characters cut …\]/);
    expect(Math.max(...requests.map((r) => r.text.length))).toBeLessThanOrEqual(8000);
  });

  it('leaves the oldest messages out (and says how many) when more than maxRounds rounds would be needed', async () => {
    const messages = history(20, 2000);
    const { requests, summarize } = recordingSummarizer();
    await compact({ messages }, summarize, {
      keepRecentTokens: 600,
      maxSummaryInputTokens: 2000,
      maxRounds: 3,
    });
    expect(requests).toHaveLength(3);
    expect(requests[0]?.text).toMatch(
      /^\[\d+ earlier messages were left out: too long to summarize in 3 rounds\]/,
    );
    expect(requests[0]?.messages[0]).not.toBe(messages[0]);
  });

  it('an overflow refusal from the summarizer halves the input and redoes the rounds (at most 3 times)', async () => {
    const messages = history(6, 2000);
    const sizes: number[] = [];
    const tooLong = new Error('prompt is too long');
    const summarize = async (r: SummaryRequest) => {
      sizes.push(r.text.length);
      if (r.text.length > 2500) throw tooLong;
      return 'short';
    };
    const result = await compact({ messages }, summarize, {
      keepRecentTokens: 600,
      isOverflow: (e) => e === tooLong,
    });
    expect(result?.compaction.summary).toBe('short');
    expect(Math.max(...sizes.slice(-1))).toBeLessThanOrEqual(2500);

    const never = async () => {
      throw tooLong;
    };
    await expect(
      compact({ messages }, never, { keepRecentTokens: 600, isOverflow: (e) => e === tooLong }),
    ).rejects.toBe(tooLong);
    // Without isOverflow the error propagates at once.
    let calls = 0;
    await expect(
      compact(
        { messages },
        async () => {
          calls++;
          throw tooLong;
        },
        { keepRecentTokens: 600 },
      ),
    ).rejects.toBe(tooLong);
    expect(calls).toBe(1);
  });

  it('rejects out-of-range options with a typed error', async () => {
    const { summarize } = recordingSummarizer();
    await expect(
      compact({ messages: history(3, 10) }, summarize, { maxSummaryInputTokens: 1 }),
    ).rejects.toMatchObject({
      code: 'ERR_INVALID_ARGUMENT',
    });
    await expect(compact({ messages: history(3, 10) }, summarize, { maxRounds: 0 })).rejects.toMatchObject({
      code: 'ERR_INVALID_ARGUMENT',
    });
  });
});

describe('compaction in the session log', () => {
  it('survives reload: the compacted state comes back and the full history stays in the file', async () => {
    const path = file();
    const messages = agentTranscript(10);
    const log = await SessionLog.create(path);
    for (const m of messages) log.appendMessage(m);
    const { summarize } = recordingSummarizer();
    const result = await compact(log.conversation, summarize, { keepRecentTokens: 3000 });
    if (!result) throw new Error('expected a compaction');
    const entry = log.appendCompaction(result.compaction);
    expect(log.conversation.messages).toStrictEqual(result.conversation.messages);
    const later: Message = { role: 'user', content: [{ type: 'text', text: 'after compaction' }] };
    log.appendMessage(later);
    log.close();

    const loaded = await loadSession(path);
    const expected = JSON.parse(JSON.stringify([...result.conversation.messages, later]));
    expect(loaded.conversation.messages).toStrictEqual(expected);
    expect(loaded.entries.filter((e) => e.type === 'message')).toHaveLength(messages.length + 1);
    const stored = loaded.entries.find((e) => e.type === 'compaction');
    expect(stored).toStrictEqual(JSON.parse(JSON.stringify(entry)));
    expect(stored).toMatchObject({
      summary: result.compaction.summary,
      tokensBefore: result.compaction.tokensBefore,
      tokensAfter: result.compaction.tokensAfter,
    });
    // Every original image is still in the file.
    const text = readFileSync(path, 'utf8');
    expect(text.split('"type":"image"').length - 1).toBeGreaterThanOrEqual(
      JSON.stringify(messages).split('"type":"image"').length - 1,
    );
  });

  it('compacts a compacted conversation again, including a cut inside the previous replacement', async () => {
    const path = file();
    const log = await SessionLog.create(path);
    for (const m of agentTranscript(8)) log.appendMessage(m);
    const { summarize } = recordingSummarizer();
    const first = await compact(log.conversation, summarize, { keepRecentTokens: 2000 });
    if (!first) throw new Error('expected a compaction');
    log.appendCompaction(first.compaction);
    for (const m of agentTranscript(6).slice(1)) log.appendMessage(m);

    // A second compaction with the usual policy.
    const second = await compact(log.conversation, summarize, { keepRecentTokens: 2000 });
    if (!second) throw new Error('expected a second compaction');
    log.appendCompaction(second.compaction);
    expect(log.conversation.messages).toStrictEqual(second.conversation.messages);

    // A third whose cut falls between the system message and the summary of the second (keeps that summary).
    const current = log.conversation;
    const third = {
      summary: 'only the system message was summarized',
      replacement: [current.messages[0] as Message, summaryMessage('nothing new')],
      firstKeptIndex: 1,
      messageCountBefore: current.messages.length,
      tokensBefore: 0,
      tokensAfter: 0,
    };
    log.appendCompaction(third);
    const expected = [...third.replacement, ...current.messages.slice(1)];
    expect(log.conversation.messages).toStrictEqual(expected);
    log.close();

    const loaded = await loadSession(path);
    expect(loaded.conversation.messages).toStrictEqual(JSON.parse(JSON.stringify(expected)));
    const reopened = await SessionLog.open(path);
    expect(reopened.conversation.messages).toStrictEqual(loaded.conversation.messages);
    reopened.close();
  });

  it('refuses a compaction computed for a different conversation', async () => {
    const log = await SessionLog.create(file());
    const messages = agentTranscript(6);
    for (const m of messages) log.appendMessage(m);
    const result = await compact({ messages: messages.slice(0, -2) }, recordingSummarizer().summarize, {
      keepRecentTokens: 500,
    });
    if (!result) throw new Error('expected a compaction');
    expect(() => log.appendCompaction(result.compaction)).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }),
    );
    log.close();
  });

  it('refuses a malformed record before writing, so the file always loads', async () => {
    const path = file();
    const log = await SessionLog.create(path);
    const messages = agentTranscript(6);
    for (const m of messages) log.appendMessage(m);
    const result = await compact({ messages }, recordingSummarizer().summarize, { keepRecentTokens: 500 });
    if (!result) throw new Error('expected a compaction');
    const bad: unknown[] = [
      null,
      { ...result.compaction, tokensBefore: Number.NaN },
      { ...result.compaction, tokensAfter: -1 },
      { ...result.compaction, replacement: 'summary' },
    ];
    for (const record of bad) {
      expect(() => log.appendCompaction(record as typeof result.compaction)).toThrow(
        expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }),
      );
    }
    log.close();
    const loaded = await loadSession(path);
    expect(loaded.warnings).toEqual([]);
    expect(loaded.conversation.messages).toHaveLength(messages.length);
  });
});
