/**
 * The chat's saved sessions in a workspace: `<workspace>/.panto/sessions/<time>.jsonl`. `--continue` takes the newest,
 * `--resume` without a file offers them newest first (`listSessions`: time, size and the first thing the user said,
 * read from at most the first 256 KiB of each file; the rest is never read here).
 */
import type { Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { openRegular, readUpTo } from '../../regular-file.js';

const HEAD_BYTES = 256 * 1024;
/** At most this many sessions are listed (the newest). */
const MAX_LISTED = 200;

export function sessionsDir(workspace: string): string {
  return path.join(workspace, '.panto', 'sessions');
}

/** A new session file name in `workspace` (named by the time, unique to the millisecond). */
export function newSessionPath(workspace: string, now = new Date()): string {
  return path.join(sessionsDir(workspace), `${now.toISOString().replace(/[:.]/g, '-')}.jsonl`);
}

export interface SessionFileInfo {
  path: string;
  modified: Date;
  bytes: number;
  /** The first user message's text, on one line (cut), when found in the head of the file. */
  firstPrompt?: string;
}

/** The session files of `workspace`, newest first (by modification time). */
export async function listSessions(workspace: string): Promise<SessionFileInfo[]> {
  const dir = sessionsDir(workspace);
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const found: SessionFileInfo[] = [];
  for (const e of entries) {
    if (!e.isFile() || !e.name.endsWith('.jsonl')) continue;
    const file = path.join(dir, e.name);
    try {
      const info = await stat(file);
      found.push({ path: file, modified: info.mtime, bytes: info.size });
    } catch {
      // gone meanwhile
    }
  }
  found.sort((a, b) => b.modified.getTime() - a.modified.getTime() || b.path.localeCompare(a.path));
  const listed = found.slice(0, MAX_LISTED);
  for (const s of listed) {
    const first = await firstPrompt(s.path);
    if (first !== undefined) s.firstPrompt = first;
  }
  return listed;
}

/** The first user text of a session file, from its head only. */
async function firstPrompt(file: string): Promise<string | undefined> {
  let head: string;
  try {
    const opened = await openRegular(file);
    if ('not' in opened) return undefined;
    try {
      head = (await readUpTo(opened.fh, HEAD_BYTES)).toString('utf8');
    } finally {
      await opened.fh.close();
    }
  } catch {
    return undefined;
  }
  for (const line of head.split('\n').slice(1)) {
    if (!line.includes('"role":"user"')) continue;
    try {
      const entry = JSON.parse(line) as { type?: string; message?: { role?: string; content?: unknown } };
      if (entry.type !== 'message' || entry.message?.role !== 'user' || !Array.isArray(entry.message.content))
        continue;
      const text = (entry.message.content as Array<{ type?: string; text?: unknown }>)
        .filter((p) => p.type === 'text' && typeof p.text === 'string')
        .map((p) => p.text as string)
        .join(' ')
        .replace(/\s+/g, ' ')
        .trim();
      if (text !== '') return text.length > 100 ? `${text.slice(0, 100)}…` : text;
    } catch {
      // a line cut by the head limit, or another host's format
    }
  }
  return undefined;
}
