/**
 * The provider surfaces as the CLI names them (`--as`, `--provider`), their wire APIs and default models, and the
 * request fragment each surface gives a tool result.
 */
import type { Conversation } from '../conversation.js';
import type { ModelApi, ModelInfo, SerializeWarning } from '../providers/index.js';
import { toAnthropicMessages, toGemini, toOpenAIChat, toOpenAIResponses } from '../providers/index.js';
import type { ToolDecl } from '../tool.js';
import { CliError, EXIT_USAGE } from './cli-error.js';
import { escapeJsonControls } from './safe-text.js';

export const SURFACES = ['anthropic', 'openai-chat', 'openai-responses', 'gemini'] as const;
export type Surface = (typeof SURFACES)[number];

/** The wire API of each surface name, plus the aliases `--provider` also takes. */
const API_OF: Record<string, ModelApi> = {
  anthropic: 'anthropic-messages',
  'anthropic-messages': 'anthropic-messages',
  'openai-chat': 'openai-chat',
  'openai-responses': 'openai-responses',
  openai: 'openai-responses',
  gemini: 'gemini',
  google: 'gemini',
};

/** A current model per wire API, used when `--model` is not given. */
export const DEFAULT_MODEL: Record<ModelApi, string> = {
  'anthropic-messages': 'claude-sonnet-4-5',
  'openai-chat': 'gpt-5',
  'openai-responses': 'gpt-5',
  gemini: 'gemini-3-pro-preview',
};

/** `--as` value -> surface; a usage error names the choices. */
export function parseSurface(value: string): Surface {
  if ((SURFACES as readonly string[]).includes(value)) return value as Surface;
  throw new CliError(`--as expects one of ${SURFACES.join(', ')}; got '${value}'`, EXIT_USAGE);
}

/** The wire API of a surface. */
export function surfaceApi(surface: Surface): ModelApi {
  return API_OF[surface] as ModelApi;
}

/** `--provider` value (a surface name or an alias such as `openai`, `google`) -> wire API; a usage error otherwise. */
export function parseProvider(value: string): ModelApi {
  const api = API_OF[value];
  if (api) return api;
  throw new CliError(
    `--provider expects one of ${Object.keys(API_OF).join(', ')}; got '${value}'`,
    EXIT_USAGE,
  );
}

export interface Fragment {
  /** The items of the request body that carry the tool results (and what follows them). */
  fragment: unknown[];
  warnings: SerializeWarning[];
}

/**
 * Serialize `conversation` (whose LAST assistant message holds the tool calls, followed by their results) for
 * `surface` and return only the part of the body after that assistant message: what the provider receives for the
 * tool results.
 */
export function toolResultFragment(
  surface: Surface,
  conversation: Conversation,
  model: ModelInfo,
  tools: readonly ToolDecl[],
): Fragment {
  switch (surface) {
    case 'anthropic': {
      const { body, warnings } = toAnthropicMessages(conversation, model, { tools });
      return { fragment: afterLast(body.messages, (m) => m.role === 'assistant'), warnings };
    }
    case 'openai-chat': {
      const { body, warnings } = toOpenAIChat(conversation, model, { tools });
      return { fragment: afterLast(body.messages, (m) => m.role === 'assistant'), warnings };
    }
    case 'openai-responses': {
      const { body, warnings } = toOpenAIResponses(conversation, model, { tools });
      return { fragment: afterLast(body.input, (m) => m.type === 'function_call'), warnings };
    }
    case 'gemini': {
      const { body, warnings } = toGemini(conversation, model, { tools });
      return { fragment: afterLast(body.contents, (c) => c.role === 'model'), warnings };
    }
  }
}

function afterLast<T>(items: readonly T[], isMarker: (item: T) => boolean): T[] {
  let last = -1;
  items.forEach((item, i) => {
    if (isMarker(item)) last = i;
  });
  return items.slice(last + 1);
}

/**
 * JSON with long base64 strings (and data URLs) abbreviated, for people reading a request; characters a terminal obeys
 * are `\u` escapes (`escapeJsonControls`).
 */
export function abbreviateBase64(value: unknown, full: boolean): string {
  if (full) return escapeJsonControls(JSON.stringify(value, null, 2));
  const json = JSON.stringify(
    value,
    (_key, v: unknown) => {
      if (typeof v !== 'string' || v.length < 120) return v;
      const m = /^(data:[^;,]+;base64,)?([A-Za-z0-9+/]+={0,2})$/.exec(v);
      if (!m) return v;
      const prefix = m[1] ?? '';
      const b64 = m[2] ?? '';
      return `${prefix}${b64.slice(0, 16)}…<${b64.length} base64 chars>`;
    },
    2,
  );
  return escapeJsonControls(json);
}
