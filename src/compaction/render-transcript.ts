/**
 * Messages as plain text for a summarizer. Images and PDFs are described with `describePart` (the per-part form of
 * `partsToText`), never dropped; a tool result's media name the call that produced them, e.g.
 * `[image: image/png 1200x800] from tool read(path="shot.png")`. Thinking blocks and tool-result `meta` are left out
 * (neither is conversation content a summary should carry).
 */

import { describePart, type Message, type ToolCallBlock } from '../conversation.js';

const MAX_ARG_CHARS = 200;

function formatArgs(input: Record<string, unknown>): string {
  return Object.entries(input)
    .map(([k, v]) => {
      const json = JSON.stringify(v) ?? 'null';
      return `${k}=${json.length > MAX_ARG_CHARS ? `${json.slice(0, MAX_ARG_CHARS)}…` : json}`;
    })
    .join(', ');
}

/** `name(arg=value, ...)` for a tool call. */
export function formatToolCall(call: Pick<ToolCallBlock, 'name' | 'input'>): string {
  return `${call.name}(${formatArgs(call.input)})`;
}

export interface RenderOptions {
  /**
   * Longest text part rendered whole, in characters; a longer one keeps its first and last parts around a
   * `[… N characters cut …]` marker (long tool outputs would otherwise crowd the summarizer's window). Default: no limit.
   */
  maxPartChars?: number;
}

/** A text shortened to at most about `max` characters: head and tail around a marker naming what was cut. */
export function shortenText(text: string, max: number | undefined): string {
  if (max === undefined || text.length <= max) return text;
  const keep = Math.max(0, max - 40);
  const head = Math.ceil(keep * 0.7);
  const tail = keep - head;
  const cut = text.length - head - tail;
  return `${text.slice(0, head)}\n[… ${cut} characters cut …]\n${tail > 0 ? text.slice(text.length - tail) : ''}`;
}

/**
 * One rendered section per message (a tool-results message gives one section per result, joined by blank lines), in
 * order; `renderTranscript` is their join. Tool-call labels come from the assistant messages seen so far.
 */
export function renderSections(messages: readonly Message[], options: RenderOptions = {}): string[] {
  const max = options.maxPartChars;
  const calls = new Map<string, ToolCallBlock>();
  const sections: string[] = [];
  for (const m of messages) {
    switch (m.role) {
      case 'system':
        sections.push(`[system]\n${shortenText(m.content, max)}`);
        break;
      case 'user':
        sections.push(
          `[user]\n${m.content.map((p) => (p.type === 'text' ? shortenText(p.text, max) : describePart(p))).join('\n')}`,
        );
        break;
      case 'assistant': {
        const lines: string[] = [];
        for (const b of m.content) {
          if (b.type === 'text') lines.push(shortenText(b.text, max));
          else if (b.type === 'tool_call') {
            calls.set(b.id, b);
            lines.push(`[tool call ${formatToolCall(b)}]`);
          }
        }
        if (m.stopReason === 'error' && m.errorMessage !== undefined)
          lines.push(`[error: ${m.errorMessage}]`);
        sections.push(`[assistant]\n${lines.join('\n')}`);
        break;
      }
      case 'tool': {
        const results: string[] = [];
        for (const r of m.results) {
          const call = calls.get(r.toolUseId);
          const label = call ? formatToolCall(call) : r.toolName;
          const lines = r.parts.map((p) =>
            p.type === 'text' ? shortenText(p.text, max) : `${describePart(p)} from tool ${label}`,
          );
          results.push(`[tool ${r.isError ? 'error' : 'result'} ${label}]\n${lines.join('\n')}`);
        }
        sections.push(results.join('\n\n'));
        break;
      }
    }
  }
  return sections;
}

/** The transcript of `messages`: one `[role]` section per message, separated by blank lines. */
export function renderTranscript(messages: readonly Message[], options: RenderOptions = {}): string {
  return renderSections(messages, options)
    .filter((s) => s.length > 0)
    .join('\n\n');
}
