/** Lua tool load errors as the CLI prints them: once each, with one position. */
import path from 'node:path';
import type { LuaLoadError, LuaLogEntry } from '../lua/index.js';

/**
 * A load error as one position and the message: `/dir/syntax.lua:5: unexpected symbol near 'end'` — the message's
 * own `syntax.lua:5:` (or `syntax.lua:`) prefix is not repeated.
 */
export function formatLoadError(e: Pick<LuaLoadError, 'file' | 'line' | 'message'>): string {
  const base = path.basename(e.file);
  const own = new RegExp(`^${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?::(\\d+))?: `);
  const m = own.exec(e.message);
  const line = e.line ?? (m?.[1] === undefined ? undefined : Number(m[1]));
  const message = m ? e.message.slice(m[0].length) : e.message;
  return `${e.file}${line === undefined ? '' : `:${line}`}: ${message}`;
}

/** A log entry that repeats a load error (`LuaToolSource.loadErrors` has it; the CLI prints those). */
export function isLoadErrorLog(e: LuaLogEntry): boolean {
  return e.level === 'error' && /did not load: /.test(e.message);
}
