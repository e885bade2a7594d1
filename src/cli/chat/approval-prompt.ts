/**
 * `panto chat` deciding on calls that need approval (tools/approval.ts): `--yes` approves all; `--allow LIST` approves
 * calls of the tools named there, and of tools all of whose capabilities are named there (`--allow exec,write_file`);
 * an answer "always" approves the tool for the rest of the chat. Otherwise the user is asked on the terminal, with
 * the call shown (the command line of a command, the path and a change summary of a write, else the arguments):
 * `y` runs it, `n` (optionally followed by a reason the model reads) or an empty line declines it, `a` runs it and
 * every later call of that tool. With no terminal to ask, a call is declined, saying how to allow it.
 */

import path from 'node:path';
import type { ToolCallBlock } from '../../conversation.js';
import { readRegularFile } from '../../regular-file.js';
import type { ToolDecl } from '../../tool.js';
import type { ApprovalDecision, ApprovalInfo } from '../../tools/approval.js';
import { visibleControls } from '../safe-text.js';

export interface ChatApproverOptions {
  /** `--allow`: tool names and capabilities. */
  allow: ReadonlySet<string>;
  /** `--yes`: approve every call. */
  yes: boolean;
  /** Whether a user can be asked (stdin is a terminal). */
  interactive: boolean;
  /** Ask on the terminal: the next line the user types, or null (aborted, input ended). */
  ask: (question: string, signal: AbortSignal) => Promise<string | null>;
  /** Show lines before the question. */
  say: (text: string) => void;
  workspaceRoot: string;
}

export class ChatApprover {
  readonly #o: ChatApproverOptions;
  /** Tools the user answered "always" for. */
  readonly #always = new Set<string>();

  constructor(options: ChatApproverOptions) {
    this.#o = options;
  }

  /** The `approveToolCall` of the chat's agent. */
  readonly approve = async (call: ToolCallBlock, info: ApprovalInfo): Promise<ApprovalDecision> => {
    const o = this.#o;
    if (o.yes || this.#always.has(call.name) || allowedByFlag(info.tool, o.allow)) return true;
    if (!o.interactive) {
      return {
        approved: false,
        reason:
          `'${call.name}' needs approval and there is no terminal to ask (allow it with --allow ${call.name}` +
          `${info.tool.capabilities?.length ? ` or --allow ${info.tool.capabilities.join(',')}` : ''}, or --yes)`,
      };
    }
    for (const line of await describeCall(call, info.tool, o.workspaceRoot)) o.say(line);
    const answer = await o.ask(
      `allow? [y]es / [n]o (a reason may follow) / [a]lways for '${call.name}': `,
      info.signal,
    );
    if (answer === null) return { approved: false, reason: 'no answer (the turn was stopped)' };
    const parsed = parseAnswer(answer);
    if (parsed.kind === 'always') this.#always.add(call.name);
    if (parsed.kind !== 'no') return true;
    return parsed.reason === undefined ? false : { approved: false, reason: parsed.reason };
  };
}

/** Whether `--allow` covers the tool: its name, or every capability it declares (a tool declaring none: by name). */
export function allowedByFlag(tool: ToolDecl, allow: ReadonlySet<string>): boolean {
  if (allow.has(tool.name)) return true;
  const caps = tool.capabilities ?? [];
  return caps.length > 0 && caps.every((c) => allow.has(c));
}

/** `y`/`yes`, `a`/`always`, or anything else: no, with what follows `n`/`no` as the reason. */
export function parseAnswer(line: string): { kind: 'yes' | 'always' } | { kind: 'no'; reason?: string } {
  const t = line.trim();
  if (/^(y|yes)$/i.test(t)) return { kind: 'yes' };
  if (/^(a|always)$/i.test(t)) return { kind: 'always' };
  const m = /^(?:n|no)\b[\s:,-]*(.*)$/is.exec(t);
  const reason = (m ? m[1] : t)?.trim();
  return reason ? { kind: 'no', reason } : { kind: 'no' };
}

const MAX_SHOWN_LINES = 20;
const MAX_SHOWN_CHARS = 2000;
/** The most bytes of an existing file read for a change summary. */
const DIFF_READ_CAP = 4 * 1024 * 1024;

/**
 * The lines that show a call to the user (untrusted text made visible): a command line (`command`, `argv`), a write
 * (`path` with `content`/`data`/`text`: the path and a change summary against the file as it is), an edit (`path`
 * with `old_string`/`new_string`), else the arguments as JSON.
 */
export async function describeCall(
  call: ToolCallBlock,
  tool: ToolDecl,
  workspaceRoot: string,
): Promise<string[]> {
  const input = call.input;
  const caps = tool.capabilities?.length ? ` (may ${tool.capabilities.join(', ')})` : '';
  const out = [`approval needed: ${safe(call.name)}${caps}`];
  const command = input.command;
  const argv = input.argv;
  if (typeof command === 'string') {
    out.push(...indent(`$ ${command}`));
  } else if (Array.isArray(argv) && argv.every((a) => typeof a === 'string')) {
    out.push(...indent(`$ ${(argv as string[]).map(shellQuote).join(' ')}`));
  } else if (typeof input.path === 'string') {
    const file = input.path;
    const content = [input.content, input.data, input.text].find((v) => typeof v === 'string') as
      | string
      | undefined;
    if (content !== undefined) {
      out.push(
        `  write ${safe(file)}: ${await changeSummary(path.resolve(workspaceRoot, file), content, input.append === true)}`,
      );
    } else if (typeof input.old_string === 'string' && typeof input.new_string === 'string') {
      out.push(
        `  edit ${safe(file)}: replaces ${lineCount(input.old_string)} line(s) with ${lineCount(input.new_string)}`,
      );
    } else {
      out.push(...indent(JSON.stringify(input, null, 2)));
    }
  } else {
    out.push(...indent(JSON.stringify(input, null, 2)));
  }
  return out;
}

/** `new file, N lines`, or what a write changes in the file as it is now (`+A -R lines, N -> M`). */
export async function changeSummary(file: string, content: string, append = false): Promise<string> {
  const after = lines(content);
  let before: string[] | null = null;
  try {
    const read = await readRegularFile(file, DIFF_READ_CAP);
    if ('bytes' in read) before = lines(read.bytes.toString('utf8'));
    else if ('over' in read) return `replaces a file over ${DIFF_READ_CAP} bytes with ${after.length} lines`;
    else return `${read.not} is there now`;
  } catch {
    before = null;
  }
  if (before === null) return `new file, ${after.length} line(s), ${Buffer.byteLength(content)} bytes`;
  if (append) return `appends ${after.length} line(s) to ${before.length}`;
  // Lines added and removed, counted as multisets (a summary, not a diff).
  const counts = new Map<string, number>();
  for (const l of before) counts.set(l, (counts.get(l) ?? 0) + 1);
  let added = 0;
  for (const l of after) {
    const c = counts.get(l) ?? 0;
    if (c > 0) counts.set(l, c - 1);
    else added++;
  }
  let removed = 0;
  for (const c of counts.values()) removed += c;
  return `+${added} -${removed} line(s) (${before.length} -> ${after.length})`;
}

function lines(text: string): string[] {
  if (text === '') return [];
  const l = text.split('\n');
  if (l[l.length - 1] === '') l.pop();
  return l;
}

function lineCount(text: string): number {
  return lines(text).length;
}

/** `text` made visible, cut to the first lines and characters, indented. */
function indent(text: string): string[] {
  const cut = text.length > MAX_SHOWN_CHARS ? `${text.slice(0, MAX_SHOWN_CHARS)}…` : text;
  const all = safe(cut).split('\n');
  const shown = all.slice(0, MAX_SHOWN_LINES).map((l) => `  ${l}`);
  if (all.length > MAX_SHOWN_LINES) shown.push(`  … ${all.length - MAX_SHOWN_LINES} more line(s)`);
  return shown;
}

function safe(text: string): string {
  return visibleControls(text);
}

/** An argument as a POSIX shell would need it written (for showing a command line). */
function shellQuote(arg: string): string {
  if (arg !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg;
  return `'${arg.replaceAll("'", `'\\''`)}'`;
}
