import { describe, expect, it } from 'vitest';
import { estimateTokens, findCutPoint, validCutPoints } from '../../src/compaction/index.js';
import type { Message } from '../../src/conversation.js';
import { agentTranscript } from './helpers/agent-transcript.js';

/** True when no tool call before `cut` has its result at or after `cut` (and vice versa). */
function separatesCallFromResult(messages: Message[], cut: number): boolean {
  const before = new Set<string>();
  for (const m of messages.slice(0, cut)) {
    if (m.role === 'assistant') for (const b of m.content) if (b.type === 'tool_call') before.add(b.id);
  }
  for (const m of messages.slice(cut)) {
    if (m.role === 'tool') for (const r of m.results) if (before.has(r.toolUseId)) return true;
  }
  return messages[cut]?.role === 'tool';
}

describe('cut points never split a tool call from its result', () => {
  it('holds for every keepRecentTokens on a long agent transcript, under every image rule', () => {
    const messages = agentTranscript(12);
    for (const imageTokenRule of ['fixed', 'anthropic', 'openai-tile', 'gemini'] as const) {
      const total = estimateTokens(messages, { imageTokenRule });
      for (let keep = 1; keep <= total + 10; keep += 37) {
        const cut = findCutPoint(messages, keep, { imageTokenRule });
        if (cut === 0) continue;
        expect(separatesCallFromResult(messages, cut), `keep=${keep} cut=${cut}`).toBe(false);
        expect(['user', 'assistant', 'system']).toContain(messages[cut]?.role);
        // The kept tail holds at least keepRecentTokens.
        expect(estimateTokens(messages.slice(cut), { imageTokenRule })).toBeGreaterThanOrEqual(keep);
      }
    }
  });

  it('marks exactly the boundaries outside call/result pairs as valid', () => {
    const messages = agentTranscript(6);
    const valid = validCutPoints(messages);
    for (let i = 1; i < messages.length; i++) {
      expect(valid[i], `index ${i} (${messages[i]?.role})`).toBe(!separatesCallFromResult(messages, i));
    }
    expect(valid[0]).toBe(false);
  });

  it('moves the cut earlier (keeping more) rather than into a call/result pair', () => {
    const messages: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'x'.repeat(4000) }] },
      { role: 'assistant', content: [{ type: 'tool_call', id: 'a', name: 'read', input: {} }] },
      {
        role: 'tool',
        results: [{ type: 'tool_result', toolUseId: 'a', toolName: 'read', parts: [], isError: false }],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'y'.repeat(40) }] },
    ];
    // keep 5 tokens: the last message alone has 10 -> cut at 3, valid (call a answered before it).
    expect(findCutPoint(messages, 5)).toBe(3);
    // keep 11: the last two messages -> index 2 is the tool result, so the cut moves to 1 (before the call).
    expect(findCutPoint(messages, 11)).toBe(1);
  });

  it('returns 0 when everything fits or no valid cut exists', () => {
    const messages = agentTranscript(3);
    expect(findCutPoint(messages, estimateTokens(messages) + 1)).toBe(0);
    expect(findCutPoint([], 10)).toBe(0);
    const single: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'x'.repeat(400) }] }];
    expect(findCutPoint(single, 1)).toBe(0);
  });

  it('is not blocked by a call that never got a result (aborted turn)', () => {
    const messages: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'x'.repeat(400) }] },
      {
        role: 'assistant',
        content: [{ type: 'tool_call', id: 'lost', name: 'read', input: {} }],
        stopReason: 'aborted',
      },
      { role: 'user', content: [{ type: 'text', text: 'x'.repeat(400) }] },
      { role: 'assistant', content: [{ type: 'text', text: 'y'.repeat(400) }] },
    ];
    expect(findCutPoint(messages, 100)).toBe(3);
    expect(findCutPoint(messages, 150)).toBe(2);
  });

  it('with keepRecentTokens 0 may summarize everything', () => {
    const messages = agentTranscript(2);
    expect(findCutPoint(messages, 0)).toBe(messages.length);
  });
});
