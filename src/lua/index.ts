export type { LuaBudgets } from './budget.js';
export { DEFAULT_BUDGETS } from './budget.js';
export type { LuaLoadError, LuaLogEntry, LuaLogger } from './lua-runtime.js';
export type { LuaToolSourceOptions } from './lua-tool-source.js';
export { LuaToolSource } from './lua-tool-source.js';
export type { HandlerResult, ResultCaps } from './result-bridge.js';
export { readHandlerResult } from './result-bridge.js';
export { DEFAULT_DENYLIST } from './workspace-paths.js';
