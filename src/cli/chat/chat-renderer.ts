/**
 * How `panto chat` shows a run. On a terminal the answer is rendered as Markdown (word-wrapped, code highlighted) as
 * it streams, a spinner shows until the first token of each answer and while tools run, and the pictures a tool
 * produced or the user attached — what the model sees — are drawn inline where the terminal supports it
 * (image-protocol.ts); elsewhere each is one summary line. Tool calls, how they ended (a failed call's error text
 * included), warnings, retries, compactions and token usage go to stderr as bracketed lines.
 *
 * Piped stdout gets each answer byte for byte, written when the answer is complete (so an answer whose stream broke
 * off and was requested again never leaves its first attempt in the output).
 *
 * Thinking is shown dimmed while it streams and folded to one line when the answer starts (`collapse`, the default),
 * kept (`show`) or never streamed (`hide`); `/thinking` prints the last turn's thinking in full.
 */

import type { AgentEvent } from '../../agent/index.js';
import type { AssistantMessage, StoredPart } from '../../conversation.js';
import type { ToolMediaProcessedEvent } from '../../tools/index.js';
import { cliAdvice } from '../cli-advice.js';
import { formatBytes } from '../cli-io.js';
import { describeProcessed } from '../media-summary.js';
import { formatCall } from '../transcript.js';
import type { ImageProtocol } from '../tty/image-protocol.js';
import { inlineImage } from '../tty/inline-image.js';
import { MarkdownStream } from '../tty/markdown-stream.js';
import { Spinner } from '../tty/spinner.js';
import type { RowMark, Terminal } from './terminal.js';

export type ThinkingMode = 'collapse' | 'show' | 'hide';
export const THINKING_MODES: readonly ThinkingMode[] = ['collapse', 'show', 'hide'];

/** At most this much of a failed tool call's error text is shown. */
const TOOL_ERROR_LINES = 8;
const TOOL_ERROR_CHARS = 1200;

export interface RendererHooks {
  /** The usage line after an answer (tokens, cost, session totals); undefined prints nothing. */
  usageLine?: (message: AssistantMessage) => string | undefined;
  /** How pictures are drawn (default: not at all; the summary lines say what they are). */
  images?: ImageProtocol;
  /** Render the answer as Markdown on a terminal (default true). */
  markdown?: boolean;
}

export class ChatRenderer {
  thinkingMode: ThinkingMode = 'collapse';
  /** The thinking text of the latest answer that had any. */
  lastThinking = '';
  readonly #t: Terminal;
  readonly #hooks: RendererHooks;
  readonly #spinner: Spinner;
  #thinking: { mark: RowMark; chars: number; text: string } | undefined;
  #answerMark: RowMark | undefined;
  #markdown: MarkdownStream | undefined;
  /** Piped stdout: the answer so far, written when it is complete. */
  #held = '';
  readonly #media = new Map<string, ToolMediaProcessedEvent[]>();
  readonly #running = new Set<string>();
  /** Events that came while a picture was being prepared: shown after it, in order. */
  #deferred: AgentEvent[] | undefined;

  constructor(terminal: Terminal, hooks: RendererHooks = {}) {
    this.#t = terminal;
    this.#hooks = hooks;
    this.#spinner = new Spinner(terminal);
  }

  /** Show the spinner (e.g. while a prompt's attachments are processed, before the request). */
  waiting(label = 'waiting for the model…'): void {
    this.#spinner.start(label);
  }

  /** Remove the spinner (the turn ended). */
  idle(): void {
    this.#spinner.stop();
  }

  /** Render one agent event. */
  handle(e: AgentEvent): void {
    if (this.#deferred !== undefined) {
      this.#deferred.push(e);
      return;
    }
    const t = this.#t;
    switch (e.type) {
      case 'turn_start':
        this.#spinner.start('waiting for the model…');
        break;
      case 'message_start':
        this.#answerMark = t.mark();
        this.#held = '';
        break;
      case 'message_delta': {
        const d = e.delta;
        if (d.type === 'thinking_delta') {
          this.#spinner.stop();
          this.#thinkingDelta(d.text);
          break;
        }
        this.#endThinking();
        if (d.type === 'text_delta') {
          this.#spinner.stop();
          this.#text(d.text);
        } else if (d.type === 'toolcall_start') {
          this.#spinner.start(`writing a call to ${d.name}…`);
        }
        break;
      }
      case 'message_end':
        if (e.message.role === 'assistant') {
          this.#spinner.stop();
          this.#endThinking();
          this.#endText();
          t.newline();
          const usage = this.#hooks.usageLine?.(e.message);
          if (usage !== undefined) t.line(usage, 'dim');
        } else if (e.message.role === 'user') {
          this.#pictures(e.message.content, 'attached');
        }
        break;
      case 'tool_call_start':
        t.line(`[tool] ${formatCall({ name: e.toolName, input: e.input })}`);
        this.#running.add(e.toolCallId);
        this.#spinner.start(`running ${e.toolName}…`);
        break;
      case 'tool_call_update': {
        const u = e.update;
        const pct =
          typeof u.progress === 'number' ? ` ${Math.round(Math.min(1, Math.max(0, u.progress)) * 100)}%` : '';
        const msg = typeof u.message === 'string' ? ` ${u.message.split('\n')[0]?.slice(0, 200)}` : '';
        this.#spinner.start(`running ${e.toolName}…${pct}${msg}`);
        break;
      }
      case 'tool_media_processed': {
        const list = this.#media.get(e.toolCallId) ?? [];
        list.push(e);
        this.#media.set(e.toolCallId, list);
        break;
      }
      case 'tool_media_dropped':
        t.line(`[tool] ${e.toolName}: attachment dropped: ${e.note}`);
        break;
      case 'tool_call_end':
        this.#toolEnd(e);
        break;
      case 'turn_end':
        this.#spinner.stop();
        break;
      case 'warning':
        t.line(`warning: ${cliAdvice(e.warning.message)}`);
        break;
      case 'retry':
        t.line(
          `[retrying in ${(e.delayMs / 1000).toFixed(1)} s (attempt ${e.attempt}): ${cliAdvice(e.error.message)}]`,
        );
        this.#spinner.start('waiting to retry…');
        break;
      case 'message_reset':
        this.discardPartialAnswer(
          `the stream was cut (${e.error.message}); asking again in ${(e.delayMs / 1000).toFixed(1)} s`,
        );
        break;
      case 'compaction_start':
        this.#spinner.start('compacting…');
        t.line(
          e.reason === 'threshold'
            ? `[compacting: ~${e.tokens} tokens near the ${e.contextWindow}-token window]`
            : e.reason === 'overflow'
              ? '[compacting: the provider refused the request as longer than the context window]'
              : `[compacting ~${e.tokens} tokens…]`,
          'dim',
        );
        break;
      case 'compaction_end':
        this.#spinner.stop();
        t.line(`[compacted the conversation: ~${e.tokensBefore} -> ~${e.tokensAfter} tokens]`);
        break;
      case 'upload_progress':
        this.#spinner.start(`uploading ${e.mediaType}: ${formatBytes(e.sent)} of ${formatBytes(e.total)}`);
        break;
      case 'upload_end':
        // A failure comes as an upload-failed warning too; a success is one dim line.
        if (e.file !== undefined)
          t.line(`[uploaded ${e.mediaType}, ${formatBytes(e.bytes)}: ${e.file}]`, 'dim');
        this.#spinner.start('waiting for the model…');
        break;
      case 'agent_end':
        this.#spinner.stop();
        break;
      default:
        break;
    }
  }

  /**
   * The partial answer on screen is void (the request is retried from the start): erase it on a terminal, or say so
   * where it cannot be erased. From a pipe it was never written.
   */
  discardPartialAnswer(reason: string): void {
    this.#thinking = undefined;
    this.#markdown = undefined;
    this.#t.setLive('pending', []);
    this.#held = '';
    if (!this.#t.tty) {
      // Nothing of it was written (piped answers are written whole).
      this.#t.line(`[${reason}; the answer restarts]`);
      return;
    }
    const mark = this.#answerMark;
    if (mark !== undefined && this.#t.eraseSince(mark)) {
      this.#t.line(`[${reason}; the answer restarts]`, 'dim');
    } else {
      this.#t.line(`[${reason}; the partial answer above is discarded and the answer restarts]`);
    }
    this.#answerMark = this.#t.mark();
  }

  #text(text: string): void {
    const t = this.#t;
    if (!t.tty) {
      this.#held += text;
      return;
    }
    if (this.#hooks.markdown === false) {
      t.out(text);
      return;
    }
    this.#markdown ??= new MarkdownStream({ width: () => t.columns, color: t.color, maxPendingRows: 12 });
    const { commit, pending } = this.#markdown.push(text);
    t.outStyled(commit);
    t.setLive('pending', pending);
  }

  #endText(): void {
    const t = this.#t;
    if (this.#markdown !== undefined) {
      const rest = this.#markdown.end();
      this.#markdown = undefined;
      t.setLive('pending', []);
      t.outStyled(rest);
    }
    if (this.#held !== '') {
      const held = this.#held;
      this.#held = '';
      t.out(held);
    }
  }

  #toolEnd(e: Extract<AgentEvent, { type: 'tool_call_end' }>): void {
    const t = this.#t;
    this.#running.delete(e.toolCallId);
    if (this.#running.size === 0) this.#spinner.stop();
    const how = e.aborted ? 'stopped' : e.isError ? 'failed' : 'done';
    t.line(`[tool] ${e.toolName} ${how} in ${Math.round(e.durationMs)} ms`);
    if (e.isError && !e.aborted) {
      const text = e.result.parts
        .filter((p) => p.type === 'text')
        .map((p) => (p as { text: string }).text)
        .join('\n');
      if (text.trim() !== '') t.line(indent(capText(text)), 'dim');
    }
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
    this.#pictures(e.result.parts, e.toolName);
  }

  /** Draw the images among `parts` inline (when the terminal can); later events wait until they are drawn. */
  #pictures(parts: readonly (StoredPart | string | { type: string })[], from: string): void {
    const protocol = this.#hooks.images ?? 'none';
    if (protocol === 'none' || !this.#t.tty) return;
    const images = parts.filter(
      (p): p is Extract<StoredPart, { type: 'image' }> => typeof p === 'object' && p.type === 'image',
    );
    if (images.length === 0) return;
    this.#deferred = [];
    const t = this.#t;
    const draw = async () => {
      for (const img of images) {
        const drawn = await inlineImage(
          {
            data: Buffer.from(img.data, 'base64'),
            mediaType: img.mediaType,
            width: img.width,
            height: img.height,
          },
          {
            protocol,
            maxColumns: Math.min(60, t.columns - 2),
            maxRows: Math.max(4, Math.floor(t.screenRows / 2)),
          },
        );
        if (drawn !== undefined) t.image(drawn);
        else t.line(`[${from}: image ${img.mediaType} ${img.width}x${img.height} could not be drawn]`, 'dim');
      }
    };
    void draw().finally(() => {
      const later = this.#deferred ?? [];
      this.#deferred = undefined;
      for (const e of later) this.handle(e);
    });
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

function capText(text: string): string {
  let s = text.length > TOOL_ERROR_CHARS ? `${text.slice(0, TOOL_ERROR_CHARS)}…` : text;
  const lines = s.split('\n');
  if (lines.length > TOOL_ERROR_LINES)
    s = `${lines.slice(0, TOOL_ERROR_LINES).join('\n')}\n… (${lines.length - TOOL_ERROR_LINES} more lines)`;
  return s;
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `       ${l}`)
    .join('\n');
}
