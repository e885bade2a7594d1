/** Realistic agent transcripts for cut-point and compaction tests: user turns, tool calls, tool results with images. */

import type { Message } from '../../../src/conversation.js';
import { pngFile } from '../../helpers/png-file.js';

/** A real 1200x800 screenshot (black: a few KB), so its header says what the part claims. */
const shot = pngFile(1200, 800, 2, new Uint8Array((1200 * 3 + 1) * 800)).toString('base64');

/**
 * `turns` user turns; turn i has (i % 3) assistant tool-call rounds with (1 + i % 2) parallel calls each, every
 * call answered (some with an image), then a final assistant text.
 */
export function agentTranscript(turns: number, textChars = 400): Message[] {
  const messages: Message[] = [{ role: 'system', content: 'You are a coding agent.' }];
  let call = 0;
  for (let t = 0; t < turns; t++) {
    messages.push({ role: 'user', content: [{ type: 'text', text: `turn ${t}: ${'u'.repeat(textChars)}` }] });
    for (let r = 0; r < t % 3; r++) {
      const ids = Array.from({ length: 1 + (t % 2) }, () => `call_${call++}`);
      messages.push({
        role: 'assistant',
        content: [
          { type: 'text', text: 'a'.repeat(textChars / 4) },
          ...ids.map((id) => ({
            type: 'tool_call' as const,
            id,
            name: 'read',
            input: { path: `${id}.png` },
          })),
        ],
        stopReason: 'tool_use',
      });
      messages.push({
        role: 'tool',
        results: ids.map((id, k) => ({
          type: 'tool_result' as const,
          toolUseId: id,
          toolName: 'read',
          parts:
            k === 0
              ? [
                  { type: 'text' as const, text: 'r'.repeat(textChars) },
                  {
                    type: 'image' as const,
                    mediaType: 'image/png' as const,
                    data: shot,
                    width: 1200,
                    height: 800,
                  },
                ]
              : [{ type: 'text' as const, text: 'r'.repeat(textChars) }],
          isError: false,
          meta: { path: `${id}.png` },
        })),
      });
    }
    messages.push({ role: 'assistant', content: [{ type: 'text', text: `answer ${t}` }], stopReason: 'end' });
  }
  return messages;
}
