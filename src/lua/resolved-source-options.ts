/** The options of a `LuaToolSource` once checked and resolved: what its backend (in-thread or worker) runs with. */

import type { ResolvedBudgets } from './budget.js';
import type { Capability } from './capabilities.js';

/** Options that cross to a worker (plain data). */
export interface ResolvedSourceOptions {
  dirs: string[];
  budgets: ResolvedBudgets;
  denylist: readonly string[];
  capabilities: readonly Capability[];
  maxConcurrentCalls: number;
  fixedRoot: string | undefined;
  loadRoot: string;
  /** A directory that does not exist gives no tools (`LuaToolSourceOptions.ignoreMissing`). */
  ignoreMissing: boolean;
}
