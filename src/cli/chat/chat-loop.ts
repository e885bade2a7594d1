/**
 * The input side of `panto chat`: lines from a terminal (readline, Tab completion of `@paths`) or a pipe.
 *
 * - A line is a slash command (see chat-commands.ts), or text sent with its `@path` attachments.
 * - On a terminal, text typed while an answer streams is steering (`Agent.steer`): shown as `[queued] …` and delivered
 *   before the next model request; its echo is held back so it is never mixed into the answer. From a pipe, lines are
 *   taken one after another (a script's next line waits for the previous answer).
 * - A line over `MAX_LINE_CHARS` is refused with an error line (a turn failed), not sent, when its turn comes (after
 *   the answers to the lines before it). A line that fails as steering counts as a failed turn too, as a queued one does.
 * - Ctrl-C during a turn aborts it and returns to the prompt; Ctrl-C at the prompt (on an empty line) or a second
 *   Ctrl-C while the abort settles exits with code 0. Ctrl-D / end of input exits: code 1 if a turn failed, else 0.
 */
import readline from 'node:readline';
import type { AgentRunResult } from '../../agent/index.js';
import { errorText } from '../error-text.js';
import { completeMention, resolveMentions } from '../mentions.js';
import type { ChatRenderer } from './chat-renderer.js';
import type { ChatSession } from './chat-session.js';
import { MutedOutput } from './muted-output.js';
import { parseLine, type SlashCommands } from './slash-commands.js';
import type { Style, Terminal } from './terminal.js';

/** The longest line sent as a message (4 Mi characters, about a million tokens: past any context window). */
export const MAX_LINE_CHARS = 4 * 1024 * 1024;

export interface ChatLoopOptions {
  chat: ChatSession;
  renderer: ChatRenderer;
  terminal: Terminal;
  commands: SlashCommands<ChatLoop>;
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  output: NodeJS.WritableStream & { isTTY?: boolean; columns?: number; rows?: number };
  /** Directory `@paths` resolve against. */
  cwd: string;
}

export class ChatLoop {
  readonly chat: ChatSession;
  readonly renderer: ChatRenderer;
  readonly terminal: Terminal;
  readonly commands: SlashCommands<ChatLoop>;
  readonly interactive: boolean;
  /** Turns that ended in an error. */
  failures = 0;
  readonly #o: ChatLoopOptions;
  readonly #queue: string[] = [];
  #busy = false;
  #ended = false;
  #stopping = false;
  /** Aborts a slash command's own work (e.g. /compact's summary request). */
  #commandCtl: AbortController | undefined;
  #rl: readline.Interface | undefined;
  #muted: MutedOutput | undefined;
  #finish: ((code: number) => void) | undefined;
  #exitCode: number | undefined;
  /** A question waiting for the user's next line (`ask`). */
  #asking: ((line: string | null) => void) | undefined;

  constructor(options: ChatLoopOptions) {
    this.#o = options;
    this.chat = options.chat;
    this.renderer = options.renderer;
    this.terminal = options.terminal;
    this.commands = options.commands;
    this.interactive = Boolean(options.input.isTTY);
  }

  /** Run until exit; resolves to the exit code. */
  run(): Promise<number> {
    const done = new Promise<number>((resolve) => {
      this.#finish = resolve;
    });
    const muted = this.interactive ? new MutedOutput(this.#o.output) : undefined;
    this.#muted = muted;
    const rl = readline.createInterface({
      input: this.#o.input,
      output: muted ?? this.#o.output,
      terminal: this.interactive,
      completer: (line: string, cb: (err: Error | null, result: [string[], string]) => void) => {
        completeMention(line, this.#o.cwd).then(
          (r) => cb(null, r),
          () => cb(null, [[], line]),
        );
      },
    });
    this.#rl = rl;
    rl.on('line', (raw) => this.#onLine(raw));
    rl.on('close', () => {
      this.#ended = true;
      this.#asking?.(null);
      if (!this.#busy) this.exit(this.failures > 0 ? 1 : 0);
    });
    const onSigint = () => this.#onInterrupt();
    if (this.interactive) rl.on('SIGINT', onSigint);
    else process.on('SIGINT', onSigint);
    this.#prompt();
    return done.finally(() => {
      process.off('SIGINT', onSigint);
    });
  }

  /** Leave the chat with `code` (once). */
  exit(code: number): void {
    if (this.#exitCode !== undefined) return;
    this.#exitCode = code;
    this.#asking?.(null);
    this.chat.agent.abort();
    this.#commandCtl?.abort();
    if (this.#muted) this.#muted.muted = false;
    this.#rl?.close();
    this.#finish?.(code);
  }

  /**
   * Ask the user a question while a turn runs (a tool call that needs approval): the next line typed answers it
   * (instead of steering). Resolves to that line, or null when `signal` aborts (Ctrl-C stops the turn), the input
   * ends, or there is no terminal.
   */
  ask(question: string, signal: AbortSignal): Promise<string | null> {
    if (!this.interactive || this.#exitCode !== undefined || this.#ended || signal.aborted) {
      return Promise.resolve(null);
    }
    this.#asking?.(null);
    return new Promise((resolve) => {
      const done = (line: string | null) => {
        if (this.#asking !== done) return;
        this.#asking = undefined;
        signal.removeEventListener('abort', onAbort);
        if (this.#muted) this.#muted.muted = this.chat.agent.running;
        resolve(line);
      };
      const onAbort = () => done(null);
      signal.addEventListener('abort', onAbort, { once: true });
      this.#asking = done;
      if (this.#muted) this.#muted.muted = false;
      this.terminal.newline();
      this.#rl?.setPrompt(question);
      this.#rl?.prompt(true);
    });
  }

  /** A signal for a slash command's own long work, aborted by Ctrl-C. */
  commandSignal(): AbortSignal {
    this.#commandCtl = new AbortController();
    return this.#commandCtl.signal;
  }

  /** Show a status line. */
  say(text: string, style?: Style): void {
    this.terminal.line(text, style);
  }

  /** Run the agent (`prompt` content, or `continue` when undefined) and report how it ended. */
  async runTurn(content?: Parameters<ChatSession['agent']['prompt']>[0]): Promise<AgentRunResult> {
    await this.chat.ensureSession();
    const agent = this.chat.agent;
    this.#stopping = false;
    if (this.#muted) this.#muted.muted = true;
    let result: AgentRunResult;
    try {
      result = content === undefined ? await agent.continue() : await agent.prompt(content);
    } finally {
      if (this.#muted) this.#muted.muted = false;
    }
    this.terminal.newline();
    if (result.stopReason === 'aborted') {
      this.say('[stopped; the partial answer is kept in the log but not sent again; /retry asks again]');
    } else if (result.error) {
      this.failures++;
      this.say(
        `error: ${result.error.message}${result.error.code ? ` [${result.error.code}]` : ''} (/retry tries again)`,
      );
    } else if (result.stopReason === 'max_turns') {
      this.say('stopped: the turn limit was reached while the model still wanted tools run (/retry goes on)');
    } else if (result.stopReason !== 'end') {
      this.say(`stopped: ${result.stopReason}`);
    }
    return result;
  }

  #onLine(raw: string): void {
    if (this.#exitCode !== undefined) return;
    if (this.#asking !== undefined) {
      this.#asking(raw);
      return;
    }
    if (this.interactive && this.chat.agent.running) {
      this.#steer(raw).catch((err: unknown) => {
        this.failures++;
        this.say(`error: ${errorText(err)}`);
      });
      return;
    }
    this.#queue.push(raw);
    void this.#pump();
  }

  /**
   * Refuse a line over `MAX_LINE_CHARS` (an error line; a turn failed). Checked where a line is taken — its turn in the
   * queue, or as steering — so the refusal never lands in the middle of an earlier answer.
   */
  #overCap(raw: string): boolean {
    if (raw.length <= MAX_LINE_CHARS) return false;
    // Past any model's context window; sending it would only multiply it in memory (log, request, estimates).
    this.failures++;
    this.terminal.newline();
    this.say(
      `error: a line of ${raw.length} characters is over the ${MAX_LINE_CHARS}-character cap; not sent` +
        ' (attach a long text as a file: @path)',
    );
    return true;
  }

  async #steer(raw: string): Promise<void> {
    if (this.#overCap(raw)) return;
    const line = raw.trim();
    if (line === '') return;
    const parsed = parseLine(line);
    if (parsed.type === 'command') {
      const command = this.commands.get(parsed.name);
      if (command?.whileRunning) {
        await this.#command(parsed.name, parsed.args);
        return;
      }
      this.say(`[/${parsed.name} waits until the turn ends (Ctrl-C stops it)]`);
      this.#queue.push(line);
      return;
    }
    const mentions = await this.#mentions(parsed.text);
    this.chat.agent.steer(mentions);
    this.say(`[queued] ${parsed.text} — delivered before the next model request`, 'dim');
  }

  async #pump(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    try {
      while (this.#queue.length > 0 && this.#exitCode === undefined) {
        const raw = this.#queue.shift() as string;
        try {
          await this.#handle(raw);
        } catch (err) {
          // A turn that could not start (the session file cannot be created, a mention cannot be read): the chat
          // goes on, and the exit code says a turn failed.
          this.failures++;
          this.terminal.newline();
          this.say(`error: ${errorText(err)}`);
        }
        if (this.#queue.length === 0) this.#prompt();
      }
    } finally {
      this.#busy = false;
    }
    if (this.#ended) this.exit(this.failures > 0 ? 1 : 0);
  }

  async #handle(raw: string): Promise<void> {
    if (this.#overCap(raw)) return;
    const line = raw.trim();
    if (line === '') return;
    const parsed = parseLine(line);
    if (parsed.type === 'command') {
      await this.#command(parsed.name, parsed.args);
      return;
    }
    const content = await this.#mentions(parsed.text);
    await this.runTurn(content);
  }

  async #command(name: string, args: string): Promise<void> {
    const command = this.commands.get(name);
    if (!command) {
      this.say(`error: ${this.commands.unknownMessage(name)}`);
      return;
    }
    try {
      const outcome = await command.run(args, this);
      if (outcome === 'exit') this.exit(this.failures > 0 ? 1 : 0);
    } catch (err) {
      this.say(`error: /${command.name}: ${errorText(err)}`);
    } finally {
      this.#commandCtl = undefined;
    }
  }

  async #mentions(text: string) {
    const model = this.chat.model;
    const resolved = await resolveMentions(text, {
      cwd: this.#o.cwd,
      accepts: { image: model.input.image, pdf: model.input.pdf },
      modelId: model.id,
    });
    for (const note of resolved.notes) this.say(`note: ${note}`);
    if (resolved.attached.length > 0) this.say(`attached: ${resolved.attached.join(', ')}`);
    return resolved.content;
  }

  #onInterrupt(): void {
    const agent = this.chat.agent;
    if (agent.running) {
      if (this.#stopping) {
        this.exit(0);
        return;
      }
      this.#stopping = true;
      agent.abort();
      this.terminal.newline();
      this.say('[stopping the turn — Ctrl-C again exits]');
      return;
    }
    if (this.#commandCtl) {
      this.#commandCtl.abort();
      this.say('[stopping the command]');
      return;
    }
    const typed = (this.#rl as (readline.Interface & { line?: string }) | undefined)?.line ?? '';
    if (this.interactive && typed.length > 0) {
      // As in a shell: Ctrl-C on a half-typed line drops it.
      this.#rl?.write('', { ctrl: true, name: 'u' });
      return;
    }
    this.terminal.newline();
    this.exit(0);
  }

  #prompt(): void {
    if (!this.interactive || this.#exitCode !== undefined) return;
    this.#rl?.setPrompt('> ');
    this.#rl?.prompt(true);
  }
}
