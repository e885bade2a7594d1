/**
 * Gemini File API (https://ai.google.dev/gemini-api/docs/files; the resumable protocol as @google/genai speaks it):
 * 1. `POST {origin}/upload{base path}/files` with `{"file": {"displayName", "mimeType"}}` and `X-Goog-Upload-Protocol:
 *    resumable`, `X-Goog-Upload-Command: start`, `X-Goog-Upload-Header-Content-Length/-Type`; the answer's
 *    `x-goog-upload-url` header is where the bytes go;
 * 2. `POST` the bytes there with `X-Goog-Upload-Command: upload, finalize` and `X-Goog-Upload-Offset: 0`; the answer
 *    is `{"file": File}` (`name` `files/…`, `uri`, `mimeType`, `state`, `expirationTime`);
 * 3. while `state` is `PROCESSING`, `GET {base}/{name}` until `ACTIVE` (`FAILED` is an error).
 * Files expire 48 h after the upload (`expirationTime`). `DELETE {base}/{name}` deletes one; a file that is gone
 * answers 403 PERMISSION_DENIED ("... or it may not exist"), which a delete takes as done.
 */

import { PantoError } from '../../errors.js';
import type { FilesCallOptions, FilesContext, FileUpload, UploadedFile } from './file-types.js';
import { fileIdOf, filesRequest, malformed, objectAnswer } from './files-http.js';
import { bytesBody } from './upload-body.js';

/** A File's `name`: `files/` and up to 40 lowercase letters, digits and dashes (file.proto); a little leeway. */
const FILE_NAME = /^files\/[A-Za-z0-9_-]{1,64}$/;

export function geminiFiles(ctx: FilesContext) {
  const api = ctx.ex.api;
  const base = new URL(ctx.baseUrl);
  const uploadUrl = `${base.origin}/upload${base.pathname.replace(/\/+$/, '')}/files`;

  /** The file object of an answer (`{file: File}` after an upload, the File itself from a GET), checked. */
  const fileOf = (value: unknown, what: string, wrapped: boolean): Record<string, unknown> => {
    const o = objectAnswer(api, what, value);
    return wrapped ? objectAnswer(api, what, o.file) : o;
  };

  const nameOf = (file: Record<string, unknown>, what: string): string => {
    const name = fileIdOf(api, file.name, what);
    if (!FILE_NAME.test(name))
      throw malformed(api, `${what}: ${JSON.stringify(name)} is not a File name (files/…)`);
    return name;
  };

  return {
    async upload(file: FileUpload, options: FilesCallOptions = {}): Promise<UploadedFile> {
      const start = await filesRequest(ctx.ex, {
        method: 'POST',
        url: uploadUrl,
        headers: {
          ...ctx.headers,
          'content-type': 'application/json',
          'x-goog-upload-protocol': 'resumable',
          'x-goog-upload-command': 'start',
          'x-goog-upload-header-content-length': String(file.data.length),
          'x-goog-upload-header-content-type': file.mediaType,
        },
        body: JSON.stringify({ file: { displayName: file.filename, mimeType: file.mediaType } }),
        signal: options.signal,
      });
      const target = start.headers.get('x-goog-upload-url');
      if (target === null || target === '') throw malformed(api, 'upload start: no x-goog-upload-url header');
      let url: URL;
      try {
        url = new URL(target, base);
      } catch {
        throw malformed(api, 'upload start: the x-goog-upload-url header is not a URL');
      }
      // The API key goes with the bytes: never to another origin than the one it is for.
      if (url.origin !== base.origin) {
        throw malformed(
          api,
          `upload start: the upload URL is on another origin (${url.origin}); not sending the key there`,
        );
      }
      const bytes = bytesBody(file.data, file.mediaType, options.onProgress);
      const done = await filesRequest(ctx.ex, {
        method: 'POST',
        url: url.href,
        headers: {
          ...ctx.headers,
          ...bytes.headers,
          'x-goog-upload-command': 'upload, finalize',
          'x-goog-upload-offset': '0',
        },
        body: bytes.body,
        signal: options.signal,
      });
      let meta = fileOf(done.json, 'upload', true);
      const name = nameOf(meta, 'upload');
      // An image is ACTIVE at once; a PDF may be PROCESSING for a while (each exchange has its own deadline).
      const giveUp = Date.now() + ctx.ex.timeoutMs;
      while (meta.state === 'PROCESSING') {
        if (Date.now() >= giveUp)
          throw malformed(api, `${name} is still PROCESSING after ${ctx.ex.timeoutMs} ms`);
        await sleep(ctx.pollMs, options.signal);
        const got = await filesRequest(ctx.ex, {
          method: 'GET',
          url: `${ctx.baseUrl}/${name}`,
          headers: ctx.headers,
          signal: options.signal,
        });
        meta = fileOf(got.json, 'processing', false);
      }
      if (meta.state !== undefined && meta.state !== 'ACTIVE') {
        const why =
          typeof (meta.error as { message?: unknown })?.message === 'string'
            ? `: ${(meta.error as { message: string }).message}`
            : '';
        throw malformed(api, `${name} is ${String(meta.state)}${why}`);
      }
      const uri = meta.uri;
      if (typeof uri !== 'string' || uri.length > 2048 || !/^https?:\/\//.test(uri)) {
        throw malformed(api, `upload: ${name} has no uri`);
      }
      const uploaded: UploadedFile = { id: name, uri, mediaType: file.mediaType, bytes: file.data.length };
      if (typeof meta.expirationTime === 'string') {
        const at = new Date(meta.expirationTime);
        if (!Number.isNaN(at.getTime())) uploaded.expiresAt = at.toISOString();
      }
      return uploaded;
    },
    async delete(id: string, options: FilesCallOptions = {}): Promise<void> {
      const name = fileIdOf(api, id, 'delete');
      if (!FILE_NAME.test(name))
        throw malformed(api, `delete: ${JSON.stringify(name)} is not a File name (files/…)`);
      // A file that is gone (deleted, expired) answers 403 "... or it may not exist", as in a request.
      await filesRequest(
        ctx.ex,
        { method: 'DELETE', url: `${ctx.baseUrl}/${name}`, headers: ctx.headers, signal: options.signal },
        [403, 404],
      );
    },
  };
}

/** Wait `ms`, or reject with `ERR_ABORTED` when `signal` fires. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  const aborted = () => new PantoError('ERR_ABORTED', 'the upload was aborted', { cause: signal?.reason });
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(aborted());
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(aborted());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
