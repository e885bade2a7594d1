/**
 * Slash commands of `panto chat`: a line starting with `/name` runs a command instead of being sent. An unknown
 * `/name` is an error (with the closest names), never a prompt; `//text` sends `/text` as an ordinary message.
 */

export interface SlashCommand<Ctx> {
  name: string;
  /** Argument synopsis for /help, e.g. `[MODEL]`. */
  args?: string;
  summary: string;
  /** Also allowed while a turn runs (the others wait for the prompt). */
  whileRunning?: boolean;
  run: (args: string, ctx: Ctx) => Promise<SlashOutcome | undefined> | SlashOutcome | undefined;
}

/** `exit`: leave the chat. */
export type SlashOutcome = 'exit';

export type ParsedLine =
  | { type: 'command'; name: string; args: string }
  /** Text to send (`//x` unescaped to `/x`). */
  | { type: 'text'; text: string };

/** Classify a trimmed input line. */
export function parseLine(line: string): ParsedLine {
  if (line.startsWith('//')) return { type: 'text', text: line.slice(1) };
  const m = /^\/(\S*)(?:\s+([\s\S]*))?$/.exec(line);
  if (!m) return { type: 'text', text: line };
  return { type: 'command', name: (m[1] ?? '').toLowerCase(), args: (m[2] ?? '').trim() };
}

/** Levenshtein distance, for "did you mean". */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j] as number;
      row[j] = Math.min(
        (row[j] as number) + 1,
        (row[j - 1] as number) + 1,
        prev + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      prev = cur;
    }
  }
  return row[b.length] as number;
}

export class SlashCommands<Ctx> {
  readonly #byName = new Map<string, SlashCommand<Ctx>>();
  readonly #aliases = new Map<string, string>();

  constructor(commands: readonly SlashCommand<Ctx>[], aliases: Record<string, string> = {}) {
    for (const c of commands) this.#byName.set(c.name, c);
    for (const [alias, target] of Object.entries(aliases)) this.#aliases.set(alias, target);
  }

  get(name: string): SlashCommand<Ctx> | undefined {
    return this.#byName.get(this.#aliases.get(name) ?? name);
  }

  list(): SlashCommand<Ctx>[] {
    return [...this.#byName.values()];
  }

  /** The error for an unknown `/name`, naming the closest commands. */
  unknownMessage(name: string): string {
    const close = this.list()
      .map((c) => ({ name: c.name, d: editDistance(name, c.name) }))
      .filter((c) => c.d <= Math.max(1, Math.floor(name.length / 2)) || c.name.startsWith(name))
      .sort((a, b) => a.d - b.d)
      .map((c) => `/${c.name}`);
    return (
      `unknown command '/${name}'` +
      (close.length > 0 ? ` (did you mean ${close.slice(0, 3).join(', ')}?)` : '') +
      '; /help lists the commands; start a line with // to send text that begins with /'
    );
  }

  /** The /help text. */
  help(): string {
    const heads = this.list().map((c) => `/${c.name}${c.args ? ` ${c.args}` : ''}`);
    const width = Math.max(...heads.map((h) => h.length)) + 2;
    const rows = this.list().map((c, i) => `  ${(heads[i] as string).padEnd(width)}${c.summary}`);
    return `Commands:\n${rows.join('\n')}`;
  }
}
