/**
 * The transcript `panto session` prints: one `[role]` section per message, images and PDFs described (never base64),
 * thinking collapsed to its length, and the way an answer ended marked in its heading — `[assistant — aborted]` for
 * one the user stopped, `[assistant — error: …]` for one the provider failed — as are tool calls that never ran
 * (`[tool aborted …]`). These messages are in the log but left out of what is sent to the model.
 */
import { STEERING_CANCELLED_TEXT, STEERING_SKIPPED_TEXT } from '../agent/index.js';
import { describePart, type Message, type ToolCallBlock, type Usage } from '../conversation.js';
import { ABORTED_RESULT_TEXT } from '../tools/index.js';
import { formatUsage } from './usage-format.js';

const MAX_ARG_CHARS = 200;

/** `read(path="a.png")`, arguments cut at 200 characters each. */
export function formatCall(call: Pick<ToolCallBlock, 'name' | 'input'>): string {
  const args = Object.entries(call.input)
    .map(([k, v]) => {
      const json = JSON.stringify(v) ?? 'null';
      return `${k}=${json.length > MAX_ARG_CHARS ? `${json.slice(0, MAX_ARG_CHARS)}…` : json}`;
    })
    .join(', ');
  return `${call.name}(${args})`;
}

const NOT_RUN = new Set([ABORTED_RESULT_TEXT, STEERING_CANCELLED_TEXT, STEERING_SKIPPED_TEXT]);

export interface TranscriptOptions {
  /** Append each answer's token usage to its heading. */
  usage?: (usage: Usage, model: string | undefined) => string;
}

export function renderCliTranscript(messages: readonly Message[], options: TranscriptOptions = {}): string {
  const calls = new Map<string, ToolCallBlock>();
  const sections: string[] = [];
  for (const m of messages) {
    switch (m.role) {
      case 'system':
        sections.push(`[system]\n${m.content}`);
        break;
      case 'user':
        sections.push(`[user]\n${m.content.map(describePart).join('\n')}`);
        break;
      case 'assistant': {
        const lines: string[] = [];
        for (const b of m.content) {
          if (b.type === 'text') lines.push(b.text);
          else if (b.type === 'thinking')
            lines.push(`[thinking: ${b.redacted ? 'redacted' : `${b.text.length} characters`}]`);
          else {
            calls.set(b.id, b);
            lines.push(`[tool call ${formatCall(b)}]`);
          }
        }
        let heading = '[assistant';
        if (m.stopReason === 'aborted') heading += ' — aborted by the user; not sent to the model again';
        else if (m.stopReason === 'error')
          heading += ` — error: ${m.errorMessage ?? 'the request failed'}; not sent to the model again`;
        else if (m.stopReason === 'max_tokens') heading += ' — cut off at the output token limit';
        else if (m.stopReason === 'refusal') heading += ' — refused';
        heading += ']';
        if (m.usage !== undefined)
          heading += ` (${options.usage?.(m.usage, m.model) ?? formatUsage(m.usage)})`;
        sections.push(lines.length > 0 ? `${heading}\n${lines.join('\n')}` : heading);
        break;
      }
      case 'tool':
        for (const r of m.results) {
          const call = calls.get(r.toolUseId);
          const label = call ? formatCall(call) : r.toolName;
          const first = r.parts[0];
          const notRun =
            r.isError && r.parts.length === 1 && first?.type === 'text' && NOT_RUN.has(first.text);
          const kind = notRun ? 'aborted' : r.isError ? 'error' : 'result';
          const body = r.parts.map((p) => (p.type === 'text' ? p.text : describePart(p))).join('\n');
          sections.push(`[tool ${kind} ${label}]\n${body}`);
        }
        break;
    }
  }
  return sections.join('\n\n');
}
