import { describe, expect, it } from 'vitest';
import { contextTokens, estimateRequestTokens } from '../../src/agent/agent-compaction.js';
import type { AssistantMessage, Message, Usage } from '../../src/conversation.js';
import { resolveModel } from '../../src/providers/model/model-catalog.js';

const model = resolveModel('claude-sonnet-4-5');
const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });
const answer = (text: string, usage?: Usage): AssistantMessage => ({
  role: 'assistant',
  content: [{ type: 'text', text }],
  stopReason: 'end',
  ...(usage === undefined ? {} : { usage }),
});
const tokens = (messages: Message[], floor: number) => contextTokens(messages, floor, model, 'system', []);

describe('contextTokens', () => {
  it('is the request estimate when no answer at or after the floor reported usage', () => {
    const messages = [user('hello there'), answer('hi'), user('how are you')];
    expect(tokens(messages, 0)).toBe(estimateRequestTokens(messages, model, 'system', []));
  });

  it('counts the last reported usage (uncached + cached input + output) plus the estimate of what came after', () => {
    const later = user('x'.repeat(400));
    const messages = [
      user('q1'),
      answer('a1', { inputTokens: 1000, outputTokens: 50 }),
      user('q2'),
      answer('a2', { inputTokens: 200, cacheReadTokens: 3000, cacheWriteTokens: 100, outputTokens: 40 }),
      later,
    ];
    const after = estimateRequestTokens([later], model, undefined, []);
    expect(tokens(messages, 0)).toBe(200 + 3000 + 100 + 40 + after);
  });

  it('ignores usage on answers before the floor (they measured a context since compacted)', () => {
    const messages = [user('q1'), answer('a1', { inputTokens: 90_000, outputTokens: 50 }), user('q2')];
    expect(tokens(messages, 2)).toBe(estimateRequestTokens(messages, model, 'system', []));
    expect(tokens(messages, 1)).toBeGreaterThan(90_000);
  });

  it('skips an all-zero usage (a stream that reported none) and looks further back', () => {
    const messages = [
      user('q1'),
      answer('a1', { inputTokens: 5000, outputTokens: 10 }),
      user('q2'),
      answer('a2', { inputTokens: 0, outputTokens: 0 }),
    ];
    expect(tokens(messages, 0)).toBeGreaterThanOrEqual(5010);
  });

  it('never goes below the estimate when usage undercounts (e.g. a part left out of the request)', () => {
    const messages = [user('x'.repeat(40_000)), answer('a', { inputTokens: 10, outputTokens: 1 })];
    expect(tokens(messages, 0)).toBe(estimateRequestTokens(messages, model, 'system', []));
  });
});
