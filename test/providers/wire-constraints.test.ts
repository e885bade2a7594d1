/**
 * Field constraints of the published request schemas that real histories break (issue 14): Responses call-id length,
 * document titles and file names, Anthropic whitespace-only text blocks.
 */

import { describe, expect, it } from 'vitest';
import type { Conversation, DocumentPart } from '../../src/conversation.js';
import { toAnthropicMessages } from '../../src/providers/anthropic-messages/anthropic-messages.js';
import { documentName } from '../../src/providers/common/serializer-common.js';
import { resolveModel } from '../../src/providers/model/model-catalog.js';
import { toOpenAIChat } from '../../src/providers/openai-chat/openai-chat.js';
import { toOpenAIResponses } from '../../src/providers/openai-responses/openai-responses.js';
import { call, pdf, png, result, text } from './scenarios.js';

/** user → assistant calling `read` with `id` → its result `parts`. */
function oneCall(id: string, parts = [text('ok')]): Conversation {
  return {
    messages: [
      { role: 'user', content: [text('go')] },
      { role: 'assistant', content: [call(id, 'read', { path: 'a' })], stopReason: 'tool_use' },
      { role: 'tool', results: [result(id, 'read', parts)] },
    ],
  };
}

describe('OpenAI Responses call ids', () => {
  it('an id over 64 characters is mapped to one of 64, the same on the call and on its output', () => {
    const long = `toolu_${'x'.repeat(40)}|fc_${'y'.repeat(40)}`;
    const input = toOpenAIResponses(oneCall(long), 'gpt-5').body.input;
    const fnCall = input.find((i) => i.type === 'function_call');
    const output = input.find((i) => i.type === 'function_call_output');
    expect(fnCall?.type === 'function_call' && fnCall.call_id.length).toBe(64);
    expect(output?.type === 'function_call_output' && output.call_id).toBe(
      fnCall?.type === 'function_call' && fnCall.call_id,
    );
  });

  it('two long ids that share their first 64 characters stay distinct; short ids are unchanged', () => {
    const head = 'call_'.padEnd(70, 'z');
    const conversation: Conversation = {
      messages: [
        { role: 'user', content: [text('go')] },
        {
          role: 'assistant',
          content: [
            call(`${head}1`, 'read', {}),
            call(`${head}2`, 'read', {}),
            call('call_short', 'read', {}),
          ],
          stopReason: 'tool_use',
        },
        {
          role: 'tool',
          results: [
            result(`${head}1`, 'read', [text('a')]),
            result(`${head}2`, 'read', [text('b')]),
            result('call_short', 'read', [text('c')]),
          ],
        },
      ],
    };
    const ids = toOpenAIResponses(conversation, 'gpt-5')
      .body.input.filter((i) => i.type === 'function_call_output')
      .map((i) => (i.type === 'function_call_output' ? i.call_id : ''));
    expect(new Set(ids).size).toBe(3);
    expect(ids[2]).toBe('call_short');
    expect(ids.every((id) => id.length <= 64)).toBe(true);
  });
});

describe('document names on the wire', () => {
  const withPdf = (name: string | undefined): Conversation => {
    const doc: DocumentPart = { ...pdf };
    if (name === undefined) delete doc.name;
    else doc.name = name;
    return { messages: [{ role: 'user', content: [text('read this'), doc] }] };
  };

  it('Anthropic: an empty or blank name sends no title (the API wants 1–500 characters)', () => {
    for (const name of ['', '   ']) {
      const block = toAnthropicMessages(withPdf(name), 'claude-sonnet-4-5').body.messages[0]?.content[1];
      expect(block?.type).toBe('document');
      expect(block && 'title' in block).toBe(false);
    }
  });

  it('Anthropic: a 697-character name is shortened to 500, keeping its extension', () => {
    const name = `${'report-'.repeat(99)}.pdf`;
    expect(name.length).toBe(697);
    const block = toAnthropicMessages(withPdf(name), 'claude-sonnet-4-5').body.messages[0]?.content[1];
    const title = block?.type === 'document' ? block.title : undefined;
    expect(title?.length).toBe(500);
    expect(title?.endsWith('….pdf')).toBe(true);
    expect(title?.startsWith('report-report-')).toBe(true);
  });

  it('OpenAI Chat and Responses: an empty name becomes document.pdf', () => {
    const chat = toOpenAIChat(withPdf(''), 'gpt-4.1').body.messages[0];
    expect(JSON.stringify(chat)).toContain('"filename":"document.pdf"');
    const responses = toOpenAIResponses(withPdf(' '), 'gpt-5').body.input[0];
    expect(JSON.stringify(responses)).toContain('"filename":"document.pdf"');
  });

  it('never splits a surrogate pair when shortening', () => {
    const name = `${'🐱'.repeat(300)}.pdf`;
    const short = documentName(name, 500) as string;
    expect(short.length).toBeLessThanOrEqual(500);
    expect(Buffer.from(short, 'utf8').toString('utf8')).toBe(short);
    expect(short.endsWith('….pdf')).toBe(true);
    expect(documentName('a.pdf', 500)).toBe('a.pdf');
    expect(documentName(undefined, 500)).toBeUndefined();
  });
});

describe('Anthropic whitespace-only text', () => {
  it('drops whitespace-only text blocks from assistant, user and tool-result content', () => {
    const conversation: Conversation = {
      messages: [
        { role: 'user', content: [text('look'), text(' ')] },
        {
          role: 'assistant',
          content: [{ type: 'text', text: '\n\n' }, call('c1', 'read', { path: 'a' })],
          stopReason: 'tool_use',
        },
        { role: 'tool', results: [result('c1', 'read', [text(' \n'), png])] },
        { role: 'user', content: [text(' ')] },
      ],
    };
    const body = toAnthropicMessages(conversation, 'claude-sonnet-4-5').body;
    const texts: string[] = [];
    JSON.stringify(body, (key, value) => {
      if (key === 'text' && typeof value === 'string') texts.push(value);
      return value;
    });
    expect(texts.every((t) => /\S/.test(t))).toBe(true);
    expect(body.messages[0]?.content).toEqual([{ type: 'text', text: 'look' }]);
    expect(body.messages[1]?.content.map((b) => b.type)).toEqual(['tool_use']);
    const toolResult = body.messages[2]?.content[0];
    expect(toolResult?.type === 'tool_result' && toolResult.content.map((b) => b.type)).toEqual(['image']);
  });

  it('a tool result whose only text is whitespace says (no output)', () => {
    const body = toAnthropicMessages(oneCall('c1', [text(' \n')]), 'claude-sonnet-4-5').body;
    const toolResult = body.messages[2]?.content[0];
    expect(toolResult?.type === 'tool_result' && toolResult.content).toEqual([
      { type: 'text', text: '(no output)' },
    ]);
  });
});

describe('OpenAI Chat image detail', () => {
  it("rejects 'original' (a Responses-only value the Chat schema does not list) with a typed error", () => {
    const conversation: Conversation = { messages: [{ role: 'user', content: [text('see'), png] }] };
    expect(() => toOpenAIChat(conversation, 'gpt-4.1', { imageDetail: 'original' as never })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }),
    );
    const body = toOpenAIChat(conversation, resolveModel('gpt-4.1', { api: 'openai-chat' }), {
      imageDetail: 'high',
    });
    expect(JSON.stringify(body.body)).toContain('"detail":"high"');
  });
});
