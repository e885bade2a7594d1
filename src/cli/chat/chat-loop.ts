/**
 * The input side of `panto chat`: the input editor on a terminal (tty/terminal-input.ts), or lines from a pipe.
 *
 * - A submitted text is a slash command (see chat-commands.ts), or a message sent with its `@path` attachments.
 * - On a terminal the editor stays open while an answer streams; text sent meanwhile is steering (`Agent.steer`):
 *   shown as `[queued] …` and delivered before the next model request. When a run ends with queued messages not
 *   delivered (it was stopped, or it finished first), they are taken back and put in the editor to send or edit —
 *   never sent later out of order. From a pipe, lines are taken one after another (a script's next line waits for the
 *   previous answer).
 * - A text over `MAX_LINE_CHARS` is refused with an error line (a turn failed), not sent, when its turn comes (after
 *   the answers to the texts before it). A text that fails as steering counts as a failed turn too.
 * - Ctrl-C or Esc during a turn aborts it and returns to the prompt; a second Ctrl-C while it stops, or Ctrl-C at an
 *   empty prompt, exits with code 0; Ctrl-C on a half-typed text clears it. Ctrl-D on an empty prompt, or the end of
 *   input, exits — after the running turn (if any) is stopped and settled: code 1 if a turn failed, else 0.
 */
import readline from 'node:readline';
import type { AgentRunResult } from '../../agent/index.js';
import { estimateTokens } from '../../compaction/index.js';
import { cliAdvice } from '../cli-advice.js';
import { errorText } from '../error-text.js';
import { completeMention, resolveMentions } from '../mentions.js';
import type { InputHistory } from '../tty/input-history.js';
import { LineEditor } from '../tty/line-editor.js';
import { type Completion, TerminalInput } from '../tty/terminal-input.js';
import { formatCount, formatDollars } from '../usage-format.js';
import type { ChatRenderer } from './chat-renderer.js';
import type { ChatSession } from './chat-session.js';
import { parseLine, type SlashCommands } from './slash-commands.js';
import type { Style, Terminal } from './terminal.js';

/** The longest text sent as a message (4 Mi characters, about a million tokens: past any context window). */
export const MAX_LINE_CHARS = 4 * 1024 * 1024;

export interface ChatLoopOptions {
  chat: ChatSession;
  renderer: ChatRenderer;
  terminal: Terminal;
  commands: SlashCommands<ChatLoop>;
  input: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
  /** Directory `@paths` resolve against. */
  cwd: string;
  /** The terminal (terminal modes are written to it). */
  output: NodeJS.WritableStream;
  /** The input history (terminal only). */
  history?: InputHistory;
  /** An input editor already started (e.g. by a session picker before the chat); else one is made. */
  terminalInput?: TerminalInput;
}

export class ChatLoop {
  chat: ChatSession;
  readonly renderer: ChatRenderer;
  readonly terminal: Terminal;
  readonly commands: SlashCommands<ChatLoop>;
  readonly interactive: boolean;
  /** Turns that ended in an error. */
  failures = 0;
  readonly #o: ChatLoopOptions;
  readonly #queue: string[] = [];
  /** Texts sent as steering during the current run, oldest first (to put back what was not delivered). */
  #steered: string[] = [];
  #busy = false;
  #pumping: Promise<void> | undefined;
  #ended = false;
  #stopping = false;
  /** Aborts a slash command's own work (e.g. /compact's summary request). */
  #commandCtl: AbortController | undefined;
  #input: TerminalInput | undefined;
  #rl: readline.Interface | undefined;
  #finish: ((code: number) => void) | undefined;
  #exitCode: number | undefined;

  constructor(options: ChatLoopOptions) {
    this.#o = options;
    this.chat = options.chat;
    this.renderer = options.renderer;
    this.terminal = options.terminal;
    this.commands = options.commands;
    this.interactive = Boolean(options.input.isTTY) && options.terminal.tty;
  }

  /** The input editor (terminal only): questions such as approvals are asked through it. */
  get input(): TerminalInput | undefined {
    return this.#input;
  }

  /** Run until exit; resolves to the exit code. */
  run(): Promise<number> {
    const done = new Promise<number>((resolve) => {
      this.#finish = resolve;
    });
    const onSigint = () => this.#onInterrupt();
    process.on('SIGINT', onSigint);
    if (this.interactive) {
      const input =
        this.#o.terminalInput ??
        new TerminalInput({
          input: this.#o.input as NodeJS.ReadStream,
          output: this.#o.output,
          terminal: this.terminal,
          editor: new LineEditor(this.#o.history),
        });
      input.setHandlers({
        submit: (text) => this.#onLine(text),
        interrupt: () => this.#onInterrupt(),
        eof: () => this.exit(this.failures > 0 ? 1 : 0),
        escape: () => this.#onEscape(),
      });
      input.setCompleter((text) => this.#complete(text));
      this.#input = input;
      input.start();
      this.updateFooter();
    } else {
      const rl = readline.createInterface({ input: this.#o.input, terminal: false });
      this.#rl = rl;
      rl.on('line', (raw) => this.#onLine(raw));
      rl.on('close', () => {
        this.#ended = true;
        if (!this.#busy) this.exit(this.failures > 0 ? 1 : 0);
      });
    }
    return done.finally(() => {
      process.off('SIGINT', onSigint);
    });
  }

  /** Leave the chat with `code` (once), after the running turn is stopped and has settled. */
  exit(code: number): void {
    if (this.#exitCode !== undefined) return;
    this.#exitCode = code;
    this.chat.agent.abort();
    this.#commandCtl?.abort();
    this.#input?.stop();
    this.#rl?.close();
    const settled = this.#pumping ?? Promise.resolve();
    void settled.finally(() => {
      this.terminal.newline();
      this.#finish?.(code);
    });
  }

  /**
   * Ask the user a question while a turn runs (a tool call that needs approval): the question is shown above the
   * editor and the next text sent answers it (instead of steering); the half-typed text is put aside meanwhile.
   * Resolves to that text, or null when `signal` aborts (Esc or Ctrl-C stops the turn), the chat exits, or there is
   * no terminal.
   */
  async ask(question: string, signal: AbortSignal): Promise<string | null> {
    const input = this.#input;
    if (input === undefined || this.#exitCode !== undefined || signal.aborted) return null;
    // The question is the status now: no spinner saying the tool runs while it waits for the user.
    this.renderer.idle();
    const answer = await input.askLine([question], signal);
    if (answer !== undefined) this.renderer.waiting('running…');
    return answer ?? null;
  }

  /** A signal for a slash command's own long work, aborted by Ctrl-C or Esc. */
  commandSignal(): AbortSignal {
    this.#commandCtl = new AbortController();
    return this.#commandCtl.signal;
  }

  /** Show a status line. */
  say(text: string, style?: Style): void {
    this.terminal.line(text, style);
  }

  /** The footer under the editor: model, context use against the window, session cost. */
  updateFooter(): void {
    if (!this.interactive) return;
    const chat = this.chat;
    const agent = chat.agent;
    const messages = agent.messages;
    let tokens = estimateTokens(messages, { imageTokenRule: chat.model.imageTokenRule });
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i];
      if (m?.role !== 'assistant' || m.usage === undefined) continue;
      const u = m.usage;
      const reported = u.inputTokens + (u.cacheReadTokens ?? 0) + (u.cacheWriteTokens ?? 0) + u.outputTokens;
      tokens = Math.max(
        tokens,
        reported + estimateTokens(messages.slice(i + 1), { imageTokenRule: chat.model.imageTokenRule }),
      );
      break;
    }
    const window = agent.contextWindow;
    const pct = window > 0 ? Math.round((tokens / window) * 100) : 0;
    let usage: ChatSession['usage'] | undefined;
    try {
      usage = chat.usage;
    } catch {
      // a damaged resumed log: no cost in the footer
      usage = undefined;
    }
    const cost =
      usage === undefined || (usage.unpricedRequests > 0 && usage.cost === 0)
        ? ''
        : ` · ${formatDollars(usage.cost)}`;
    const text = `${chat.model.id} · context ~${formatCount(tokens)}/${formatCount(window)} (${pct}%)${cost} · /help`;
    this.terminal.setLive('footer', [this.terminal.color ? `\x1b[2m${text}\x1b[0m` : text]);
  }

  /** Run the agent (`prompt` content, or `continue` when undefined) and report how it ended. */
  async runTurn(content?: Parameters<ChatSession['agent']['prompt']>[0]): Promise<AgentRunResult> {
    await this.chat.ensureSession();
    const agent = this.chat.agent;
    this.#stopping = false;
    this.#steered = [];
    this.renderer.waiting();
    let result: AgentRunResult;
    try {
      result = content === undefined ? await agent.continue() : await agent.prompt(content);
    } finally {
      this.renderer.idle();
    }
    this.terminal.newline();
    if (result.stopReason === 'aborted') {
      this.say('[stopped; the partial answer is kept in the log but not sent again; /retry asks again]');
    } else if (result.error) {
      this.failures++;
      this.say(
        `error: ${cliAdvice(result.error.message)}${result.error.code ? ` [${result.error.code}]` : ''} (/retry tries again)`,
      );
    } else if (result.stopReason === 'max_turns') {
      this.say('stopped: the turn limit was reached while the model still wanted tools run (/retry goes on)');
    } else if (result.stopReason !== 'end') {
      this.say(`stopped: ${result.stopReason}`);
    }
    this.#takeBackSteering();
    this.updateFooter();
    return result;
  }

  /** Queued messages the run did not deliver go back into the editor (oldest first, above what is typed there). */
  #takeBackSteering(): void {
    const left = this.chat.agent.takeSteering();
    const texts = this.#steered.slice(this.#steered.length - left.length);
    this.#steered = [];
    if (left.length === 0) return;
    const input = this.#input;
    if (input === undefined || this.#exitCode !== undefined) return;
    const typed = input.editor.text;
    input.setText([...texts, ...(typed === '' ? [] : [typed])].join('\n'));
    this.say(
      `[${left.length} queued message${left.length === 1 ? ' was' : 's were'} not sent; ${left.length === 1 ? 'it is' : 'they are'} back in the editor]`,
      'dim',
    );
  }

  #onLine(raw: string): void {
    if (this.#exitCode !== undefined) return;
    const steering = this.interactive && this.chat.agent.running;
    if (this.interactive && !steering && raw.trim() !== '') this.#echo(raw);
    if (steering) {
      this.#steer(raw).catch((err: unknown) => {
        this.failures++;
        this.say(`error: ${errorText(err)}`);
      });
      return;
    }
    this.#queue.push(raw);
    void this.#pump();
  }

  /** What was sent, above the answer (the editor is cleared): at most 12 lines of it. */
  #echo(raw: string): void {
    const lines = raw.split('\n');
    const shown = lines
      .slice(0, 12)
      .map((l, i) => `${i === 0 ? '> ' : '  '}${l.length > 2000 ? `${l.slice(0, 2000)}…` : l}`);
    if (lines.length > 12) shown.push(`  … ${lines.length - 12} more lines`);
    this.terminal.line(shown.join('\n'));
  }

  /**
   * Refuse a text over `MAX_LINE_CHARS` (an error line; a turn failed). Checked where a text is taken — its turn in
   * the queue, or as steering — so the refusal never lands in the middle of an earlier answer.
   */
  #overCap(raw: string): boolean {
    if (raw.length <= MAX_LINE_CHARS) return false;
    // Past any model's context window; sending it would only multiply it in memory (log, request, estimates).
    this.failures++;
    this.terminal.newline();
    this.say(
      `error: a message of ${raw.length} characters is over the ${MAX_LINE_CHARS}-character cap; not sent` +
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
      this.say(`[/${parsed.name} waits until the turn ends (Esc or Ctrl-C stops it)]`);
      this.#queue.push(line);
      return;
    }
    const mentions = await this.#mentions(parsed.text);
    if (!this.chat.agent.running) {
      // The run ended while the attachments were read: this is the next prompt.
      this.#queue.push(raw);
      void this.#pump();
      return;
    }
    this.chat.agent.steer(mentions);
    this.#steered.push(raw);
    this.say(`[queued] ${parsed.text} — delivered before the next model request`, 'dim');
  }

  #pump(): Promise<void> {
    if (this.#busy) return this.#pumping ?? Promise.resolve();
    this.#busy = true;
    this.#pumping = (async () => {
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
        }
      } finally {
        this.#busy = false;
      }
      if (this.#ended) this.exit(this.failures > 0 ? 1 : 0);
    })();
    return this.#pumping;
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
      this.updateFooter();
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

  /** Tab: slash command names at the start of the text, else the `@path` being typed. */
  async #complete(text: string): Promise<Completion | undefined> {
    const cmd = /^\/(\S*)$/.exec(text);
    if (cmd) {
      const prefix = (cmd[1] ?? '').toLowerCase();
      const items = this.commands
        .list()
        .map((c) => `/${c.name}`)
        .filter((n) => n.startsWith(`/${prefix}`))
        .sort();
      return { start: 0, items: items.length === 1 ? [`${items[0]} `] : items };
    }
    const [items, token] = await completeMention(text, this.#o.cwd);
    return { start: text.length - token.length, items };
  }

  #onEscape(): void {
    if (this.chat.agent.running) {
      if (!this.#stopping) this.#stop();
      return;
    }
    if (this.#commandCtl) {
      this.#commandCtl.abort();
      this.say('[stopping the command]');
    }
  }

  #stop(): void {
    this.#stopping = true;
    this.chat.agent.abort();
    this.terminal.newline();
    this.say('[stopping the turn — Ctrl-C again exits]');
  }

  #onInterrupt(): void {
    if (this.chat.agent.running) {
      if (this.#stopping) {
        this.exit(0);
        return;
      }
      this.#stop();
      return;
    }
    if (this.#commandCtl) {
      this.#commandCtl.abort();
      this.say('[stopping the command]');
      return;
    }
    const input = this.#input;
    if (input !== undefined && input.editor.text.length > 0) {
      // As in a shell: Ctrl-C on a half-typed text drops it.
      input.setText('');
      return;
    }
    this.exit(0);
  }
}
