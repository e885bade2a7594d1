/**
 * `UploadCache`: which stored image/PDF (by the sha256 of its bytes) is a file at which provider account, and until
 * when. Pure memory, no I/O: the agent fills it from the session's `upload` entries (`load`, file order) and from its
 * own uploads, and asks it for the `SerializeOptions.files` map of the account a request goes to.
 *
 * Invariants: an id is only ever handed to the scope (api, base URL, credential fingerprint) that minted it; a file
 * that expires within `EXPIRY_MARGIN_MS` counts as gone (uploaded again); a failed upload, or a file whose references
 * the provider refused, is remembered as `null` for this agent only (that part goes inline; never written to the
 * session; a refused file stays recorded, so it can still be deleted).
 */

import type { FileRef } from '../providers/common/media-files.js';
import type { ProviderFiles, UploadedFile } from '../providers/files/file-types.js';
import type { UploadEntry, UploadedFileRecord } from '../session/session-entry.js';

/** A file expiring sooner than this is uploaded again rather than referenced (a turn may run long). */
export const EXPIRY_MARGIN_MS = 10 * 60 * 1000;

/** The account an id belongs to. */
export interface UploadScope {
  api: string;
  baseUrl: string;
  account: string;
}

/** A live file of one scope. */
export type CachedFile = UploadedFileRecord;

function scopeKey(s: UploadScope): string {
  return `${s.api}\u0000${s.baseUrl}\u0000${s.account}`;
}

export class UploadCache {
  /** scope key → sha256 → file. */
  readonly #files = new Map<string, Map<string, CachedFile>>();
  /** scope key → hashes whose upload failed in this agent. */
  readonly #failed = new Map<string, Set<string>>();
  readonly #scopes = new Map<string, UploadScope>();

  /** Apply a session's upload entries in file order: listed files become live, `removed` ids stop being. */
  load(entries: readonly UploadEntry[]): void {
    for (const e of entries) {
      for (const f of e.files ?? []) this.add(e, f.sha256, f);
      if (e.removed !== undefined) this.remove(e, e.removed);
    }
  }

  add(scope: UploadScope, sha256: string, file: UploadedFile): CachedFile {
    const record: CachedFile = { sha256, id: file.id, mediaType: file.mediaType, bytes: file.bytes };
    if (file.uri !== undefined) record.uri = file.uri;
    if (file.expiresAt !== undefined) record.expiresAt = file.expiresAt;
    this.#scoped(scope).set(sha256, record);
    this.#failed.get(scopeKey(scope))?.delete(sha256);
    return record;
  }

  fail(scope: UploadScope, sha256: string): void {
    const key = scopeKey(scope);
    const set = this.#failed.get(key) ?? new Set<string>();
    set.add(sha256);
    this.#failed.set(key, set);
  }

  /** Forget the files with these ids (deleted, or refused by the provider); returns those that were live. */
  remove(scope: UploadScope, ids: readonly string[]): CachedFile[] {
    const files = this.#files.get(scopeKey(scope));
    if (files === undefined) return [];
    const gone: CachedFile[] = [];
    for (const [sha, f] of files) {
      if (ids.includes(f.id)) {
        files.delete(sha);
        gone.push(f);
      }
    }
    return gone;
  }

  /** The live files of `scope` with these ids. */
  withIds(scope: UploadScope, ids: ReadonlySet<string>): CachedFile[] {
    return [...(this.#files.get(scopeKey(scope))?.values() ?? [])].filter((f) => ids.has(f.id));
  }

  /** The live file of `scope` whose id or uri `text` names (a provider's error message), if any. */
  namedIn(scope: UploadScope, text: string): CachedFile[] {
    const files = this.#files.get(scopeKey(scope));
    if (files === undefined) return [];
    const out: CachedFile[] = [];
    for (const f of files.values()) {
      const bare = f.id.replace(/^files\//, '');
      if (text.includes(f.id) || (bare.length >= 6 && text.includes(bare)) || (f.uri && text.includes(f.uri)))
        out.push(f);
    }
    return out;
  }

  /**
   * The `SerializeOptions.files` map of `scope` at `now` (ms): live files that do not expire within the margin, and
   * `null` for hashes whose upload failed.
   */
  view(scope: UploadScope, now: number): Map<string, FileRef | null> {
    const key = scopeKey(scope);
    const out = new Map<string, FileRef | null>();
    const failed = this.#failed.get(key);
    for (const sha of failed ?? []) out.set(sha, null);
    for (const [sha, f] of this.#files.get(key) ?? []) {
      if (failed?.has(sha)) continue;
      if (f.expiresAt !== undefined && !(Date.parse(f.expiresAt) - now > EXPIRY_MARGIN_MS)) continue;
      out.set(sha, f.uri === undefined ? { id: f.id } : { id: f.id, uri: f.uri });
    }
    return out;
  }

  /** Every scope with live files that have not expired at `now`, and those files. */
  live(now: number): Array<{ scope: UploadScope; files: CachedFile[] }> {
    const out: Array<{ scope: UploadScope; files: CachedFile[] }> = [];
    for (const [key, files] of this.#files) {
      const alive = [...files.values()].filter(
        (f) => f.expiresAt === undefined || Date.parse(f.expiresAt) > now,
      );
      const scope = this.#scopes.get(key);
      if (alive.length > 0 && scope !== undefined) out.push({ scope, files: alive });
    }
    return out;
  }

  #scoped(scope: UploadScope): Map<string, CachedFile> {
    const key = scopeKey(scope);
    let files = this.#files.get(key);
    if (files === undefined) {
      files = new Map();
      this.#files.set(key, files);
      this.#scopes.set(key, { api: scope.api, baseUrl: scope.baseUrl, account: scope.account });
    }
    return files;
  }
}

/** The scope of a Files API client. */
export function scopeOf(files: ProviderFiles): UploadScope {
  return { api: files.api, baseUrl: files.baseUrl, account: files.account };
}
