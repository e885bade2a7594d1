/**
 * Messages as plain text for a summarizer. Images and PDFs are described with `describePart` (the per-part form of
 * `partsToText`), never dropped; a tool result's media name the call that produced them, e.g.
 * `[image: image/png 1200x800] from tool read(path="shot.png")`. Thinking blocks and tool-result `meta` are left out
 * (neither is conversation content a summary should carry).
 */

import { describePart, type Message, partsToText, type ToolCallBlock } from '../conversation.js';

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

/** The transcript of `messages`: one `[role]` section per message, separated by blank lines. */
export function renderTranscript(messages: readonly Message[]): string {
  const calls = new Map<string, ToolCallBlock>();
  const sections: string[] = [];
  for (const m of messages) {
    switch (m.role) {
      case 'system':
        sections.push(`[system]\n${m.content}`);
        break;
      case 'user':
        sections.push(`[user]\n${partsToText(m.content)}`);
        break;
      case 'assistant': {
        const lines: string[] = [];
        for (const b of m.content) {
          if (b.type === 'text') lines.push(b.text);
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
      case 'tool':
        for (const r of m.results) {
          const call = calls.get(r.toolUseId);
          const label = call ? formatToolCall(call) : r.toolName;
          const lines = r.parts.map((p) =>
            p.type === 'text' ? p.text : `${describePart(p)} from tool ${label}`,
          );
          sections.push(`[tool ${r.isError ? 'error' : 'result'} ${label}]\n${lines.join('\n')}`);
        }
        break;
    }
  }
  return sections.join('\n\n');
}
