/** Messages between `WorkerBackend` (parent) and lua-worker.ts (worker). Plain data only. */

import type { ToolDecl, ToolUpdate } from '../tool.js';
import type { CallResult } from '../tool-source.js';
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
  | { type: 'abort'; id: number };

export type WorkerMessage =
  | { type: 'ready'; decls: ToolDecl[]; loadErrors: LuaLoadError[] }
  | { type: 'fatal'; message: string }
  | { type: 'beat' }
  | { type: 'log'; entry: LuaLogEntry }
  | { type: 'update'; id: number; update: ToolUpdate }
  | { type: 'result'; id: number; result: CallResult };
