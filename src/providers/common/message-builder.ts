/**
 * Assembles an `AssistantMessage` from surface-neutral operations and emits the matching `StreamEvent`s.
 *
 * Blocks are addressed by a surface-chosen `key` (Anthropic block index, Responses item id, Chat tool-call index...).
 * A key stays open until `close(key)`; operations on a closed or unknown key open a new block at the end, so blocks
 * keep the order in which the provider produced them. Tool-call arguments are accumulated as raw JSON text and parsed
 * once, when the call is closed: a call whose arguments are not a JSON object (or are nested deeper than
 * `MAX_ARGUMENT_DEPTH`) keeps `input: {}` and records the raw text and the reason in `providerData.invalidArguments`
 * (the agent answers it with an error result).
 *
 * Memory is bounded: more than `limits.maxChars` characters of text, thinking, signatures and argument deltas in all
 * (default `MAX_MESSAGE_CHARS`), or more than `limits.maxBlocks` blocks (default `MAX_MESSAGE_BLOCKS`), throws a
 * non-retryable `ProviderError`, so an endless stream cannot grow the message until the process runs out of memory.
 *
 * A block opened under a key that still holds an open block (a provider that starts two blocks at one index) first
 * closes the open one, so two calls are never merged and a call is never left unparsed.
 */

import type {
  AssistantMessage,
  StopReason,
  TextBlock,
  ThinkingBlock,
  ToolCallBlock,
  Usage,
} from '../../conversation.js';
import { ProviderError } from '../transport/provider-error.js';
import { MAX_ARGUMENT_DEPTH, nestedDeeperThan } from './argument-depth.js';
import { parseArguments } from './response-common.js';
import type { StreamEvent } from './stream-event.js';

/**
 * Text and thinking deltas are collected in `pending`, joined into a flat run every `PENDING_JOIN` pieces, and the runs
 * are joined into the block's text when the block closes or the message is built. Appending each small piece to a
 * growing string keeps every piece alive as a rope node, and even appending each run made every young-generation GC
 * walk the growing rope: together they made garbage collection half the cost of parsing a long stream (bench:agent).
 */
const PENDING_JOIN = 64;

/** Most characters one response may stream (text, thinking, signatures, arguments): far above any model's output. */
export const MAX_MESSAGE_CHARS = 128 * 1024 * 1024;
/** Most blocks one response may open. */
export const MAX_MESSAGE_BLOCKS = 100_000;

/** Bounds of one `MessageBuilder` (tests lower them). */
export interface MessageLimits {
  /** The wire API named in the error. */
  api?: string;
  maxChars?: number;
  maxBlocks?: number;
}

type OpenBlock =
  | { kind: 'text'; index: number; block: TextBlock; pending: string[]; runs: string[] }
  | { kind: 'thinking'; index: number; block: ThinkingBlock; pending: string[]; runs: string[] }
  | { kind: 'tool'; index: number; block: ToolCallBlock; args: string; closed: boolean };

export class MessageBuilder {
  readonly #emit: (event: StreamEvent) => void;
  readonly #content: AssistantMessage['content'] = [];
  readonly #open = new Map<string, OpenBlock>();
  #usage: Usage | undefined;
  model: string | undefined;
  /** Set once any text/thinking/tool delta was emitted (the attempt can no longer be retried invisibly). */
  emittedContent = false;

  readonly #api: string;
  readonly #maxChars: number;
  readonly #maxBlocks: number;
  /** Characters streamed so far (see `MAX_MESSAGE_CHARS`). */
  #chars = 0;

  constructor(emit: (event: StreamEvent) => void, limits: MessageLimits = {}) {
    this.#emit = emit;
    this.#api = limits.api ?? 'stream';
    this.#maxChars = limits.maxChars ?? MAX_MESSAGE_CHARS;
    this.#maxBlocks = limits.maxBlocks ?? MAX_MESSAGE_BLOCKS;
  }

  /** Count `n` more streamed characters; throw when the message outgrows its bound. */
  #grow(n: number): void {
    this.#chars += n;
    if (this.#chars > this.#maxChars) this.#refuse(`more than ${this.#maxChars} characters`);
  }

  /** Add a block to the content; throw when the message has too many. */
  #push(block: AssistantMessage['content'][number]): number {
    if (this.#content.length >= this.#maxBlocks) this.#refuse(`more than ${this.#maxBlocks} blocks`);
    return this.#content.push(block) - 1;
  }

  #refuse(what: string): never {
    throw new ProviderError({
      api: this.#api,
      providerMessage: `the response streamed ${what}; refusing to buffer it`,
      retryable: false,
    });
  }

  get usage(): Usage | undefined {
    return this.#usage;
  }

  text(key: string, delta: string): void {
    if (delta.length === 0) return;
    let open = this.#open.get(key);
    if (open?.kind !== 'text') {
      if (open !== undefined) this.close(key);
      const block: TextBlock = { type: 'text', text: '' };
      open = { kind: 'text', index: this.#push(block), block, pending: [], runs: [] };
      this.#open.set(key, open);
    }
    this.#grow(delta.length);
    if (open.pending.push(delta) >= PENDING_JOIN) joinRun(open);
    this.emittedContent = true;
    this.#emit({ type: 'text_delta', blockIndex: open.index, text: delta });
  }

  thinking(key: string, delta: string): void {
    const open = this.#thinkingBlock(key);
    if (delta.length === 0) return;
    this.#grow(delta.length);
    if (open.pending.push(delta) >= PENDING_JOIN) joinRun(open);
    this.emittedContent = true;
    this.#emit({ type: 'thinking_delta', blockIndex: open.index, text: delta });
  }

  /** Set (or append to) the opaque signature of the thinking block under `key`. */
  thinkingSignature(key: string, signature: string, append = false): void {
    const open = this.#thinkingBlock(key);
    this.#grow(signature.length);
    open.block.signature = append ? (open.block.signature ?? '') + signature : signature;
  }

  /** A redacted thinking block: no readable text, the opaque payload kept in `signature`. */
  redactedThinking(key: string, data: string): void {
    const open = this.#thinkingBlock(key);
    this.#grow(data.length);
    open.block.redacted = true;
    open.block.signature = data;
  }

  toolStart(key: string, id: string, name: string, providerData?: Record<string, unknown>): void {
    if (this.#open.has(key)) this.close(key);
    const block: ToolCallBlock = { type: 'tool_call', id, name, input: {} };
    if (providerData !== undefined) block.providerData = providerData;
    const index = this.#push(block);
    this.#open.set(key, { kind: 'tool', index, block, args: '', closed: false });
    this.emittedContent = true;
    this.#emit({ type: 'toolcall_start', blockIndex: index, id, name });
  }

  /** True when a tool call is open under `key`. */
  hasTool(key: string): boolean {
    return this.#open.get(key)?.kind === 'tool';
  }

  /** True when a text block is open under `key`. */
  hasText(key: string): boolean {
    return this.#open.get(key)?.kind === 'text';
  }

  /** True when a thinking block is open under `key`. */
  hasThinking(key: string): boolean {
    return this.#open.get(key)?.kind === 'thinking';
  }

  toolArgs(key: string, delta: string): void {
    const open = this.#open.get(key);
    if (open?.kind !== 'tool' || open.closed || delta.length === 0) return;
    this.#grow(delta.length);
    open.args += delta;
    this.#emit({ type: 'toolcall_delta', blockIndex: open.index, id: open.block.id, argumentsDelta: delta });
  }

  /** Update the id/name of an open call (some servers send them after the first chunk). */
  toolIdentity(key: string, id: string | undefined, name: string | undefined): void {
    const open = this.#open.get(key);
    if (open?.kind !== 'tool') return;
    if (id) open.block.id = id;
    if (name) open.block.name = name;
  }

  /** Merge `data` into the `providerData` of the open call under `key`. */
  toolData(key: string, data: Record<string, unknown>): void {
    const open = this.#open.get(key);
    if (open?.kind !== 'tool') return;
    open.block.providerData = { ...open.block.providerData, ...data };
  }

  /**
   * Close the call under `key`. `fullArguments`, when given, replaces the accumulated delta text (providers send the
   * authoritative full string at the end).
   */
  toolEnd(key: string, fullArguments?: string): void {
    const open = this.#open.get(key);
    if (open?.kind !== 'tool' || open.closed) return;
    if (fullArguments !== undefined) open.args = fullArguments;
    this.#closeTool(open);
    this.#open.delete(key);
  }

  /** Close whatever is open under `key` (tool calls are finalised). */
  close(key: string): void {
    const open = this.#open.get(key);
    if (open === undefined) return;
    if (open.kind === 'tool') this.#closeTool(open);
    else joinPending(open);
    this.#open.delete(key);
  }

  /** Close every open block; open tool calls are finalised (parsed, `toolcall_end` emitted) in content order. */
  closeAll(): void {
    const opens = [...this.#open.values()].sort((a, b) => a.index - b.index);
    for (const o of opens) {
      if (o.kind === 'tool') this.#closeTool(o);
      else joinPending(o);
    }
    this.#open.clear();
  }

  setUsage(usage: Usage): void {
    this.#usage = usage;
    this.#emit({ type: 'usage', usage });
  }

  /** The number of blocks so far (including empty ones that `build` will drop). */
  get blockCount(): number {
    return this.#content.length;
  }

  /** The number of tool calls so far. */
  get toolCallCount(): number {
    let n = 0;
    for (const b of this.#content) if (b.type === 'tool_call') n++;
    return n;
  }

  /**
   * The message as it stands. Unfinished tool calls are dropped from a message that did not end normally
   * (`error`/`aborted`), so history never holds a call whose arguments were cut off.
   */
  build(stopReason: StopReason, errorMessage?: string): AssistantMessage {
    const complete = stopReason !== 'error' && stopReason !== 'aborted';
    if (complete) this.closeAll();
    else for (const o of this.#open.values()) if (o.kind !== 'tool') joinPending(o);
    const unfinished = new Set<ToolCallBlock>();
    if (!complete) {
      for (const o of this.#open.values()) if (o.kind === 'tool' && !o.closed) unfinished.add(o.block);
    }
    const content = this.#content.filter((b) => {
      if (b.type === 'text') return b.text.length > 0;
      if (b.type === 'thinking') return b.text.length > 0 || b.signature !== undefined;
      return !unfinished.has(b);
    });
    const message: AssistantMessage = { role: 'assistant', content, stopReason };
    if (this.#usage !== undefined) message.usage = this.#usage;
    if (this.model !== undefined) message.model = this.model;
    if (errorMessage !== undefined) message.errorMessage = errorMessage;
    return message;
  }

  #thinkingBlock(key: string): Extract<OpenBlock, { kind: 'thinking' }> {
    let open = this.#open.get(key);
    if (open?.kind !== 'thinking') {
      if (open !== undefined) this.close(key);
      const block: ThinkingBlock = { type: 'thinking', text: '' };
      open = { kind: 'thinking', index: this.#push(block), block, pending: [], runs: [] };
      this.#open.set(key, open);
    }
    return open;
  }

  #closeTool(open: Extract<OpenBlock, { kind: 'tool' }>): void {
    if (open.closed) return;
    open.closed = true;
    let { input, invalid } = parseArguments(open.args);
    if (invalid === undefined && nestedDeeperThan(input, MAX_ARGUMENT_DEPTH)) {
      input = {};
      invalid = { raw: open.args, error: `arguments nested deeper than ${MAX_ARGUMENT_DEPTH} levels` };
    }
    open.block.input = input;
    if (invalid) open.block.providerData = { ...open.block.providerData, invalidArguments: invalid };
    this.#emit({ type: 'toolcall_end', blockIndex: open.index, call: open.block });
  }
}

/** Join the collected deltas of a text/thinking block into one run (a flat string), kept until the block closes. */
function joinRun(open: { pending: string[]; runs: string[] }): void {
  open.runs.push(open.pending.join(''));
  open.pending.length = 0;
}

/**
 * Move the collected runs and deltas of a text/thinking block into its text. The runs are appended as a rope (one
 * string node per run, built in well under a millisecond): joining a long block into one fresh flat string costs a
 * multi-megabyte allocation that V8 makes anyway, once, when something first needs the text flat (e.g. JSON.stringify).
 */
function joinPending(open: { block: TextBlock | ThinkingBlock; pending: string[]; runs: string[] }): void {
  if (open.pending.length > 0) joinRun(open);
  const runs = open.runs;
  if (runs.length === 0) return;
  let text = open.block.text;
  for (let i = 0; i < runs.length; i++) text += runs[i] as string;
  open.block.text = text;
  runs.length = 0;
}
