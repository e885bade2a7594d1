/**
 * How `panto chat` shows a run: the answer streams to stdout; tool calls, the media each produced (upright sizes, PDF
 * page counts), warnings, retries and token usage go to stderr as bracketed lines. Thinking is shown dimmed while it
 * streams and folded to one line when the answer starts (`collapse`, the default), kept (`show`) or never streamed
 * (`hide`); `/thinking` prints the last turn's thinking in full.
 */
import type { AgentEvent } from '../../agent/index.js';
import type { AssistantMessage } from '../../conversation.js';
import type { ToolMediaProcessedEvent } from '../../tools/index.js';
import { describeProcessed } from '../media-summary.js';
import { formatCall } from '../transcript.js';
import type { RowMark, Terminal } from './terminal.js';

export type ThinkingMode = 'collapse' | 'show' | 'hide';
export const THINKING_MODES: readonly ThinkingMode[] = ['collapse', 'show', 'hide'];

export interface RendererHooks {
  /** The usage line after an answer (tokens, cost, session totals); undefined prints nothing. */
  usageLine?: (message: AssistantMessage) => string | undefined;
}

export class ChatRenderer {
  thinkingMode: ThinkingMode = 'collapse';
  /** The thinking text of the latest answer that had any. */
  lastThinking = '';
  readonly #t: Terminal;
  readonly #hooks: RendererHooks;
  #thinking: { mark: RowMark; chars: number; text: string } | undefined;
  #answerMark: RowMark | undefined;
  readonly #media = new Map<string, ToolMediaProcessedEvent[]>();

  constructor(terminal: Terminal, hooks: RendererHooks = {}) {
    this.#t = terminal;
    this.#hooks = hooks;
  }

  /** Render one agent event. */
  handle(e: AgentEvent): void {
    const t = this.#t;
    switch (e.type) {
      case 'message_start':
        this.#answerMark = t.mark();
        break;
      case 'message_delta': {
        const d = e.delta;
        if (d.type === 'thinking_delta') {
          this.#thinkingDelta(d.text);
          break;
        }
        this.#endThinking();
        if (d.type === 'text_delta') t.out(d.text);
        break;
      }
      case 'message_end':
        if (e.message.role === 'assistant') {
          this.#endThinking();
          t.newline();
          const usage = this.#hooks.usageLine?.(e.message);
          if (usage !== undefined) t.line(usage, 'dim');
        }
        break;
      case 'tool_call_start':
        t.line(`[tool] ${formatCall({ name: e.toolName, input: e.input })}`);
        break;
      case 'tool_media_processed': {
        const list = this.#media.get(e.toolCallId) ?? [];
        list.push(e);
        this.#media.set(e.toolCallId, list);
        break;
      }
      case 'tool_media_dropped':
        t.line(`[tool] ${e.toolName}: attachment dropped: ${e.note}`);
        break;
      case 'tool_call_end': {
        const how = e.aborted ? 'stopped' : e.isError ? 'failed' : 'done';
        t.line(`[tool] ${e.toolName} ${how} in ${Math.round(e.durationMs)} ms`);
        const media = (this.#media.get(e.toolCallId) ?? []).sort((a, b) => a.partIndex - b.partIndex);
        this.#media.delete(e.toolCallId);
        const docs = e.result.parts.filter((p) => p.type === 'document');
        let doc = 0;
        for (const m of media) {
          const pages = m.mediaType === 'application/pdf' ? docs[doc++]?.pages : undefined;
          const output = {
            mediaType: m.mediaType,
            width: m.width,
            height: m.height,
            byteLength: m.byteLength,
            pages,
          };
          t.line(`       ${describeProcessed(output, m.original, m.changes)}`);
        }
        break;
      }
      case 'warning':
        t.line(`warning: ${e.warning.message}`);
        break;
      case 'retry':
        t.line(`[retrying in ${(e.delayMs / 1000).toFixed(1)} s (attempt ${e.attempt}): ${e.error.message}]`);
        break;
      case 'message_reset':
        this.discardPartialAnswer(
          `the stream was cut (${e.error.message}); asking again in ${(e.delayMs / 1000).toFixed(1)} s`,
        );
        break;
      case 'compaction_start':
        t.line(`[compacting: ~${e.tokens} tokens near the ${e.contextWindow}-token window]`, 'dim');
        break;
      case 'compaction_end':
        t.line(`[compacted the conversation: ~${e.tokensBefore} -> ~${e.tokensAfter} tokens]`);
        break;
      default:
        break;
    }
  }

  /**
   * The partial answer on screen is void (the request is retried from the start): erase it on a terminal, or say so
   * where it cannot be erased.
   */
  discardPartialAnswer(reason: string): void {
    this.#thinking = undefined;
    const mark = this.#answerMark;
    if (mark !== undefined && this.#t.eraseSince(mark)) {
      this.#t.line(`[${reason}; the answer restarts]`, 'dim');
    } else {
      this.#t.line(`[${reason}; the partial answer above is discarded and the answer restarts]`);
    }
    this.#answerMark = this.#t.mark();
  }

  #thinkingDelta(text: string): void {
    const t = this.#t;
    if (this.#thinking === undefined) {
      t.newline();
      this.#thinking = { mark: t.mark(), chars: 0, text: '' };
    }
    this.#thinking.chars += text.length;
    this.#thinking.text += text;
    if (t.tty && this.thinkingMode !== 'hide') t.out(text, 'dim');
  }

  #endThinking(): void {
    const th = this.#thinking;
    if (th === undefined) return;
    this.#thinking = undefined;
    this.lastThinking = th.text;
    const t = this.#t;
    const summary = `[thought for ${th.chars} characters; /thinking shows it]`;
    if (!t.tty) {
      t.line(summary);
      return;
    }
    if (this.thinkingMode === 'show') {
      t.newline();
      return;
    }
    if (this.thinkingMode === 'collapse') t.eraseSince(th.mark);
    t.newline();
    t.line(summary, 'dim');
    this.#answerMark = t.mark();
  }
}
