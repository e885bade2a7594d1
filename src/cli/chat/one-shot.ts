/**
 * One-shot mode (`panto chat -p "…"`, `panto run "…"`): one prompt, the agent runs to the end, and stdout gets only
 * the result — for scripts and other programs.
 *
 * - `text` (default): the final answer's text (the last assistant message) when the run ended normally, nothing
 *   else. Warnings and errors go to
 *   stderr; with `--verbose`, everything the chat would show (tool calls, retries, usage) goes to stderr as well.
 * - `json`: one JSON object: `{type: "result", ok, stopReason, text, error?, turns, session, model, usage, cost?,
 *   toolCalls: [{id, name, input, isError}]}`.
 * - `stream-json`: one JSON object per line as the run goes (`start`, `text_delta`, `thinking_delta`, `tool_call`,
 *   `tool_result`, `turn_end`, `warning`, `retry`, `message_reset`, `compaction`), then the `result` object.
 *
 * Exit code 0 when the run ended normally; 1 when it failed, was stopped, hit the turn limit, or the answer was cut
 * at the output limit or refused.
 */
import type { AgentEvent, AgentRunResult, UserContent } from '../../agent/index.js';
import { assistantText, type Message, partsToText } from '../../conversation.js';
import { escapeJsonControls } from '../safe-text.js';
import { formatUsage } from '../usage-format.js';
import type { ChatRenderer } from './chat-renderer.js';
import type { ChatSession } from './chat-session.js';

export type OutputFormat = 'text' | 'json' | 'stream-json';
export const OUTPUT_FORMATS: readonly OutputFormat[] = ['text', 'json', 'stream-json'];

export interface OneShotOptions {
  chat: ChatSession;
  prompt: UserContent;
  output: OutputFormat;
  /** Writes to stdout (the result). */
  out: (text: string) => void;
  /** Writes a line to stderr. */
  err: (text: string) => void;
  /** `--verbose`: the renderer of the chat's own view (on stderr), to stop its spinner at the end. */
  renderer?: ChatRenderer;
}

export async function runOneShot(o: OneShotOptions): Promise<number> {
  const { chat, output } = o;
  const line = (value: unknown) => o.out(`${escapeJsonControls(JSON.stringify(value))}\n`);
  await chat.ensureSession();
  if (output === 'stream-json')
    line({ type: 'start', session: chat.path, model: chat.model.id, api: chat.model.api });
  const unsubscribe = chat.agent.subscribe((e) => {
    if (output === 'stream-json') {
      const json = eventJson(e);
      if (json !== undefined) line(json);
    }
  });
  const onSigint = () => chat.agent.abort();
  process.on('SIGINT', onSigint);
  let result: AgentRunResult;
  try {
    result = await chat.agent.prompt(o.prompt);
  } finally {
    process.off('SIGINT', onSigint);
    unsubscribe();
    o.renderer?.idle();
  }
  const ok = result.stopReason === 'end';
  const last = [...result.messages].reverse().find((m) => m.role === 'assistant');
  const text = last?.role === 'assistant' ? assistantText(last) : '';
  if (output === 'text') {
    // Only a finished answer is the result; a failed or stopped one is reported on stderr.
    if (ok && text !== '') o.out(text.endsWith('\n') ? text : `${text}\n`);
  } else {
    line(resultJson(chat, result, text));
  }
  if (!ok) {
    const why = result.error
      ? `${result.error.message}${result.error.code ? ` [${result.error.code}]` : ''}`
      : result.stopReason === 'max_turns'
        ? 'the turn limit was reached while the model still wanted tools run'
        : `the run ended: ${result.stopReason}`;
    o.err(`panto: ${why}`);
  }
  return ok ? 0 : 1;
}

function resultJson(chat: ChatSession, result: AgentRunResult, text: string): Record<string, unknown> {
  let usage: ChatSession['usage'] | undefined;
  try {
    usage = chat.usage;
  } catch {
    usage = undefined;
  }
  const toolCalls: Array<Record<string, unknown>> = [];
  const results = new Map<string, boolean>();
  for (const m of result.messages)
    if (m.role === 'tool') for (const r of m.results) results.set(r.toolUseId, r.isError);
  for (const m of result.messages as Message[]) {
    if (m.role !== 'assistant') continue;
    for (const b of m.content)
      if (b.type === 'tool_call')
        toolCalls.push({ id: b.id, name: b.name, input: b.input, isError: results.get(b.id) ?? null });
  }
  return {
    type: 'result',
    ok: result.stopReason === 'end',
    stopReason: result.stopReason,
    text,
    ...(result.error ? { error: { message: result.error.message, code: result.error.code } } : {}),
    turns: result.turns,
    session: chat.path,
    model: chat.model.id,
    ...(usage
      ? {
          usage: {
            inputTokens: usage.inputTokens,
            outputTokens: usage.outputTokens,
            cacheReadTokens: usage.cacheReadTokens,
            cacheWriteTokens: usage.cacheWriteTokens,
            requests: usage.requests,
          },
          ...(usage.unpricedRequests > 0 && usage.cost === 0 ? {} : { cost: usage.cost }),
        }
      : {}),
    toolCalls,
  };
}

/** One stream-json line for an agent event, or undefined for events not streamed. */
export function eventJson(e: AgentEvent): Record<string, unknown> | undefined {
  switch (e.type) {
    case 'message_delta':
      if (e.delta.type === 'text_delta') return { type: 'text_delta', text: e.delta.text };
      if (e.delta.type === 'thinking_delta') return { type: 'thinking_delta', text: e.delta.text };
      return undefined;
    case 'tool_call_start':
      return { type: 'tool_call', id: e.toolCallId, name: e.toolName, input: e.input };
    case 'tool_call_update':
      return { type: 'tool_progress', id: e.toolCallId, name: e.toolName, update: e.update };
    case 'tool_call_end':
      return {
        type: 'tool_result',
        id: e.toolCallId,
        name: e.toolName,
        isError: e.isError,
        aborted: e.aborted,
        durationMs: Math.round(e.durationMs),
        text: partsToText(e.result.parts),
      };
    case 'turn_end':
      return {
        type: 'turn_end',
        turn: e.turn,
        stopReason: e.message.stopReason ?? 'end',
        ...(e.usage ? { usage: e.usage, usageText: formatUsage(e.usage) } : {}),
        ...(e.cost ? { cost: e.cost.total } : {}),
      };
    case 'warning':
      return { type: 'warning', code: e.warning.code, message: e.warning.message };
    case 'retry':
      return { type: 'retry', attempt: e.attempt, delayMs: e.delayMs, message: e.error.message };
    case 'message_reset':
      return { type: 'message_reset', attempt: e.attempt, delayMs: e.delayMs, message: e.error.message };
    case 'compaction_end':
      return { type: 'compaction', tokensBefore: e.tokensBefore, tokensAfter: e.tokensAfter };
    default:
      return undefined;
  }
}
