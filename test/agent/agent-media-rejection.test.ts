import { describe, expect, it } from 'vitest';
import { findRejectedMedia, mediaDataAt, normalizeRequestPath } from '../../src/agent/media-rejection.js';
import type { Message } from '../../src/conversation.js';
import type { MediaRef } from '../../src/providers/common/serialize-options.js';
import { ProviderError } from '../../src/providers/transport/provider-error.js';

const err = (status: number | undefined, providerMessage: string, param?: string) =>
  new ProviderError({
    api: 'x',
    ...(status === undefined ? {} : { status }),
    providerMessage,
    ...(param === undefined ? {} : { param }),
    retryable: false,
  });

const anthropicRefs: MediaRef[] = [
  { key: '0:0:1', type: 'image', path: 'messages[0].content[1]' },
  { key: '2:0:1', type: 'image', path: 'messages[3].content[0].content[1]' },
  { key: '2:1:0', type: 'document', path: 'messages[3].content[1].content[0]' },
];

describe('normalizeRequestPath', () => {
  it('brings every index spelling to brackets', () => {
    expect(normalizeRequestPath('messages.3.content.0.content.1.image')).toBe(
      'messages[3].content[0].content[1].image',
    );
    expect(normalizeRequestPath('messages.[3].content.[1].image_url')).toBe(
      'messages[3].content[1].image_url',
    );
    expect(normalizeRequestPath('messages.3.content.0.tool_result.content.1')).toBe(
      'messages[3].content[0].content[1]',
    );
    expect(normalizeRequestPath('contents.4.parts.0.function_response.parts.1')).toBe(
      'contents[4].parts[0].functionResponse.parts[1]',
    );
    expect(normalizeRequestPath('5 MB maximum: 7082596 bytes > 5242880 bytes')).toBe(
      '5 MB maximum: 7082596 bytes > 5242880 bytes',
    );
  });
});

describe('findRejectedMedia', () => {
  it('finds the part an Anthropic path names (longest match, not a prefix sibling)', () => {
    const e = err(400, 'messages.3.content.0.content.1.image.source.base64: image exceeds 5 MB maximum');
    expect(findRejectedMedia(e, anthropicRefs)?.key).toBe('2:0:1');
    const user = err(400, 'messages.0.content.1.image.source.base64.data: Could not process image');
    expect(findRejectedMedia(user, anthropicRefs)?.key).toBe('0:0:1');
    const notTen = err(400, 'messages.0.content.10.image: bad');
    expect(findRejectedMedia(notTen, anthropicRefs)).toBeUndefined();
  });

  it('reads the OpenAI param and Responses paths', () => {
    const refs: MediaRef[] = [
      { key: '1:0:0', type: 'image', path: 'messages[2].content[1]' },
      { key: '3:0:0', type: 'image', path: 'messages[5].content[1]' },
    ];
    expect(
      findRejectedMedia(err(400, 'Invalid image.', 'messages.[5].content.[1].image_url'), refs)?.key,
    ).toBe('3:0:0');
    const responses: MediaRef[] = [{ key: '2:0:1', type: 'image', path: 'input[3].output[1]' }];
    expect(findRejectedMedia(err(400, "Invalid 'input[3].output[1].image_url'."), responses)?.key).toBe(
      '2:0:1',
    );
  });

  it('without a path, blames the only part of the kind the message is about', () => {
    const one: MediaRef[] = [
      { key: '1:0:0', type: 'image', path: 'contents[1].parts[0]' },
      { key: '1:0:1', type: 'document', path: 'contents[1].parts[1]' },
    ];
    expect(findRejectedMedia(err(400, 'Unable to process input image.'), one)?.key).toBe('1:0:0');
    expect(findRejectedMedia(err(400, 'The document has no pages.'), one)?.key).toBe('1:0:1');
    const two = [...one, { key: '2:0:0', type: 'image' as const, path: 'contents[2].parts[0]' }];
    expect(findRejectedMedia(err(400, 'Unable to process input image.'), two)).toBeUndefined();
  });

  it('never blames media for auth, rate-limit or server errors', () => {
    const e = (s: number) => err(s, 'messages.0.content.1.image: whatever');
    for (const s of [401, 403, 429, 500, 529]) expect(findRejectedMedia(e(s), anthropicRefs)).toBeUndefined();
    expect(findRejectedMedia(err(400, 'max_tokens: too large'), anthropicRefs)).toBeUndefined();
  });
});

describe('mediaDataAt', () => {
  const messages: Message[] = [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'look' },
        { type: 'image', mediaType: 'image/png', data: 'USERIMG', width: 1, height: 1 },
      ],
    },
    { role: 'assistant', content: [] },
    {
      role: 'tool',
      results: [
        {
          type: 'tool_result',
          toolUseId: 'a',
          toolName: 'read',
          parts: [{ type: 'text', text: 'x' }],
          isError: false,
        },
        {
          type: 'tool_result',
          toolUseId: 'b',
          toolName: 'read',
          parts: [{ type: 'document', mediaType: 'application/pdf', data: 'TOOLPDF' }],
          isError: false,
        },
      ],
    },
  ];
  const at = (key: string) => mediaDataAt(messages, { key, type: 'image', path: '' });

  it('reads a user part and a tool-result part by key', () => {
    expect(at('0:0:1')).toBe('USERIMG');
    expect(at('2:1:0')).toBe('TOOLPDF');
  });

  it('is undefined for a text part or a key that points nowhere', () => {
    expect(at('0:0:0')).toBeUndefined();
    expect(at('1:0:0')).toBeUndefined();
    expect(at('9:0:0')).toBeUndefined();
    expect(at('garbage')).toBeUndefined();
  });
});
