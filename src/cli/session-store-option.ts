/**
 * `--store`: where sessions live when not in a file of their own — a PostgreSQL URL (`postgres://…`, the `pg`
 * package) or a folder of JSONL files. Used by `panto chat --store … [--resume ID]` and `panto session
 * list|export|import --store …`.
 */
import { JsonlSessionStore } from '../session-store/jsonl-session-store.js';
import { PostgresSessionStore } from '../session-store/postgres-session-store.js';
import type { SessionStore } from '../session-store/session-store.js';

/** True for a PostgreSQL connection URL. */
export function isPostgresUrl(store: string): boolean {
  return /^postgres(ql)?:\/\//i.test(store);
}

/** The store `--store` names (a PostgreSQL URL connects now; anything else is a folder of JSONL files). */
export async function openStore(store: string): Promise<SessionStore> {
  return isPostgresUrl(store) ? PostgresSessionStore.connect(store) : new JsonlSessionStore(store);
}

/** `--store` as shown to the user: a URL without its password. */
export function shownStore(store: string): string {
  return isPostgresUrl(store) ? store.replace(/(\/\/[^:/@]*):[^@/]*@/, '$1:***@') : store;
}
