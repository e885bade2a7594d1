/** Messages between `WorkerBackend` (parent) and lua-worker.ts (worker). Plain data only. */

import type { ToolDecl, ToolUpdate } from '../tool.js';
import type { CallResult } from '../tool-source.js';
import type { HostOutcome, HostValue } from './host-functions.js';
import type { LuaLogEntry } from './lua-log.js';
import type { LuaLoadError } from './lua-runtime.js';

export type ParentMessage =
  | {
      type: 'call';
      id: number;
      name: string;
      args: Record<string, unknown>;
      toolCallId: string;
      root: string;
      wantsUpdates: boolean;
    }
  | { type: 'abort'; id: number }
  /** The outcome of host function call `hid` (its `Uint8Array`s transferred). */
  | { type: 'hostResult'; hid: number; outcome: HostOutcome };

export type WorkerMessage =
  | { type: 'ready'; decls: ToolDecl[]; loadErrors: LuaLoadError[] }
  | { type: 'fatal'; message: string }
  | { type: 'beat' }
  | { type: 'log'; entry: LuaLogEntry }
  | { type: 'update'; id: number; update: ToolUpdate }
  | { type: 'result'; id: number; result: CallResult }
  /** Call `id` calls host function `name` (the args' `Uint8Array`s transferred); answered by `hostResult`. */
  | { type: 'host'; id: number; hid: number; name: string; args: HostValue }
  /** The call stopped waiting for host function call `hid` (budget, abort, end): abort its signal. */
  | { type: 'hostCancel'; hid: number };
