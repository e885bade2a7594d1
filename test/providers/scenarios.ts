/** Conversations the serializer tests run through every surface. Media are tiny real files (media.json). */

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type {
  AssistantMessage,
  Conversation,
  DocumentPart,
  ImagePart,
  Message,
  StoredPart,
  ToolResultBlock,
} from '../../src/conversation.js';
import type { ToolDecl } from '../../src/tool.js';

const mediaFile = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'providers', 'media.json');
const media = JSON.parse(readFileSync(mediaFile, 'utf8')) as {
  png: ImagePart;
  jpeg: ImagePart;
  gif: ImagePart;
  pdf: DocumentPart;
};

export const png: ImagePart = media.png;
export const jpeg: ImagePart = media.jpeg;
export const gif: ImagePart = media.gif;
export const pdf: DocumentPart = media.pdf;

export const tools: ToolDecl[] = [
  {
    name: 'read',
    description: 'Read a file from the workspace.',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
  { name: 'screenshot', description: 'Take a screenshot.', inputSchema: { type: 'object', properties: {} } },
];

export function text(t: string): StoredPart {
  return { type: 'text', text: t };
}

export function call(
  id: string,
  name: string,
  input: Record<string, unknown>,
): AssistantMessage['content'][number] {
  return { type: 'tool_call', id, name, input };
}

export function result(
  toolUseId: string,
  toolName: string,
  parts: StoredPart[],
  isError = false,
): ToolResultBlock {
  return { type: 'tool_result', toolUseId, toolName, parts, isError, meta: { path: 'never/sent.png' } };
}

/** user → assistant calling `read` → one result with `parts`. */
function singleResult(parts: StoredPart[], isError = false): Conversation {
  return {
    messages: [
      { role: 'system', content: 'You are a careful assistant.' },
      { role: 'user', content: [text('What is in the file?')] },
      {
        role: 'assistant',
        content: [{ type: 'text', text: 'Let me look.' }, call('call_1', 'read', { path: 'a.png' })],
        stopReason: 'tool_use',
      },
      { role: 'tool', results: [result('call_1', 'read', parts, isError)] },
    ],
  };
}

export const scenarios: Record<string, () => Conversation> = {
  'text-only-result': () => singleResult([text('hello world\n')]),
  'text-and-image-result': () => singleResult([text('Read image file [image/png] 4x3'), png]),
  'image-only-result': () => singleResult([png]),
  'pdf-result': () => singleResult([text('Read PDF blank.pdf (1 page)'), pdf]),
  'error-result': () => singleResult([text('ENOENT: no such file a.png')], true),
  'several-results': () => ({
    messages: [
      { role: 'user', content: [text('Compare the three files.')] },
      {
        role: 'assistant',
        content: [
          call('call_a', 'read', { path: 'notes.txt' }),
          call('call_b', 'read', { path: 'a.png' }),
          call('call_c', 'read', { path: 'b.jpg' }),
        ],
        stopReason: 'tool_use',
      },
      {
        role: 'tool',
        results: [
          result('call_a', 'read', [text('three lines')]),
          result('call_b', 'read', [png]),
          result('call_c', 'read', [text('photo and its report'), jpeg, pdf]),
        ],
      },
      { role: 'user', content: [text('Focus on the colours.')] },
    ],
  }),
  'user-image': () => ({
    messages: [
      { role: 'user', content: [text('What colour is this, and what is in the PDF?'), png, pdf] },
      { role: 'assistant', content: [{ type: 'text', text: 'Red; the PDF is blank.' }], stopReason: 'end' },
      { role: 'user', content: [jpeg] },
    ],
  }),
};

/** Four images over three turns, oldest first: png (user), jpeg (tool), png (tool), jpeg (user). */
export function fourImages(): Conversation {
  const messages: Message[] = [
    { role: 'user', content: [text('first'), png] },
    { role: 'assistant', content: [call('c1', 'screenshot', {})], stopReason: 'tool_use' },
    { role: 'tool', results: [result('c1', 'screenshot', [text('shot 1'), jpeg])] },
    { role: 'assistant', content: [call('c2', 'screenshot', {})], stopReason: 'tool_use' },
    { role: 'tool', results: [result('c2', 'screenshot', [text('shot 2'), png])] },
    { role: 'user', content: [text('and this one'), jpeg] },
  ];
  return { messages };
}

/** Freeze `value` and everything reachable from it. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
