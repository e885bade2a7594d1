/**
 * The field rules of the published request schemas that hostile histories break, checked on a request body
 * (/work/shared/reference/wire-fixtures/schemas): Anthropic `RequestToolUseBlock.id` / `RequestToolResultBlock
 * .tool_use_id` `^[a-zA-Z0-9_-]+$`, `RequestToolUseBlock.name` 1–200 characters and `input` an object, text blocks
 * with non-whitespace text; OpenAI Responses `call_id` 1–64 characters; OpenAI history call names
 * `^[a-zA-Z0-9_-]{1,64}$` (the live API's 400, mcp-use/mcp-use#90); Gemini `FunctionCall.name` /
 * `FunctionResponse.name` `^[a-zA-Z0-9_-]{1,64}$` and `args` a Struct; and on every surface no lone surrogate (the
 * APIs reject the `\udXXX` escape JSON.stringify writes for one).
 */

import { expect } from 'vitest';
import type { ModelApi } from '../../src/providers/model/model-info.js';

// biome-ignore lint/suspicious/noExplicitAny: request bodies are walked by their documented wire shape
export type Json = Record<string, any>;

/** The calls and results of a body, per surface, in body order: `[id or name, ...]`. */
export function pairs(api: ModelApi, body: Json): { calls: string[]; results: string[] } {
  const calls: string[] = [];
  const results: string[] = [];
  if (api === 'anthropic-messages') {
    for (const m of body.messages) {
      for (const b of m.content) {
        if (b.type === 'tool_use') calls.push(b.id);
        if (b.type === 'tool_result') results.push(b.tool_use_id);
      }
    }
  } else if (api === 'openai-chat') {
    for (const m of body.messages) {
      for (const c of m.tool_calls ?? []) calls.push(c.id);
      if (m.role === 'tool') results.push(m.tool_call_id);
    }
  } else if (api === 'openai-responses') {
    for (const i of body.input) {
      if (i.type === 'function_call') calls.push(i.call_id);
      if (i.type === 'function_call_output') results.push(i.call_id);
    }
  } else {
    for (const c of body.contents) {
      for (const p of c.parts) {
        if (p.functionCall) calls.push(p.functionCall.name);
        if (p.functionResponse) results.push(p.functionResponse.name);
      }
    }
  }
  return { calls, results };
}

/** Every string in `value` (keys too), iteratively. */
function strings(value: unknown): string[] {
  const out: string[] = [];
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) stack.push(...v);
    else if (typeof v === 'object' && v !== null) {
      for (const [k, x] of Object.entries(v)) {
        out.push(k);
        stack.push(x);
      }
    }
  }
  return out;
}

const ANTHROPIC_ID = /^[a-zA-Z0-9_-]+$/;
const GEMINI_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** OpenAI answers 400 "string does not match pattern" for other history names (mcp-use/mcp-use#90). */
const OPENAI_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** The schema rules on call ids, names and inputs this file is about, for one surface's body. */
export function expectWireRules(api: ModelApi, body: Json): void {
  if (api === 'anthropic-messages') {
    for (const m of body.messages) {
      for (const b of m.content) {
        if (b.type === 'tool_use') {
          expect(b.id).toMatch(ANTHROPIC_ID);
          expect(b.name.length).toBeGreaterThanOrEqual(1);
          expect(b.name.length).toBeLessThanOrEqual(200);
          expect(typeof b.input === 'object' && b.input !== null && !Array.isArray(b.input)).toBe(true);
        }
        if (b.type === 'tool_result') expect(b.tool_use_id).toMatch(ANTHROPIC_ID);
        if (b.type === 'text') expect(b.text).toMatch(/\S/);
      }
    }
  } else if (api === 'openai-chat') {
    for (const m of body.messages) {
      for (const c of m.tool_calls ?? []) {
        expect(c.id.length).toBeGreaterThanOrEqual(1);
        expect(typeof c.function.arguments).toBe('string');
        expect(c.function.name).toMatch(OPENAI_NAME);
      }
    }
  } else if (api === 'openai-responses') {
    for (const i of body.input) {
      if (i.type === 'function_call' || i.type === 'function_call_output') {
        expect(i.call_id.length).toBeGreaterThanOrEqual(1);
        expect(i.call_id.length).toBeLessThanOrEqual(64);
      }
      if (i.type === 'function_call') {
        expect(typeof i.arguments).toBe('string');
        expect(i.name).toMatch(OPENAI_NAME);
      }
    }
  } else {
    for (const c of body.contents) {
      for (const p of c.parts) {
        if (p.functionCall) {
          expect(p.functionCall.name).toMatch(GEMINI_NAME);
          const args = p.functionCall.args;
          expect(typeof args === 'object' && args !== null && !Array.isArray(args)).toBe(true);
        }
        if (p.functionResponse) expect(p.functionResponse.name).toMatch(GEMINI_NAME);
      }
    }
  }
  // JSON the APIs parse: no lone surrogate survives (JSON.stringify would write it as a `\udXXX` escape).
  const wellFormed = (s: string) => (s as unknown as { isWellFormed(): boolean }).isWellFormed();
  for (const s of strings(body)) expect(wellFormed(s)).toBe(true);
}
