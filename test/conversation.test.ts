import { describe, expect, it } from 'vitest';
import {
  type AssistantMessage,
  assistantText,
  describePart,
  partsToText,
  type StoredPart,
  toolCallsOf,
  userMessage,
} from '../src/conversation.js';

const image: StoredPart = {
  type: 'image',
  mediaType: 'image/png',
  data: 'iVBORw0KGgo=',
  width: 1200,
  height: 800,
};
const pdf: StoredPart = {
  type: 'document',
  mediaType: 'application/pdf',
  data: 'JVBERi0=',
  name: 'report.pdf',
};

describe('partsToText', () => {
  it('describes images and documents in prose, keeping order', () => {
    expect(partsToText([{ type: 'text', text: 'Here it is:' }, image, pdf])).toBe(
      'Here it is:\n[image: image/png 1200x800]\n[document: report.pdf]',
    );
  });

  it('names a document without a name by type and counts pages when known', () => {
    expect(describePart({ type: 'document', mediaType: 'application/pdf', data: '', pages: 3 })).toBe(
      '[document: application/pdf, 3 pages]',
    );
    expect(describePart({ ...pdf, pages: 1 })).toBe('[document: report.pdf, 1 page]');
  });

  it('never includes base64 data', () => {
    expect(partsToText([image, pdf])).not.toMatch(/iVBOR|JVBER/);
  });

  it('is empty for no parts', () => {
    expect(partsToText([])).toBe('');
  });
});

describe('messages', () => {
  it('userMessage takes text and stored parts (pictures allowed in user turns)', () => {
    expect(userMessage('look', image)).toEqual({
      role: 'user',
      content: [{ type: 'text', text: 'look' }, image],
    });
  });

  it('toolCallsOf and assistantText read an assistant message', () => {
    const msg: AssistantMessage = {
      role: 'assistant',
      content: [
        { type: 'thinking', text: 'hmm' },
        { type: 'text', text: 'Let me ' },
        { type: 'tool_call', id: 't1', name: 'read', input: { path: 'a' } },
        { type: 'text', text: 'check.' },
        { type: 'tool_call', id: 't2', name: 'ls', input: {} },
      ],
      stopReason: 'tool_use',
    };
    expect(toolCallsOf(msg).map((c) => c.id)).toEqual(['t1', 't2']);
    expect(assistantText(msg)).toBe('Let me check.');
  });
});
