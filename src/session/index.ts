export type { JsonlReadOptions } from './jsonl-reader.js';
export type { LoadedSession, LoadSessionOptions } from './load-session.js';
export { loadSession } from './load-session.js';
export type { CompactionInput, UploadInput } from './new-entries.js';
export type {
  CompactionEntry,
  CustomEntry,
  MessageEntry,
  ModelChangeEntry,
  ModelUsage,
  SessionEntry,
  SessionHeader,
  UploadEntry,
  UploadedFileRecord,
} from './session-entry.js';
export { SESSION_FORMAT_VERSION } from './session-entry.js';
export type { SessionIndex, SessionIndexOptions, SessionLineRef } from './session-index.js';
export { openSessionIndex } from './session-index.js';
export type { CreateSessionOptions, SessionLogOptions } from './session-log.js';
export { SessionLog } from './session-log.js';
export type { SessionWarning } from './session-warning.js';
export type { SessionWriter } from './session-writer.js';
