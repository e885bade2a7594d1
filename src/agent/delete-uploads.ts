/**
 * Delete the provider files a session (or a sessionless agent) uploaded: every live id of the cache whose account has
 * a Files API client here. Contract:
 * - A file is deleted only through a client of the scope that minted it (same api, base URL and credential
 *   fingerprint); files of other scopes are `kept` (their key is not at hand) and stay recorded.
 * - Each deleted id (also one already gone at the provider) is recorded as removed (one `upload` entry per scope);
 *   a failed delete is reported in `failed` and stays recorded, so a later call tries again.
 * - Never throws for a provider failure; `ERR_ABORTED` when `signal` fires (what was deleted is recorded first).
 */

import { isPantoError, PantoError } from '../errors.js';
import type { ProviderFiles } from '../providers/files/file-types.js';
import type { SessionWriter } from '../session/session-writer.js';
import { scopeOf, UploadCache, type UploadScope } from './upload-cache.js';

export interface DeleteUploadsResult {
  /** Ids deleted (or found gone already). */
  deleted: string[];
  /** Ids whose delete failed, and why. */
  failed: Array<{ id: string; api: string; error: PantoError }>;
  /** Ids of accounts without a client here (another key, another base URL): not touched. */
  kept: Array<{ id: string; api: string; baseUrl: string }>;
}

/** Deletes at once. */
const DELETE_CONCURRENCY = 4;

/** Delete the live files of `cache` through the matching client of `clients`, recording each removal. */
export async function deleteCachedUploads(
  cache: UploadCache,
  clients: readonly ProviderFiles[],
  record: (files: ProviderFiles, removed: string[]) => void,
  signal?: AbortSignal,
): Promise<DeleteUploadsResult> {
  const result: DeleteUploadsResult = { deleted: [], failed: [], kept: [] };
  for (const { scope, files } of cache.live(Date.now())) {
    const client = clients.find((c) => sameScope(scopeOf(c), scope));
    if (client === undefined) {
      for (const f of files) result.kept.push({ id: f.id, api: scope.api, baseUrl: scope.baseUrl });
      continue;
    }
    const removed: string[] = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < files.length && !signal?.aborted) {
        const id = (files[next++] as { id: string }).id;
        try {
          await client.delete(id, { signal });
          removed.push(id);
        } catch (err) {
          if (signal?.aborted) return;
          const error = isPantoError(err) ? err : new PantoError('ERR_INTERNAL', String(err), { cause: err });
          result.failed.push({ id, api: scope.api, error });
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(DELETE_CONCURRENCY, files.length) }, worker));
    } finally {
      if (removed.length > 0) {
        cache.remove(scope, removed);
        record(client, removed);
        result.deleted.push(...removed);
      }
    }
    if (signal?.aborted) break;
  }
  if (signal?.aborted) {
    const reason: unknown = signal.reason;
    throw isPantoError(reason, 'ERR_ABORTED')
      ? reason
      : new PantoError('ERR_ABORTED', 'deleting uploads was aborted', { cause: reason });
  }
  return result;
}

/**
 * Delete every live file `session` recorded (all branches), through the clients given — e.g.
 * `createProviderFiles({api, baseUrl})` with the keys of the environment. Records the removals in the session.
 */
export async function deleteSessionUploads(
  session: SessionWriter,
  clients: readonly ProviderFiles[],
  options: { signal?: AbortSignal } = {},
): Promise<DeleteUploadsResult> {
  if (session.uploadEntries === undefined || session.appendUpload === undefined) {
    return { deleted: [], failed: [], kept: [] };
  }
  const cache = new UploadCache();
  cache.load(await session.uploadEntries());
  return deleteCachedUploads(
    cache,
    clients,
    (c, removed) => session.appendUpload?.({ api: c.api, baseUrl: c.baseUrl, account: c.account, removed }),
    options.signal,
  );
}

function sameScope(a: UploadScope, b: UploadScope): boolean {
  return a.api === b.api && a.baseUrl === b.baseUrl && a.account === b.account;
}
