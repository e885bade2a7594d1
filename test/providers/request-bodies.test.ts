import { describe, expect, it } from 'vitest';
import type { Conversation } from '../../src/conversation.js';
import { toGemini } from '../../src/providers/gemini/gemini.js';
import { defineModel, resolveModel } from '../../src/providers/model/model-catalog.js';
import { expectGolden } from './golden.js';
import { deepFreeze, fourImages, jpeg, pdf, png, scenarios, tools } from './scenarios.js';
import { surfaces } from './surfaces.js';

const options = { tools: [...tools], maxTokens: 1024 };

describe('golden request bodies', () => {
  for (const surface of surfaces) {
    for (const [name, build] of Object.entries(scenarios)) {
      it(`${surface.api}: ${name}`, () => {
        const out = surface.serialize(build(), surface.model, options);
        expectGolden(surface.api, name, out);
        // Host-facing meta never reaches a model.
        expect(JSON.stringify(out.body)).not.toContain('never/sent.png');
      });
    }
  }
});

describe('text-only model', () => {
  for (const surface of surfaces) {
    it(`${surface.api}: images and PDFs become honest placeholders with a warning`, () => {
      const model = resolveModel('local-llm', { api: surface.api });
      const conversation: Conversation = {
        messages: [
          ...(scenarios['user-image']?.().messages ?? []),
          ...(scenarios['several-results']?.().messages ?? []),
        ],
      };
      const out = surface.serialize(conversation, model, options);
      expectGolden(surface.api, 'text-only-model', out);
      const json = JSON.stringify(out.body);
      for (const part of [png, jpeg, pdf]) expect(json).not.toContain(part.data);
      expect(json).toContain("[image omitted: model 'local-llm' does not accept image input]");
      expect(json).toContain("[document omitted: model 'local-llm' does not accept PDF input]");
      expect(json).not.toMatch(/see attached/i);
      expect(out.media).toEqual([]);
      expect(out.warnings.filter((w) => w.code === 'unsupported-input')).toEqual([
        {
          code: 'unsupported-input',
          message: "4 images replaced by a placeholder: model 'local-llm' does not accept image input",
          parts: ['0:0:1', '2:0:0', '5:1:0', '5:2:1'],
        },
        {
          code: 'unsupported-input',
          message: "2 documents replaced by a placeholder: model 'local-llm' does not accept PDF input",
          parts: ['0:0:2', '5:2:2'],
        },
      ]);
    });
  }
});

describe('Gemini 2.x vs 3', () => {
  const conversation = () => scenarios['several-results']?.() as Conversation;

  it('Gemini 3 puts a result’s images and PDFs inside functionResponse.parts', () => {
    const out = toGemini(conversation(), 'gemini-3-pro-preview', options);
    expectGolden('gemini', 'gemini-3', out);
    const content = out.body.contents[2];
    expect(content?.role).toBe('user');
    expect(content?.parts).toHaveLength(3);
    expect(content?.parts[2]).toEqual({
      functionResponse: {
        name: 'read',
        id: 'call_c',
        response: { output: 'photo and its report' },
        parts: [
          { inlineData: { mimeType: 'image/jpeg', data: jpeg.data } },
          { inlineData: { mimeType: 'application/pdf', data: pdf.data } },
        ],
      },
    });
  });

  it('Gemini 2.x gets them by default in a user content right after the function responses', () => {
    const out = toGemini(conversation(), 'gemini-2.5-flash', options);
    expectGolden('gemini', 'gemini-2', out);
    expect(out.body.contents[2]?.parts.every((p) => 'functionResponse' in p)).toBe(true);
    expect(out.body.contents[3]?.parts).toEqual([
      { text: 'Attachments from tool call call_b (read):' },
      { inlineData: { mimeType: 'image/png', data: png.data } },
      { text: 'Attachments from tool call call_c (read):' },
      { inlineData: { mimeType: 'image/jpeg', data: jpeg.data } },
      { inlineData: { mimeType: 'application/pdf', data: pdf.data } },
    ]);
    expect(out.media.map((m) => m.path)).toEqual([
      'contents[3].parts[1]',
      'contents[3].parts[3]',
      'contents[3].parts[4]',
    ]);
    expect(out.body.contents[2]?.parts[1]).toEqual({
      functionResponse: {
        name: 'read',
        id: 'call_b',
        response: { output: 'Attachments of this result (1 image) follow the function responses.' },
      },
    });
    expect(out.body.contents[4]?.parts).toEqual([{ text: 'Focus on the colours.' }]);
  });

  it("Gemini 2.x with legacyToolMedia: 'same-content' puts them after all function responses, in their content", () => {
    const out = toGemini(conversation(), 'gemini-2.5-flash', { ...options, legacyToolMedia: 'same-content' });
    const parts = out.body.contents[2]?.parts ?? [];
    expect(parts.slice(0, 3).every((p) => 'functionResponse' in p)).toBe(true);
    expect(parts.slice(3).map((p) => Object.keys(p)[0])).toEqual([
      'text',
      'inlineData',
      'text',
      'inlineData',
      'inlineData',
    ]);
    expect(out.media.map((m) => m.path)).toEqual([
      'contents[2].parts[4]',
      'contents[2].parts[6]',
      'contents[2].parts[7]',
    ]);
  });
});

describe('request guard', () => {
  for (const surface of surfaces) {
    it(`${surface.api}: replaces the OLDEST images beyond the model's image limit`, () => {
      const model = defineModel({
        id: 'two-images',
        api: surface.api,
        input: { image: true, pdf: true },
        limits: { imagesPerRequest: 2 },
      });
      const out = surface.serialize(fourImages(), model, options);
      expectGolden(surface.api, 'request-guard', out);
      expect(out.media.map((m) => m.key)).toEqual(['4:0:1', '5:0:1']);
      expect(out.warnings).toEqual([
        {
          code: 'request-limit',
          message:
            "2 images replaced by a placeholder: request limit of 2 images for model 'two-images'; this older image was left out",
          parts: ['0:0:1', '2:0:1'],
        },
      ]);
    });
  }
});

describe('the stored conversation is never rewritten', () => {
  for (const surface of surfaces) {
    it(`${surface.api}: every scenario, frozen, serializes and stays equal to its clone`, () => {
      const all = [...Object.values(scenarios).map((s) => s()), fourImages()];
      for (const conversation of all) {
        const before = structuredClone(conversation);
        deepFreeze(conversation);
        surface.serialize(conversation, surface.model, { ...options, omitParts: new Set(['1:0:1']) });
        surface.serialize(conversation, resolveModel('local-llm', { api: surface.api }), options);
        surface.serialize(
          conversation,
          defineModel({
            id: 'tiny',
            api: surface.api,
            input: { image: true, pdf: true },
            limits: { imagesPerRequest: 1 },
          }),
          options,
        );
        expect(conversation).toEqual(before);
      }
    });
  }
});
