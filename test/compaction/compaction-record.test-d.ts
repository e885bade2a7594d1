/**
 * Type-level test, checked by `tsc --noEmit -p tsconfig.json` (part of `npm test`); never executed.
 *
 * `compact()` returns a `CompactionRecord` (compaction/) and `SessionLog.appendCompaction` takes a `CompactionInput`
 * (session/). The two modules import nothing from each other (only conversation.ts and errors.ts), so the shape is
 * declared on both sides; this keeps the two declarations identical — same keys, each side assignable to the other —
 * so a field added to one cannot be silently dropped by the other.
 */

import type { CompactionRecord } from '../../src/compaction/index.js';
import type { CompactionInput } from '../../src/session/index.js';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

export const sameKeys: Same<keyof CompactionRecord, keyof CompactionInput> = true;
export const sameShape: Same<CompactionRecord, CompactionInput> = true;
