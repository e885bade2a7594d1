export type { LuaBudgets } from './budget.js';
export { DEFAULT_BUDGETS } from './budget.js';
export type { LuaLogEntry, LuaLogger, LuaLogLevel } from './lua-log.js';
export type { LuaLoadError } from './lua-runtime.js';
export type { LuaToolSourceOptions } from './lua-tool-source.js';
export { LuaToolSource } from './lua-tool-source.js';
export { DEFAULT_DENYLIST } from './workspace-paths.js';
