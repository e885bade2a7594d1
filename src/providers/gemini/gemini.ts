/**
 * Gemini API `generateContent` (REST, `POST /v1beta/models/{model}:generateContent`; streaming uses
 * `:streamGenerateContent?alt=sse` with the same body): the request body from a conversation (the response side is
 * gemini-response.ts and gemini-stream.ts). Follows https://ai.google.dev/api/generate-content and the `Content`, `Part`,
 * `Tool`, `GenerationConfig` and `GenerateContentResponse` types of @google/genai 3.x.
 *
 * The REST body is not the SDK's `GenerateContentParameters`: the model goes in the URL, and what the SDK nests under
 * `config` sits at the top level — `config.systemInstruction` → `systemInstruction`, `config.tools` → `tools`,
 * `config.temperature` / `config.maxOutputTokens` → `generationConfig.temperature` / `.maxOutputTokens`.
 *
 * Placement: all function responses of one turn go into ONE user content, each
 * `functionResponse {name, id?, response: {output} | {error}}` (`response` must be an object). Gemini 3+ models
 * (`multimodalToolResults`) get a result's images/PDFs inside `functionResponse.parts[].inlineData`; older models get
 * them as `inlineData` parts in a user content right after the one holding the function responses (or, with
 * `legacyToolMedia: 'same-content'`, after the function responses in their own content), each group introduced by a
 * text part naming its tool call. User images/PDFs are `inlineData` parts. A function call's `thoughtSignature`
 * (`ToolCallBlock.providerData.thoughtSignature`) is echoed; thinking text is not sent back.
 */

import type { Conversation, Message } from '../../conversation.js';
import type { ToolDecl } from '../../tool.js';
import { prepareConversation } from '../common/prepare-conversation.js';
import type { PreparedPart, PreparedResult } from '../common/prepared.js';
import type { MediaRef, SerializeOptions, SerializeResult } from '../common/serialize-options.js';
import {
  attachmentsLabel,
  countMedia,
  describeAttachments,
  EMPTY_RESULT_TEXT,
  modelOf,
  objectSchema,
  surfaceToolName,
  textOf,
} from '../common/serializer-common.js';
import { geminiThinkingConfig, thinkingFor } from '../common/thinking.js';
import type { ModelInfo } from '../model/model-info.js';

export interface GeminiBlob {
  mimeType: string;
  /** Base64. */
  data: string;
}

export interface GeminiTextPart {
  text: string;
}

export interface GeminiInlineDataPart {
  inlineData: GeminiBlob;
}

export interface GeminiFunctionCallPart {
  functionCall: { name: string; args: Record<string, unknown>; id?: string };
  thoughtSignature?: string;
}

export interface GeminiFunctionResponsePart {
  functionResponse: {
    name: string;
    id?: string;
    response: { output: string } | { error: string };
    parts?: Array<{ inlineData: GeminiBlob }>;
  };
}

export type GeminiPart =
  | GeminiTextPart
  | GeminiInlineDataPart
  | GeminiFunctionCallPart
  | GeminiFunctionResponsePart;

export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

export interface GeminiFunctionDeclaration {
  name: string;
  description: string;
  /** JSON Schema as written (not the OpenAPI subset `parameters` takes). */
  parametersJsonSchema: { type: 'object'; [key: string]: unknown };
}

export interface GeminiTool {
  functionDeclarations: GeminiFunctionDeclaration[];
}

/** The JSON body of `generateContent` (REST). The model id goes in the URL path. */
export interface GeminiRequestBody {
  contents: GeminiContent[];
  systemInstruction?: { parts: GeminiTextPart[] };
  tools?: GeminiTool[];
  generationConfig?: {
    maxOutputTokens?: number;
    temperature?: number;
    thinkingConfig?: ReturnType<typeof geminiThinkingConfig>;
  };
}

export interface GeminiOptions extends SerializeOptions {
  /**
   * Where a tool result's images/PDFs go for models before Gemini 3: `next-content` (default) in a separate user
   * content right after the function responses; `same-content` after the function responses in their own content.
   * The default is the safe form: sibling media parts in a parallel-call response turn are reported to draw a 400
   * "number of function response parts is equal to the number of function call parts" (gemini-cli #16135/#16137).
   */
  legacyToolMedia?: 'same-content' | 'next-content';
}

/** A part placed after the function responses (models before Gemini 3), with the media it carries. */
interface Sibling {
  part: GeminiPart;
  ref?: Omit<MediaRef, 'path'>;
}

/**
 * Signature Gemini 3 accepts on a function call that has none of its own (a call made by another provider or model);
 * the documented way to replay such history.
 */
export const SKIP_THOUGHT_SIGNATURE = 'skip_thought_signature_validator';

/** Tool declarations in the Gemini `tools` format (one tool holding every function declaration). */
export function geminiTools(tools: readonly ToolDecl[]): GeminiTool[] {
  return [
    {
      functionDeclarations: tools.map((t) => ({
        name: t.name,
        description: t.description,
        parametersJsonSchema: objectSchema(t),
      })),
    },
  ];
}

/**
 * Build the `generateContent` request body for `conversation`. Pure; the conversation is not changed and its base64
 * strings are shared, not copied.
 */
export function toGemini(
  conversation: Conversation | readonly Message[],
  model: ModelInfo | string,
  options: GeminiOptions = {},
): SerializeResult<GeminiRequestBody> {
  const info = modelOf(model);
  const prepared = prepareConversation(conversation, info, options);
  const media: MediaRef[] = [];
  const contents: GeminiContent[] = [];
  /** Call ids Gemini itself assigned (echoed on calls and responses); synthesised or foreign ids are not sent. */
  const geminiIds = new Set<string>();

  const inline = (p: PreparedPart & { kind: 'image' | 'document' }): { inlineData: GeminiBlob } => ({
    inlineData: { mimeType: p.part.mediaType, data: p.part.data },
  });

  for (const turn of prepared.turns) {
    if (turn.role === 'user') {
      const parts: GeminiPart[] = [];
      for (const p of turn.parts) {
        if (p.kind === 'text') {
          if (p.text.length > 0) parts.push({ text: p.text });
          continue;
        }
        media.push({ key: p.key, type: p.kind, path: `contents[${contents.length}].parts[${parts.length}]` });
        parts.push(inline(p));
      }
      if (parts.length > 0) contents.push({ role: 'user', parts });
    } else if (turn.role === 'tool') {
      const index = contents.length;
      const parts: GeminiPart[] = [];
      const siblings: Sibling[] = [];
      for (const result of turn.results) {
        const path = `contents[${index}].parts[${parts.length}]`;
        parts.push({ functionResponse: functionResponse(result, path, siblings) });
      }
      contents.push({ role: 'user', parts });
      const separate = (options.legacyToolMedia ?? 'next-content') === 'next-content' && siblings.length > 0;
      const target: GeminiPart[] = separate ? [] : parts;
      const targetIndex = separate ? index + 1 : index;
      for (const sibling of siblings) {
        if (sibling.ref)
          media.push({ ...sibling.ref, path: `contents[${targetIndex}].parts[${target.length}]` });
        target.push(sibling.part);
      }
      if (separate) contents.push({ role: 'user', parts: target });
    } else {
      const parts: GeminiPart[] = [];
      let signed = false;
      for (const block of turn.message.content) {
        if (block.type === 'text') {
          if (block.text.length > 0) parts.push({ text: block.text });
        } else if (block.type === 'tool_call') {
          const part: GeminiFunctionCallPart = {
            functionCall: { name: geminiName(block.name), args: block.input },
          };
          if (turn.sameApi && block.providerData?.syntheticId !== true) {
            part.functionCall.id = block.id;
            geminiIds.add(block.id);
          }
          const signature = turn.sameApi ? block.providerData?.thoughtSignature : undefined;
          if (typeof signature === 'string') {
            part.thoughtSignature = signature;
            signed = true;
          } else if (!signed && info.multimodalToolResults) {
            part.thoughtSignature = SKIP_THOUGHT_SIGNATURE;
            signed = true;
          }
          parts.push(part);
        }
      }
      if (parts.length > 0) contents.push({ role: 'model', parts });
    }
  }

  function functionResponse(
    result: PreparedResult,
    path: string,
    siblings: Sibling[],
  ): GeminiFunctionResponsePart['functionResponse'] {
    const count = countMedia(result.parts);
    const hasMedia = count.images + count.documents > 0;
    let text = textOf(result.parts);
    if (text.length === 0) {
      if (!hasMedia) text = EMPTY_RESULT_TEXT;
      else if (info.multimodalToolResults) text = `Attached: ${describeAttachments(count)}.`;
      else text = `Attachments of this result (${describeAttachments(count)}) follow the function responses.`;
    }
    const response: GeminiFunctionResponsePart['functionResponse'] = {
      name: geminiName(result.toolName),
      response: result.isError ? { error: text } : { output: text },
    };
    if (geminiIds.has(result.toolUseId)) response.id = result.toolUseId;
    if (!hasMedia) return response;
    if (info.multimodalToolResults) {
      const inner: Array<{ inlineData: GeminiBlob }> = [];
      for (const p of result.parts) {
        if (p.kind === 'text') continue;
        media.push({ key: p.key, type: p.kind, path: `${path}.functionResponse.parts[${inner.length}]` });
        inner.push(inline(p));
      }
      response.parts = inner;
    } else {
      siblings.push({ part: { text: attachmentsLabel(result) } });
      for (const p of result.parts) {
        if (p.kind !== 'text') siblings.push({ part: inline(p), ref: { key: p.key, type: p.kind } });
      }
    }
    return response;
  }

  const body: GeminiRequestBody = { contents };
  if (prepared.system !== undefined) body.systemInstruction = { parts: [{ text: prepared.system }] };
  if (options.tools && options.tools.length > 0) body.tools = geminiTools(options.tools);
  if (options.maxTokens !== undefined || options.temperature !== undefined) {
    body.generationConfig = {};
    if (options.maxTokens !== undefined) body.generationConfig.maxOutputTokens = options.maxTokens;
    if (options.temperature !== undefined) body.generationConfig.temperature = options.temperature;
  }
  const level = thinkingFor(info, options.thinking, prepared.warnings);
  if (level !== undefined) {
    body.generationConfig = { ...body.generationConfig, thinkingConfig: geminiThinkingConfig(info, level) };
  }
  return { body, warnings: prepared.warnings, media };
}

/** History call/response names must match `^[a-zA-Z0-9_-]{1,64}$` (`FunctionCall.name`, `FunctionResponse.name`). */
function geminiName(name: string): string {
  return surfaceToolName(name, 64);
}
