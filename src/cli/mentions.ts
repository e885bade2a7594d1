/**
 * `@path` mentions in a chat line: `look at @shots/a.png` or `@"my file.pdf"` attaches that file to the user turn.
 * A mention starts at a word boundary (an `@` right after a non-space character, as in `me@example.com`, is not
 * one). Images and PDFs become media parts; other files are inlined as text under a `--- @path ---` header, capped.
 */
import { readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { UserContentPart } from '../agent/index.js';
import { DEFAULT_DENYLIST, Denylist } from '../lua/workspace-paths.js';
import { sniffMedia } from '../media/index.js';
import { openRegular, readUpTo } from '../regular-file.js';
import { hasControls } from './safe-text.js';
import { isSystemError, systemErrorReason } from './system-error.js';

export interface Mention {
  /** The path as written (quotes removed). */
  path: string;
  /** Index of the `@` in the line. */
  start: number;
  /** Index after the mention. */
  end: number;
}

const MENTION = /(^|\s)@(?:"([^"]+)"|([^\s"]+))/g;

/** The mentions in `line`, in order. */
export function parseMentions(line: string): Mention[] {
  const out: Mention[] = [];
  for (const m of line.matchAll(MENTION)) {
    const lead = m[1] ?? '';
    const p = m[2] ?? m[3];
    if (!p) continue;
    const start = (m.index ?? 0) + lead.length;
    out.push({ path: p.replace(/[.,;:!?)]+$/, ''), start, end: (m.index ?? 0) + m[0].length });
  }
  return out;
}

/** Cap on a text file inlined by a mention. */
export const MENTION_TEXT_CAP = 50 * 1024;
/** Cap on a media file a mention reads (the pipeline refuses larger inputs anyway). */
const MENTION_MEDIA_CAP = 64 * 1024 * 1024;
const ATTACHABLE = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/bmp',
  'application/pdf',
]);

export interface ResolvedMentions {
  /** The user content: the line's text, then each attachment. */
  content: UserContentPart[];
  /** Problems to show the user (missing file, secret, a picture the model cannot take); the turn goes on. */
  notes: string[];
  /** Files attached, as written. */
  attached: string[];
}

export interface ResolveMentionOptions {
  /** Directory mentions resolve against. */
  cwd: string;
  /** Model capabilities: media the model cannot take is left out with a note. */
  accepts: { image: boolean; pdf: boolean };
  modelId: string;
  denylist?: readonly string[];
}

/** Read the files a line mentions and build the turn's content. Never throws for a bad mention. */
export async function resolveMentions(
  line: string,
  options: ResolveMentionOptions,
): Promise<ResolvedMentions> {
  const deny = new Denylist(options.denylist ?? DEFAULT_DENYLIST);
  const content: UserContentPart[] = [line];
  const notes: string[] = [];
  const attached: string[] = [];
  const seen = new Set<string>();
  for (const m of parseMentions(line)) {
    const abs = path.resolve(options.cwd, m.path);
    if (seen.has(abs)) continue;
    seen.add(abs);
    const denied = deny.match(abs.split(path.sep).join('/'));
    if (denied !== null) {
      notes.push(`@${m.path}: not attached (matches the secrets denylist: ${denied})`);
      continue;
    }
    try {
      // A symlink (`notes.txt -> .env`) is judged by what it points to as well.
      const real = await realpath(abs);
      const deniedReal = real === abs ? null : deny.match(real.split(path.sep).join('/'));
      if (deniedReal !== null) {
        notes.push(
          `@${m.path}: not attached (it links to a file the secrets denylist matches: ${deniedReal})`,
        );
        continue;
      }
      const part = await readMention(real, m.path, options);
      if (typeof part === 'object' && 'note' in part) {
        notes.push(`@${m.path}: ${part.note}`);
        continue;
      }
      content.push(part);
      attached.push(m.path);
    } catch (err) {
      // Gone, unreadable, or changed between the checks and the read: the turn goes on without it.
      notes.push(`@${m.path}: not attached (${readProblem(err)})`);
    }
  }
  return { content, notes, attached };
}

/** One mention's content part, or why it is left out. */
async function readMention(
  abs: string,
  written: string,
  options: ResolveMentionOptions,
): Promise<UserContentPart | { note: string }> {
  const opened = await openRegular(abs);
  if ('not' in opened) {
    return {
      note: `not attached (${opened.not}${opened.not === 'a directory' ? '' : ', not a regular file'})`,
    };
  }
  const { fh, info } = opened;
  try {
    const head = await readUpTo(fh, 4096);
    const sniffed = sniffMedia(head);
    if (sniffed !== null && ATTACHABLE.has(sniffed)) {
      const kind = sniffed === 'application/pdf' ? 'pdf' : 'image';
      if (!options.accepts[kind]) {
        return {
          note:
            `not attached: model '${options.modelId}' does not accept ${kind === 'pdf' ? 'PDF' : 'image'} input` +
            ` (declare it with --${kind === 'pdf' ? 'pdf' : 'image'}-input if it does)`,
        };
      }
      // The size said up front; the capped read also catches a file that grew since.
      const data = info.size > MENTION_MEDIA_CAP ? undefined : await readUpTo(fh, MENTION_MEDIA_CAP + 1);
      if (data === undefined || data.byteLength > MENTION_MEDIA_CAP) {
        const size = Math.max(info.size, data?.byteLength ?? 0);
        return { note: `not attached (${size} bytes is over the ${MENTION_MEDIA_CAP}-byte cap)` };
      }
      return { type: 'media', data, mediaType: sniffed, name: path.basename(written) };
    }
    if (sniffed !== null || looksBinary(head)) {
      return {
        note: `not attached (${sniffed ?? 'binary'} file, ${info.size} bytes; only text, images and PDFs can be attached)`,
      };
    }
    const bytes = await readUpTo(fh, MENTION_TEXT_CAP + 1);
    const capped = bytes.byteLength > MENTION_TEXT_CAP;
    let text = new TextDecoder().decode(capped ? bytes.subarray(0, MENTION_TEXT_CAP) : bytes);
    if (capped) {
      const size = Math.max(info.size, bytes.byteLength);
      text += `\n[truncated: showing the first ${MENTION_TEXT_CAP} of ${size} bytes; use the read tool for the rest]`;
    }
    return `--- @${written} ---\n${text}`;
  } finally {
    await fh.close();
  }
}

function readProblem(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (e.code === 'ENOENT') return 'no such file';
  if (isSystemError(err)) return systemErrorReason(err);
  return e.message ?? String(err);
}

function looksBinary(head: Uint8Array): boolean {
  if (head.includes(0)) return true;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(0, Math.max(0, head.byteLength - 4)));
    return false;
  } catch {
    return true;
  }
}

/**
 * Tab completion for the path after the last `@` of `line` (readline completer shape). Directories end in `/`; a name
 * with a space is completed in its quoted form `@"a b.png"`. Names with terminal controls are not offered.
 */
export async function completeMention(line: string, cwd: string): Promise<[string[], string]> {
  const m = /(?:^|\s)@("?)([^"\s]*|[^"]*)$/.exec(line);
  if (!m) return [[], line];
  const quoted = m[1] === '"';
  const typed = m[2] ?? '';
  const dirPart = typed.includes('/') ? typed.slice(0, typed.lastIndexOf('/') + 1) : '';
  const prefix = typed.slice(dirPart.length);
  let names: string[];
  try {
    const entries = await readdir(path.resolve(cwd, dirPart || '.'), { withFileTypes: true });
    names = entries
      .filter((e) => e.name.startsWith(prefix) && (prefix.startsWith('.') || !e.name.startsWith('.')))
      // readline prints completions raw: a name carrying terminal controls (a planted `\x1b]52;…` file) is left out.
      .filter((e) => !hasControls(e.name))
      .map((e) => `${e.name}${e.isDirectory() ? '/' : ''}`)
      .sort();
  } catch {
    return [[], line];
  }
  const token = `@${quoted ? '"' : ''}${typed}`;
  const completions = names.map((n) => {
    const full = `${dirPart}${n}`;
    return quoted || /\s/.test(full) ? `@"${full}${n.endsWith('/') ? '' : '"'}` : `@${full}`;
  });
  return [completions, token];
}
