/** The host log of the Lua tool host: what `print`, `panto.log`, load errors and tool errors report. */

export type LuaLogLevel = 'debug' | 'info' | 'warn' | 'error';

/** One line of the host log. */
export interface LuaLogEntry {
  level: LuaLogLevel;
  message: string;
  /** The tool (when the entry comes from a call). */
  tool?: string;
  /** The tool call id (when the entry comes from a call). */
  toolCallId?: string;
  /** The tool file. */
  file?: string;
  /** A Lua traceback, for errors. */
  traceback?: string;
}

/** Receives host log entries. Must not throw (a throwing logger is not guarded). */
export type LuaLogger = (entry: LuaLogEntry) => void;
