/** A conversation holding every message kind, block kind and part kind the session must round-trip. */

import type { Message } from '../../../src/conversation.js';
import { pdfBase64, pngBase64 } from './media.js';

export function everyKindOfMessage(): Message[] {
  const shot = pngBase64(64, 40, 1);
  return [
    { role: 'system', content: 'You are a careful assistant. Ünïcödé ✓' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is in this picture and this report? 日本語 🙂' },
        { type: 'image', mediaType: 'image/png', data: pngBase64(32, 16, 2), width: 32, height: 16 },
        {
          type: 'document',
          mediaType: 'application/pdf',
          data: pdfBase64('user'),
          name: 'report.pdf',
          pages: 1,
        },
      ],
    },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', text: 'Need to look at the file.', signature: 'sig-abc' },
        { type: 'thinking', text: '', signature: 'opaque', redacted: true },
        { type: 'text', text: 'Let me read it.' },
        {
          type: 'tool_call',
          id: 'call_1',
          name: 'read',
          input: { path: 'shot.png', nested: { a: [1, 2.5, null, true, 'x'] } },
          providerData: { thoughtSignature: 'ts-1' },
        },
        { type: 'tool_call', id: 'call_2', name: 'read', input: { path: 'doc.pdf' } },
      ],
      stopReason: 'tool_use',
      usage: { inputTokens: 120, outputTokens: 30, cacheReadTokens: 5, cacheWriteTokens: 7 },
      model: 'test-model-1',
    },
    {
      role: 'tool',
      results: [
        {
          type: 'tool_result',
          toolUseId: 'call_1',
          toolName: 'read',
          parts: [
            { type: 'text', text: 'Read image file [image/png]' },
            { type: 'image', mediaType: 'image/png', data: shot, width: 64, height: 40 },
          ],
          isError: false,
          meta: { path: 'shot.png', bytes: 1234, tags: ['a', 'b'], empty: {} },
        },
        {
          type: 'tool_result',
          toolUseId: 'call_2',
          toolName: 'read',
          parts: [
            { type: 'document', mediaType: 'application/pdf', data: pdfBase64('tool'), name: 'doc.pdf' },
          ],
          isError: false,
        },
      ],
    },
    {
      role: 'assistant',
      content: [{ type: 'tool_call', id: 'call_3', name: 'grep', input: {} }],
      stopReason: 'tool_use',
    },
    {
      role: 'tool',
      results: [
        {
          type: 'tool_result',
          toolUseId: 'call_3',
          toolName: 'grep',
          parts: [{ type: 'text', text: 'error: pattern is required' }],
          isError: true,
        },
      ],
    },
    { role: 'assistant', content: [], stopReason: 'error', errorMessage: 'HTTP 529 overloaded' },
    {
      role: 'user',
      content: [
        { type: 'image', mediaType: 'image/png', data: pngBase64(300, 200, 3), width: 300, height: 200 },
        { type: 'text', text: 'and one more' },
      ],
    },
    { role: 'assistant', content: [{ type: 'text', text: 'Done.' }], stopReason: 'end' },
  ];
}
