/**
 * The provider files of one agent (`uploads: 'auto'`): the cache by content hash and account, filled once from the
 * session's upload entries; the Files API clients the requests used (for `deleteUploads`); re-encoded copies of old
 * images. Reading or recording the session's entries never fails a request: a failure is an `upload-failed` warning.
 */

import type { ImagePart } from '../conversation.js';
import type { ProviderFiles } from '../providers/files/file-types.js';
import type { UploadedFileRecord } from '../session/session-entry.js';
import type { SessionWriter } from '../session/session-writer.js';
import { errorMessage } from '../tool-source.js';
import type { AgentEvent, AgentWarning } from './agent-events.js';
import { type DeleteUploadsResult, deleteCachedUploads } from './delete-uploads.js';
import type { RequestMedia } from './request-media.js';
import { UploadCache } from './upload-cache.js';

export class AgentUploads {
  readonly #enabled: boolean;
  readonly #session: SessionWriter | undefined;
  readonly #emit: (event: AgentEvent) => void;
  readonly #warn: (warning: AgentWarning) => void;
  readonly #cache = new UploadCache();
  #loaded: Promise<void> | undefined;
  /** Files API clients used, one per account. */
  readonly #clients: ProviderFiles[] = [];
  /** Re-encoded copies of old images by `degradeKey`. */
  readonly #degraded = new Map<string, ImagePart | null>();

  /** `enabled`: the agent's `uploads: 'auto'` (off, requests send every part inline but still re-encode). */
  constructor(
    enabled: boolean,
    session: SessionWriter | undefined,
    emit: (event: AgentEvent) => void,
    warn: (warning: AgentWarning) => void,
  ) {
    this.#enabled = enabled;
    this.#session = session;
    this.#emit = emit;
    this.#warn = warn;
  }

  /** What request-media.ts needs for a request to a provider with this Files API (`undefined`: none). */
  forRequest(providerFiles: ProviderFiles | undefined): RequestMedia {
    const files = this.#enabled ? providerFiles : undefined;
    if (files !== undefined && !this.#clients.includes(files)) this.#clients.push(files);
    return {
      files,
      cache: this.#cache,
      degraded: this.#degraded,
      ready: () => this.#load(),
      record: (f, entry) => this.#record(f, entry),
      emit: this.#emit,
      warn: this.#warn,
    };
  }

  /**
   * Delete every cached file through the clients used and `current` (the provider's Files API now); each deletion
   * recorded in the session. See `Agent.deleteUploads`.
   */
  async delete(current: ProviderFiles | undefined, signal?: AbortSignal): Promise<DeleteUploadsResult> {
    await this.#load();
    const clients = [...this.#clients];
    if (current !== undefined && !clients.includes(current)) clients.push(current);
    return deleteCachedUploads(this.#cache, clients, (c, removed) => this.#record(c, { removed }), signal);
  }

  /** The session's upload entries into the cache, once; a log that cannot be read gives an empty cache. */
  #load(): Promise<void> {
    this.#loaded ??= (async () => {
      try {
        const entries = await this.#session?.uploadEntries?.();
        if (entries !== undefined) this.#cache.load(entries);
      } catch (err) {
        this.#warn({
          code: 'upload-failed',
          message: `the session's upload entries could not be read (${errorMessage(err)}); its files are uploaded again`,
        });
      }
    })();
    return this.#loaded;
  }

  #record(files: ProviderFiles, entry: { files?: UploadedFileRecord[]; removed?: string[] }): void {
    try {
      this.#session?.appendUpload?.({
        api: files.api,
        baseUrl: files.baseUrl,
        account: files.account,
        ...entry,
      });
    } catch (err) {
      this.#warn({
        code: 'upload-failed',
        message: `recording uploaded files in the session failed (${errorMessage(err)}); a resume uploads them again`,
      });
    }
  }
}
