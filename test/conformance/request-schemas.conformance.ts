/**
 * Every serializer's body, for every conversation in conversations.ts and a spread of models and options, validates
 * against the provider's published request schema — both the body the serializer returns and the streaming body the
 * transport sends. Schema files named `<family>.<anything>.schema.json` placed beside the published ones (a newer
 * version) are checked the same way (docs/conformance.md).
 */

import { basename } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Conversation, DocumentPart, ImagePart } from '../../src/conversation.js';
import { toAnthropicMessages } from '../../src/providers/anthropic-messages/anthropic-messages.js';
import { type FileRef, mediaSha256 } from '../../src/providers/common/media-files.js';
import { toGemini } from '../../src/providers/gemini/gemini.js';
import { defineModel, resolveModel } from '../../src/providers/model/model-catalog.js';
import type { ModelApi, ModelInfo } from '../../src/providers/model/model-info.js';
import { toOpenAIChat } from '../../src/providers/openai-chat/openai-chat.js';
import { toOpenAIResponses } from '../../src/providers/openai-responses/openai-responses.js';
import { ENDPOINTS } from '../../src/providers/transport/endpoints.js';
import { tools } from '../providers/scenarios.js';
import { conversations } from './conversations.js';
import { applySchemaAdditions, SCHEMA_ADDITIONS, type SchemaAddition } from './schema-additions.js';
import { type BodyValidator, compileValidator } from './schema-validator.js';
import { readJson, schemaFiles } from './wire-fixtures.js';

type Family = 'openai' | 'anthropic' | 'gemini';

interface Config {
  api: ModelApi;
  label: string;
  model: ModelInfo;
  serialize: (conversation: Conversation, model: ModelInfo) => { body: unknown };
}

const common = { tools, system: 'Be careful with files.', maxTokens: 1024, temperature: 0.2 };

/** Every image/PDF of `c` as an uploaded file (`SerializeOptions.files`), ids shaped as each API mints them. */
function uploaded(c: Conversation): Map<string, FileRef> {
  const out = new Map<string, FileRef>();
  const add = (p: { type: string }) => {
    if (p.type !== 'image' && p.type !== 'document') return;
    const sha = mediaSha256(p as ImagePart | DocumentPart);
    const n = out.size;
    out.set(sha, {
      id: `file_011CNha8iCJcU1wXNR6q4V${n}`,
      uri: `https://generativelanguage.googleapis.com/v1beta/files/abc${n}def`,
    });
  };
  for (const m of c.messages) {
    if (m.role === 'user' && Array.isArray(m.content)) for (const p of m.content) add(p);
    if (m.role === 'tool') for (const r of m.results) for (const p of r.parts) add(p);
  }
  return out;
}

/** A body that sends media must reference a file: a serializer that ignored `files` fails here, not silently. */
function referencing<B extends { body: unknown; media: Array<{ file?: string }> }>(out: B): B {
  const inline = out.media.filter((m) => m.file === undefined);
  if (inline.length > 0) throw new Error(`${inline.length} media parts sent inline despite uploaded files`);
  return out;
}

/** Chat Completions: every PDF must be a file reference, every image inline (`image_url` takes no file id). */
function referencingPdfs<B extends { body: unknown; media: Array<{ type: string; file?: string }> }>(
  out: B,
): B {
  const wrong = out.media.filter((m) => (m.type === 'document') !== (m.file !== undefined));
  if (wrong.length > 0) throw new Error(`${wrong.length} media parts referenced or inlined against the rule`);
  return out;
}

const CONFIGS: Config[] = [
  {
    api: 'anthropic-messages',
    label: 'claude-sonnet-4-5, tools + system + limits',
    model: resolveModel('claude-sonnet-4-5'),
    serialize: (c, m) => toAnthropicMessages(c, m, common),
  },
  {
    api: 'anthropic-messages',
    label: 'claude-opus-4-1, cache breakpoint',
    model: resolveModel('claude-opus-4-1'),
    serialize: (c, m) => toAnthropicMessages(c, m, { cacheControl: true }),
  },
  {
    api: 'anthropic-messages',
    label: 'claude-haiku-4-5, 1h cache + tools',
    model: resolveModel('claude-haiku-4-5'),
    serialize: (c, m) => toAnthropicMessages(c, m, { tools, cacheControl: { ttl: '1h' } }),
  },
  {
    api: 'anthropic-messages',
    label: 'claude-sonnet-4-5, thinking high + prompt cache',
    model: resolveModel('claude-sonnet-4-5'),
    serialize: (c, m) => toAnthropicMessages(c, m, { ...common, thinking: 'high', promptCache: true }),
  },
  {
    api: 'anthropic-messages',
    label: 'claude-opus-4-1, thinking low + 1h prompt cache, small max_tokens',
    model: resolveModel('claude-opus-4-1'),
    serialize: (c, m) =>
      toAnthropicMessages(c, m, {
        system: 'x',
        maxTokens: 1500,
        thinking: 'low',
        promptCache: { ttl: '1h' },
      }),
  },
  {
    api: 'anthropic-messages',
    label: 'text-only model (placeholders)',
    model: defineModel({ id: 'claude-text-only', api: 'anthropic-messages' }),
    serialize: (c, m) => toAnthropicMessages(c, m, { tools }),
  },
  {
    api: 'anthropic-messages',
    label: 'claude-sonnet-4-5, every image/PDF an uploaded file (source.type file)',
    model: resolveModel('claude-sonnet-4-5'),
    serialize: (c, m) => referencing(toAnthropicMessages(c, m, { ...common, files: uploaded(c) })),
  },
  {
    api: 'openai-chat',
    label: 'gpt-4.1, tools + system + limits + detail high',
    model: resolveModel('gpt-4.1', { api: 'openai-chat' }),
    serialize: (c, m) => toOpenAIChat(c, m, { ...common, imageDetail: 'high' }),
  },
  {
    api: 'openai-chat',
    label: 'gpt-4.1, every PDF an uploaded file (file.file_id), images inline',
    model: resolveModel('gpt-4.1', { api: 'openai-chat' }),
    serialize: (c, m) => referencingPdfs(toOpenAIChat(c, m, { ...common, files: uploaded(c) })),
  },
  {
    api: 'openai-chat',
    label: 'gpt-4o, max_tokens field',
    model: resolveModel('gpt-4o', { api: 'openai-chat' }),
    serialize: (c, m) =>
      toOpenAIChat(c, m, { maxTokens: 500, maxTokensField: 'max_tokens', imageDetail: 'low' }),
  },
  {
    api: 'openai-chat',
    label: 'gpt-5, thinking low + prompt cache',
    model: resolveModel('gpt-5', { api: 'openai-chat' }),
    serialize: (c, m) => toOpenAIChat(c, m, { tools, thinking: 'low', promptCache: true }),
  },
  {
    api: 'openai-chat',
    label: 'o3-mini (text only)',
    model: resolveModel('o3-mini', { api: 'openai-chat' }),
    serialize: (c, m) => toOpenAIChat(c, m, { tools }),
  },
  {
    api: 'openai-chat',
    label: 'unknown compatible model (text only)',
    model: resolveModel('llama-3.3-70b-versatile', { api: 'openai-chat' }),
    serialize: (c, m) => toOpenAIChat(c, m, { tools, temperature: 0 }),
  },
  {
    api: 'openai-responses',
    label: 'gpt-5, tools + system + limits, store false',
    model: resolveModel('gpt-5'),
    serialize: (c, m) => toOpenAIResponses(c, m, { ...common, store: false }),
  },
  {
    api: 'openai-responses',
    label: 'gpt-5-mini, detail original',
    model: resolveModel('gpt-5-mini'),
    serialize: (c, m) => toOpenAIResponses(c, m, { imageDetail: 'original' }),
  },
  {
    api: 'openai-responses',
    label: 'gpt-5, thinking high + prompt cache, store false',
    model: resolveModel('gpt-5'),
    serialize: (c, m) =>
      toOpenAIResponses(c, m, { ...common, thinking: 'high', promptCache: true, store: false }),
  },
  {
    api: 'openai-responses',
    label: 'gpt-5, every image/PDF an uploaded file (file_id)',
    model: resolveModel('gpt-5'),
    serialize: (c, m) => referencing(toOpenAIResponses(c, m, { ...common, files: uploaded(c) })),
  },
  {
    api: 'openai-responses',
    label: 'o3-mini (text only)',
    model: resolveModel('o3-mini'),
    serialize: (c, m) => toOpenAIResponses(c, m, { tools }),
  },
  {
    api: 'gemini',
    label: 'gemini-2.5-flash, every image/PDF an uploaded file (fileData)',
    model: resolveModel('gemini-2.5-flash'),
    serialize: (c, m) => referencing(toGemini(c, m, { ...common, files: uploaded(c) })),
  },
  {
    api: 'gemini',
    label: 'gemini-3-pro-preview, uploaded files (user turns; tool results inline)',
    model: resolveModel('gemini-3-pro-preview'),
    serialize: (c, m) => toGemini(c, m, { ...common, files: uploaded(c) }),
  },
  {
    api: 'gemini',
    label: 'gemini-2.5-flash, tools + system + limits',
    model: resolveModel('gemini-2.5-flash'),
    serialize: (c, m) => toGemini(c, m, common),
  },
  {
    api: 'gemini',
    label: 'gemini-2.5-flash, same-content tool media',
    model: resolveModel('gemini-2.5-flash'),
    serialize: (c, m) => toGemini(c, m, { legacyToolMedia: 'same-content' }),
  },
  {
    api: 'gemini',
    label: 'gemini-3-pro-preview, tools',
    model: resolveModel('gemini-3-pro-preview'),
    serialize: (c, m) => toGemini(c, m, { tools }),
  },
  {
    api: 'gemini',
    label: 'gemini-2.5-flash, thinking medium',
    model: resolveModel('gemini-2.5-flash'),
    serialize: (c, m) => toGemini(c, m, { thinking: 'medium', promptCache: true }),
  },
  {
    api: 'gemini',
    label: 'gemini-3-pro-preview, thinking high + tools',
    model: resolveModel('gemini-3-pro-preview'),
    serialize: (c, m) => toGemini(c, m, { ...common, thinking: 'high' }),
  },
  {
    api: 'gemini',
    label: 'gemini-2.0-flash',
    model: resolveModel('gemini-2.0-flash'),
    serialize: (c, m) => toGemini(c, m, { maxTokens: 100 }),
  },
];

const FAMILY: Record<ModelApi, Family> = {
  'anthropic-messages': 'anthropic',
  'openai-chat': 'openai',
  'openai-responses': 'openai',
  gemini: 'gemini',
};

const ROOT: Record<ModelApi, string> = {
  'anthropic-messages': 'CreateMessageParams',
  'openai-chat': 'CreateChatCompletionRequest',
  'openai-responses': 'CreateResponse',
  gemini: 'GenerateContentRequest',
};

/** Additions applied, per schema file (printed once). */
const applied = new Map<string, SchemaAddition[]>();

function validatorsFor(api: ModelApi): BodyValidator[] {
  return schemaFiles(FAMILY[api]).map((file) => {
    const doc = readJson(file) as Record<string, unknown>;
    applied.set(basename(file), applySchemaAdditions(FAMILY[api], doc));
    return compileValidator(file, doc, ROOT[api], {
      closeUnknownKeys: FAMILY[api] === 'openai',
      proto3Bytes: FAMILY[api] === 'gemini',
    });
  });
}

const validators = new Map<ModelApi, BodyValidator[]>(
  (['anthropic-messages', 'openai-chat', 'openai-responses', 'gemini'] as const).map((api) => [
    api,
    validatorsFor(api),
  ]),
);

describe('schema additions (fields the API takes that a schema file predates; schema-additions.ts)', () => {
  it('lists each addition applied, with its evidence', () => {
    const lines = [...applied].flatMap(([file, list]) =>
      list.map((a) => `${file}: ${a.schema}.${[...a.path, a.key].join('.')} — ${a.evidence}`),
    );
    console.log(
      lines.length > 0 ? `schema additions applied:\n  ${lines.join('\n  ')}` : 'no schema additions needed',
    );
    // Each addition must still be needed: some body of the matrix sends the key.
    for (const a of SCHEMA_ADDITIONS) {
      const bodies = CONFIGS.filter((c) => FAMILY[c.api] === a.family).map((c) =>
        JSON.stringify(c.serialize(conversations.text?.() as Conversation, c.model).body),
      );
      expect(
        bodies.some((b) => b.includes(`"${a.key}":`)),
        `${a.key} is sent by no serializer`,
      ).toBe(true);
    }
  });
});

describe('the validators reject what the APIs reject (controls)', () => {
  const first = (api: ModelApi) => validators.get(api)?.[0] as BodyValidator;

  it('OpenAI: a key the spec does not list is an error, at the top and deep inside', () => {
    const chat = { model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }] };
    expect(first('openai-chat').check(chat)).toEqual([]);
    expect(
      first('openai-chat')
        .check({ ...chat, reasoning: { effort: 'low' } })
        .join('\n'),
    ).toContain("unknown key 'reasoning'");
    const deep = {
      ...chat,
      messages: [{ role: 'user', content: 'hi', cache_control: { type: 'ephemeral' } }],
    };
    expect(first('openai-chat').check(deep).join('\n')).toContain("unknown key 'cache_control'");
    const responses = {
      model: 'gpt-5',
      input: [{ type: 'function_call_output', call_id: 'x'.repeat(65), output: 'ok' }],
    };
    expect(first('openai-responses').check(responses)).not.toEqual([]);
  });

  it('Anthropic: an empty document title and an unknown key are errors', () => {
    const doc = {
      type: 'document',
      source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' },
    };
    const body = (block: unknown) => ({
      model: 'claude-sonnet-4-5',
      max_tokens: 10,
      messages: [{ role: 'user', content: [block] }],
    });
    expect(first('anthropic-messages').check(body(doc))).toEqual([]);
    expect(first('anthropic-messages').check(body({ ...doc, title: '' }))).not.toEqual([]);
    expect(
      first('anthropic-messages')
        .check(body({ ...doc, name: 'a.pdf' }))
        .join('\n'),
    ).toContain("unknown key 'name'");
  });

  it('Gemini: a part with two data members and a base64 field that is not base64 are errors', () => {
    const body = (part: unknown) => ({ contents: [{ role: 'user', parts: [part] }] });
    expect(first('gemini').check(body({ text: 'hi' }))).toEqual([]);
    expect(
      first('gemini').check(body({ text: 'hi', inlineData: { mimeType: 'image/png', data: 'AAAA' } })),
    ).not.toEqual([]);
    expect(
      first('gemini').check(body({ inlineData: { mimeType: 'image/png', data: 'not base64!' } })),
    ).not.toEqual([]);
  });
});

for (const config of CONFIGS) {
  for (const validator of validators.get(config.api) ?? []) {
    describe(`${config.api} (${config.label}) against ${basename(validator.file)}`, () => {
      for (const [name, conversation] of Object.entries(conversations)) {
        it(name, () => {
          const { body } = config.serialize(conversation(), config.model);
          expect(validator.check(body), 'serializer body').toEqual([]);
          const sent = ENDPOINTS[config.api].streamingBody(body as Record<string, unknown>, config.model.id, {
            includeUsage: true,
          });
          expect(validator.check(sent), 'streaming body').toEqual([]);
        });
      }
    });
  }
}
