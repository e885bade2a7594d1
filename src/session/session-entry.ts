/**
 * The lines of a session file (format described in docs/session-format.md). Line 1 is a `SessionHeader`; every later
 * line is one `SessionEntry`. Entries form a tree through `parentId`; the conversation is the path from the root to the
 * leaf (the last entry in the file).
 */

import { randomBytes } from 'node:crypto';
import type { Message } from '../conversation.js';

/** Current format version, written into every new header. Loading refuses a file whose version is newer. */
export const SESSION_FORMAT_VERSION = 1;

/** Line 1 of a session file. */
export interface SessionHeader {
  type: 'session';
  version: number;
  /** Session id (random, unique per file). */
  id: string;
  /** ISO 8601 time the session was created. */
  created: string;
  /** Model id the session started with, when the host gave one. */
  model?: string;
  /** Workspace root the session ran in, when the host gave one. */
  workspace?: string;
}

/** A new header, created now; its id is 16 random hex digits unless `fields.id` gives one. */
export function newHeader(fields: { id?: string; model?: string; workspace?: string } = {}): SessionHeader {
  const header: SessionHeader = {
    type: 'session',
    version: SESSION_FORMAT_VERSION,
    id: fields.id ?? randomBytes(8).toString('hex'),
    created: new Date().toISOString(),
  };
  if (fields.model !== undefined) header.model = fields.model;
  if (fields.workspace !== undefined) header.workspace = fields.workspace;
  return header;
}

interface EntryBase {
  /** Unique within the file. */
  id: string;
  /** Id of the previous entry on this branch; `null` for the first entry. */
  parentId: string | null;
  /** ISO 8601 time the entry was appended. */
  timestamp: string;
}

/** One conversation message, stored as is (tool results keep their parts with inline base64 and their `meta`). */
export interface MessageEntry extends EntryBase {
  type: 'message';
  message: Message;
}

/**
 * A compaction: from this entry on, the messages before `firstKeptEntryId` (on the path to the leaf) are replaced by
 * `replacement` (the system messages of the summarized part, then the summary message). `firstKeptEntryId` is `null`
 * when every message before this entry was summarized. The replaced messages stay in the file.
 */
export interface CompactionEntry extends EntryBase {
  type: 'compaction';
  summary: string;
  replacement: Message[];
  firstKeptEntryId: string | null;
  tokensBefore: number;
  tokensAfter: number;
  /**
   * The usage of every answer in the session before this entry (all branches), per model in order of first answer.
   * Absent in files written before it was recorded: the answers are then counted when a log opens.
   */
  usageBefore?: ModelUsage[];
}

/** Token counts summed over the answers (assistant messages with `usage`) of one model. */
export interface ModelUsage {
  /** The answers' `model`; absent for answers that name none. */
  model?: string;
  /** Number of answers. */
  requests: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

/** A host event (model switch, label, UI state, ...): never part of the conversation sent to a model. */
export interface CustomEntry extends EntryBase {
  type: 'custom';
  /** Host-chosen event type, e.g. `model_change`. */
  customType: string;
  /** Any JSON value. */
  data: unknown;
}

/**
 * The host switched models (e.g. `agent.setModel`). Not part of the conversation; the latest one on the path to the
 * leaf is the session's current model (`SessionLog.model`, `LoadedSession.model`), else the header's `model`.
 */
export interface ModelChangeEntry extends EntryBase {
  type: 'model_change';
  /** Model id. */
  model: string;
  /** Wire API the model was spoken to through (`anthropic-messages`, ...), when known. */
  api?: string;
  /** Who serves it (`anthropic`, `openai`, a host's name), when known. */
  provider?: string;
}

/** One file uploaded to a provider's Files API: the stored bytes' hash and what the provider answered. */
export interface UploadedFileRecord {
  /** sha256 (64 lower-case hex digits) of the stored bytes the file holds. */
  sha256: string;
  /** The provider's file id (Anthropic `file_…`, OpenAI `file-…`, Gemini `files/…`). */
  id: string;
  /** Gemini: the `uri` requests reference. */
  uri?: string;
  /** ISO 8601 time the provider deletes the file (Gemini: 48 h after the upload). */
  expiresAt?: string;
  mediaType: string;
  /** Bytes uploaded. */
  bytes: number;
}

/**
 * Provider files (Files API uploads) of this session, scoped to the provider account that minted them: `files`
 * uploaded, `removed` ids no longer usable (deleted, or refused by the provider as unknown or expired). Never part of
 * the conversation; read in file order over ALL branches (a file exists at the provider whatever the branch), so a
 * resumed session reuses the ids and `--delete-uploads` finds every one.
 */
export interface UploadEntry extends EntryBase {
  type: 'upload';
  /** The wire API the files were uploaded for (`anthropic-messages`, `openai-responses`, `gemini`). */
  api: string;
  /** The provider's base URL, as its requests use it. */
  baseUrl: string;
  /** Fingerprint of the credential (16 hex digits of a sha256, or `none`); never the credential. */
  account: string;
  files?: UploadedFileRecord[];
  removed?: string[];
}

export type SessionEntry = MessageEntry | CompactionEntry | CustomEntry | ModelChangeEntry | UploadEntry;

/** Every entry type, in a fixed order (the index stores a type as its position here). */
export const ENTRY_TYPES: readonly SessionEntry['type'][] = [
  'message',
  'compaction',
  'custom',
  'model_change',
  'upload',
];
