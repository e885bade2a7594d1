/**
 * The conversations every serializer's output is validated over: plain text, parallel tool calls, images, several
 * images + a PDF, user attachments, history from other providers (odd and over-long call ids, their thinking and
 * signatures), same-provider reasoning echo, edge cases (missing / orphan / empty results, aborted turns, whitespace
 * text, document names) and a long history. Media are the tiny real files of test/fixtures/providers/media.json.
 */

import type {
  AssistantMessage,
  Conversation,
  Message,
  StoredPart,
  ToolResultBlock,
} from '../../src/conversation.js';
import { reasoningSignature } from '../../src/providers/openai-responses/openai-responses-response.js';
import { gif, jpeg, pdf, png } from '../providers/scenarios.js';

const text = (t: string): StoredPart => ({ type: 'text', text: t });

function call(
  id: string,
  name: string,
  input: Record<string, unknown> = {},
): AssistantMessage['content'][number] {
  return { type: 'tool_call', id, name, input };
}

function result(toolUseId: string, parts: StoredPart[], isError = false, toolName = 'read'): ToolResultBlock {
  return { type: 'tool_result', toolUseId, toolName, parts, isError, meta: { path: 'never/sent' } };
}

function assistant(
  content: AssistantMessage['content'],
  model?: string,
  stop: AssistantMessage['stopReason'] = 'tool_use',
) {
  const m: AssistantMessage = { role: 'assistant', content, stopReason: stop };
  if (model !== undefined) m.model = model;
  return m;
}

const user = (...parts: StoredPart[]): Message => ({ role: 'user', content: parts });

const LONG_ID = `toolu_01${'A'.repeat(40)}|fc_${'b'.repeat(40)}`;

export const conversations: Record<string, () => Conversation> = {
  text: () => ({
    messages: [
      { role: 'system', content: 'Answer briefly.' },
      user(text('Hello there.')),
      assistant([{ type: 'text', text: 'Hi! How can I help?' }], undefined, 'end'),
      user(text('Summarise our chat.')),
    ],
  }),

  'parallel-tool-calls': () => ({
    messages: [
      user(text('Read three files.')),
      assistant([
        { type: 'text', text: 'Reading them in parallel.' },
        call('call_a', 'read', { path: 'a.txt' }),
        call('call_b', 'read', { path: 'b.txt' }),
        call('call_c', 'read', { path: 'missing.txt' }),
      ]),
      {
        role: 'tool',
        results: [
          result('call_a', [text('alpha')]),
          result('call_b', []),
          result('call_c', [text('ENOENT: missing.txt')], true),
        ],
      },
    ],
  }),

  images: () => ({
    messages: [
      user(text('Take screenshots.')),
      assistant([call('s1', 'screenshot'), call('s2', 'screenshot')]),
      {
        role: 'tool',
        results: [
          result('s1', [text('Screenshot 4x3'), png], false, 'screenshot'),
          result('s2', [jpeg, gif], false, 'screenshot'),
        ],
      },
    ],
  }),

  'several-images-and-pdf': () => ({
    messages: [
      user(text('Compare the files.')),
      assistant([call('r1', 'read', { path: 'bundle' })]),
      { role: 'tool', results: [result('r1', [text('three images and a report'), png, jpeg, png, pdf])] },
      user(text('And this one?'), jpeg, pdf),
    ],
  }),

  'user-attachments': () => ({
    messages: [
      user(text('What is in these?'), png, jpeg, { ...pdf, name: '' }),
      assistant([{ type: 'text', text: 'Two pictures and a blank page.' }], undefined, 'end'),
      user({ ...pdf, name: `${'quarterly-report-'.repeat(40)}.pdf` }, text('And this long-named one?')),
    ],
  }),

  'foreign-history': () => ({
    messages: [
      user(text('Start with Claude.')),
      assistant(
        [
          {
            type: 'thinking',
            text: 'I should read it.',
            signature: 'EqQBCkYIBxgCKkBhbnRocm9waWMtc2lnbmF0dXJl',
          },
          { type: 'text', text: '\n\n' },
          call(LONG_ID, 'read', { path: 'a.png' }),
        ],
        'claude-sonnet-4-5',
      ),
      { role: 'tool', results: [result(LONG_ID, [text(' \n'), png])] },
      assistant(
        [
          { type: 'thinking', text: 'Kimi reasoning' },
          call('functions.read:0', 'read', { path: 'b.txt' }),
          call('functions.read:1', 'read', { path: 'c.txt' }),
        ],
        'kimi-k2',
      ),
      {
        role: 'tool',
        results: [result('functions.read:0', [text('bee')]), result('functions.read:1', [text('sea')])],
      },
      assistant(
        [
          {
            type: 'thinking',
            text: 'Gemini thought',
            signature: 'Cs8BAdHtim9nZW1pbmktdGhvdWdodA==',
          },
          {
            type: 'tool_call',
            id: 'gemini_resp1_1',
            name: 'read',
            input: { path: 'd.txt' },
            providerData: { thoughtSignature: 'CiQBcsjaZ2VtaW5pLWNhbGw=', syntheticId: true },
          },
        ],
        'gemini-2.5-pro',
      ),
      { role: 'tool', results: [result('gemini_resp1_1', [text('dee')])] },
      assistant(
        [
          {
            type: 'thinking',
            text: 'Summary of reasoning',
            signature: reasoningSignature('rs_0123', 'gAAAAencrypted'),
          },
          call('call_resp|fc_0123', 'read', { path: 'e.txt' }),
        ],
        'gpt-5',
      ),
      { role: 'tool', results: [result('call_resp|fc_0123', [text('ee')])] },
      user(text(' ')),
      user(text('Now continue.')),
    ],
  }),

  'same-api-reasoning': () => ({
    messages: [
      user(text('Think, then act.')),
      assistant([
        { type: 'thinking', text: 'Plan: read.', signature: 'EpYBCkQIBxgCKkBzYW1lLWFwaQ==' },
        { type: 'thinking', text: '', signature: 'RXJlZGFjdGVk', redacted: true },
        { type: 'thinking', text: 'Step one.', signature: reasoningSignature('rs_1', 'gAAAA==') },
        { type: 'text', text: 'Reading.' },
        {
          type: 'tool_call',
          id: 'c1',
          name: 'read',
          input: { path: 'x' },
          providerData: { thoughtSignature: 'CiQBdGhvdWdodA==' },
        },
      ]),
      { role: 'tool', results: [result('c1', [text('x contents')])] },
    ],
  }),

  'edge-cases': () => ({
    messages: [
      { role: 'system', content: 'First system note.' },
      user(text('go')),
      assistant([call('lost', 'read', { path: 'a' }), call('kept', 'read', { path: 'b' })]),
      { role: 'tool', results: [result('kept', [text('b!')]), result('stray', [text('orphan')])] },
      { role: 'system', content: 'A system note mid-conversation.' },
      assistant([call('aborted_call', 'read', { path: 'c' })], undefined, 'aborted'),
      { role: 'tool', results: [result('aborted_call', [text('never sent')])] },
      assistant([{ type: 'text', text: '   ' }], undefined, 'end'),
      user(text('done?'), text('')),
    ],
  }),

  'long-history': () => {
    const messages: Message[] = [user(text('Work through the list.'))];
    for (let i = 0; i < 40; i++) {
      const id = `call_${i}`;
      messages.push(
        assistant([
          { type: 'text', text: `Step ${i}.` },
          call(id, i % 3 === 0 ? 'screenshot' : 'read', { i }),
        ]),
      );
      const parts: StoredPart[] =
        i % 3 === 0 ? [text(`shot ${i}`), i % 2 ? jpeg : png] : [text(`line ${i}\n`.repeat(5))];
      messages.push({
        role: 'tool',
        results: [result(id, parts, i % 7 === 0, i % 3 === 0 ? 'screenshot' : 'read')],
      });
      if (i % 10 === 9) messages.push(user(text(`Checkpoint ${i}`)));
    }
    messages.push(assistant([{ type: 'text', text: 'All done.' }], undefined, 'end'));
    return { messages };
  },
};
