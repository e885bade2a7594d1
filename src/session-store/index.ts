export { JsonlSessionStore } from './jsonl-session-store.js';
export type { PgClient } from './postgres-session-log.js';
export { PostgresSessionLog } from './postgres-session-log.js';
export type { PostgresSessionStoreOptions } from './postgres-session-store.js';
export { PostgresSessionStore } from './postgres-session-store.js';
export type {
  CreateStoredSessionOptions,
  OpenStoredSessionOptions,
  SessionStore,
  StoredSessionInfo,
  StoredSessionWriter,
} from './session-store.js';
export { checkSessionId } from './session-store.js';
