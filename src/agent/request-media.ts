/**
 * The media work before a request: serialize, and when the serializer wants uploads (`uploads: 'auto'` on a surface
 * with a Files API) or smaller copies of old images (the request guard had to shed bytes or pixels), do that work and
 * serialize again (at most three passes). Contract:
 * - Uploads run concurrently (`UPLOAD_CONCURRENCY` at once) before the request, each reported by `upload_start`,
 *   `upload_progress` (bytes of its body written) and `upload_end`; every success goes to the cache and, with a
 *   session, into one `upload` entry per pass.
 * - A failed, refused or timed-out upload sends that part inline (an `upload-failed` warning); an abort of the turn
 *   rejects with `ERR_ABORTED`. A failed re-encode leaves that image out as the request guard did before.
 * - Re-encoded copies are kept by `degradeKey` (hash and target) for the agent's life.
 */

import type { ImagePart } from '../conversation.js';
import { isPantoError, PantoError } from '../errors.js';
import { processMedia } from '../media/process-media.js';
import type { DegradeWish, UploadWish } from '../providers/common/media-files.js';
import type { SerializeResult } from '../providers/common/serialize-options.js';
import type { ProviderFiles } from '../providers/files/file-types.js';
import { uploadFilename } from '../providers/files/provider-files.js';
import type { ModelInfo } from '../providers/model/model-info.js';
import { type RequestOptions, serializeRequest } from '../providers/serialize-request.js';
import type { UploadedFileRecord } from '../session/session-entry.js';
import type { AgentEvent, AgentWarning } from './agent-events.js';
import { type CachedFile, scopeOf, type UploadCache } from './upload-cache.js';

/** Uploads in flight at once. */
export const UPLOAD_CONCURRENCY = 4;

/** What the media work reads from the agent. */
export interface RequestMedia {
  /** The Files API of the request's provider when uploads are on (`uploads: 'auto'`), else undefined. */
  files: ProviderFiles | undefined;
  cache: UploadCache;
  /** Re-encoded copies by `degradeKey`; `null`: the re-encode failed. */
  degraded: Map<string, ImagePart | null>;
  /** Resolves once the session's upload entries are in the cache (a no-op without a session). */
  ready(): Promise<void>;
  /** Record uploads (or ids no longer usable) in the session, when there is one. */
  record(files: ProviderFiles, entry: { files?: UploadedFileRecord[]; removed?: string[] }): void;
  emit(event: AgentEvent): void;
  warn(warning: AgentWarning): void;
}

/**
 * Serialize with the uploads and copies the request wants, doing that work first. `inline`: send every part's bytes
 * (after a refusal of the file references). Rejects only with `ERR_ABORTED`.
 */
export async function serializeWithMedia(
  media: RequestMedia,
  messages: Parameters<typeof serializeRequest>[0],
  model: ModelInfo,
  options: RequestOptions,
  signal: AbortSignal,
  inline = false,
): Promise<SerializeResult<Record<string, unknown>>> {
  const files = inline ? undefined : media.files;
  if (files !== undefined) await media.ready();
  for (let pass = 0; ; pass++) {
    const s = serializeRequest(messages, model, {
      ...options,
      ...(files === undefined ? {} : { files: media.cache.view(scopeOf(files), Date.now()) }),
      // The first pass plans as if the wanted uploads were made: the budgets then leave them out.
      assumeUploaded: files !== undefined && pass === 0,
      degraded: media.degraded,
    });
    const uploads = files === undefined ? [] : (s.wanted?.uploads ?? []);
    const degrade = (s.wanted?.degrade ?? []).filter((w) => !media.degraded.has(w.key));
    if ((uploads.length === 0 && degrade.length === 0) || pass >= 2) return s;
    await Promise.all([
      files === undefined ? undefined : uploadAll(media, files, uploads, signal),
      degradeAll(media, degrade, signal),
    ]);
    if (signal.aborted) throw aborted(signal);
  }
}

async function uploadAll(
  media: RequestMedia,
  files: ProviderFiles,
  wishes: readonly UploadWish[],
  signal: AbortSignal,
): Promise<void> {
  const scope = scopeOf(files);
  const done: CachedFile[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < wishes.length && !signal.aborted) {
      const wish = wishes[next++] as UploadWish;
      const data = Buffer.from(wish.part.data, 'base64');
      const about = {
        api: files.api,
        sha256: wish.sha256,
        mediaType: wish.part.mediaType,
        bytes: data.length,
      };
      media.emit({ type: 'upload_start', ...about });
      try {
        const file = await files.upload(
          {
            data,
            mediaType: wish.part.mediaType,
            filename: uploadFilename(wish.sha256, wish.part.mediaType),
          },
          {
            signal,
            onProgress: (sent, total) => media.emit({ type: 'upload_progress', ...about, sent, total }),
          },
        );
        done.push(media.cache.add(scope, wish.sha256, file));
        media.emit({ type: 'upload_end', ...about, file: file.id });
      } catch (err) {
        const error = isPantoError(err) ? err : new PantoError('ERR_INTERNAL', String(err), { cause: err });
        media.emit({ type: 'upload_end', ...about, error });
        if (signal.aborted) return;
        media.cache.fail(scope, wish.sha256);
        media.warn({
          code: 'upload-failed',
          message: `uploading a ${wish.part.mediaType} of ${data.length} bytes to ${files.api} failed (${error.message}); it is sent inline`,
        });
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(UPLOAD_CONCURRENCY, wishes.length) }, worker));
  } finally {
    // What was uploaded is recorded even when the turn was aborted: the files exist at the provider.
    if (done.length > 0) media.record(files, { files: done });
  }
}

async function degradeAll(
  media: RequestMedia,
  wishes: readonly DegradeWish[],
  signal: AbortSignal,
): Promise<void> {
  for (const w of wishes) {
    if (signal.aborted) return;
    try {
      const r = await processMedia(Buffer.from(w.part.data, 'base64'), {
        maxDimension: w.target.maxSide,
        maxEncodedBytes: w.target.maxBytes,
        signal,
      });
      if (r.mediaType === 'application/pdf') throw new Error('not an image');
      media.degraded.set(w.key, {
        type: 'image',
        mediaType: r.mediaType,
        data: r.data.toString('base64'),
        width: r.width,
        height: r.height,
      });
    } catch {
      if (signal.aborted) return;
      media.degraded.set(w.key, null);
    }
  }
}

function aborted(signal: AbortSignal): PantoError {
  const reason: unknown = signal.reason;
  if (isPantoError(reason, 'ERR_ABORTED')) return reason;
  return new PantoError(
    'ERR_ABORTED',
    'the run was aborted',
    reason === undefined ? undefined : { cause: reason },
  );
}
