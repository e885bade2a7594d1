import { describe, expect, it } from 'vitest';
import type { ImagePart } from '../../src/conversation.js';
import { partDataUrl } from '../../src/providers/common/serializer-common.js';
import { toOpenAIChat } from '../../src/providers/openai-chat/openai-chat.js';
import { toOpenAIResponses } from '../../src/providers/openai-responses/openai-responses.js';
import { deepFreeze, pdf, png } from './scenarios.js';

describe('data URLs of stored parts', () => {
  it('are built once per part and reused by later requests, on Chat and Responses alike', () => {
    const image: ImagePart = { ...png };
    const conversation = deepFreeze({ messages: [{ role: 'user' as const, content: [image, { ...pdf }] }] });
    const urlOf = (body: unknown) =>
      JSON.stringify(body).match(/data:image\/png;base64,[A-Za-z0-9+/=]+/)?.[0];
    const first = toOpenAIChat(conversation, 'gpt-4.1').body;
    const again = toOpenAIResponses(conversation, 'gpt-5').body;
    expect(urlOf(first)).toBe(`data:image/png;base64,${png.data}`);
    expect(urlOf(again)).toBe(urlOf(first));
    expect(partDataUrl(image)).toBe(partDataUrl(image));
  });

  it('follow the part when its data is replaced', () => {
    const image: ImagePart = { ...png };
    expect(partDataUrl(image)).toBe(`data:image/png;base64,${png.data}`);
    image.data = 'AAAA';
    expect(partDataUrl(image)).toBe('data:image/png;base64,AAAA');
    expect(partDataUrl({ ...pdf })).toBe(`data:application/pdf;base64,${pdf.data}`);
  });
});
