/**
 * Anthropic Files API (https://docs.anthropic.com/en/docs/build-with-claude/files): `POST {base}/v1/files` as
 * multipart with one `file` field, `DELETE {base}/v1/files/{id}`; every request carries `anthropic-version` and the
 * beta `anthropic-beta: files-api-2025-04-14`. The answer is a file object `{id, type: "file", filename, mime_type,
 * size_bytes, created_at, downloadable}`; files stay until deleted.
 */

import type { FilesCallOptions, FilesContext, FileUpload, UploadedFile } from './file-types.js';
import { fileIdOf, filesRequest, objectAnswer } from './files-http.js';
import { multipartBody } from './upload-body.js';

const FILES_BETA = 'files-api-2025-04-14';

export function anthropicFiles(ctx: FilesContext) {
  const headers = (): Record<string, string> => {
    const beta = ctx.headers['anthropic-beta'];
    return {
      ...ctx.headers,
      'anthropic-beta': beta === undefined || beta === '' ? FILES_BETA : `${beta},${FILES_BETA}`,
    };
  };
  return {
    async upload(file: FileUpload, options: FilesCallOptions = {}): Promise<UploadedFile> {
      const form = multipartBody(
        [],
        { field: 'file', filename: file.filename, mediaType: file.mediaType, data: file.data },
        options.onProgress,
      );
      const answer = await filesRequest(ctx.ex, {
        method: 'POST',
        url: `${ctx.baseUrl}/v1/files`,
        headers: { ...headers(), ...form.headers },
        body: form.body,
        signal: options.signal,
      });
      const o = objectAnswer(ctx.ex.api, 'upload', answer.json);
      return { id: fileIdOf(ctx.ex.api, o.id, 'upload'), mediaType: file.mediaType, bytes: file.data.length };
    },
    async delete(id: string, options: FilesCallOptions = {}): Promise<void> {
      await filesRequest(
        ctx.ex,
        {
          method: 'DELETE',
          url: `${ctx.baseUrl}/v1/files/${encodeURIComponent(fileIdOf(ctx.ex.api, id, 'delete'))}`,
          headers: headers(),
          signal: options.signal,
        },
        [404],
      );
    },
  };
}
