/**
 * OpenAI Files API (https://platform.openai.com/docs/api-reference/files): `POST {base}/files` as multipart with
 * `purpose` and `file`, `DELETE {base}/files/{id}`. `purpose` is `vision` for an image and `user_data` for a PDF, as
 * the official samples upload them for Responses `input_image.file_id` / `input_file.file_id`. The answer is a file
 * object `{id, object: "file", bytes, created_at, filename, purpose, expires_at?}`; files stay until deleted.
 */

import type { FilesCallOptions, FilesContext, FileUpload, UploadedFile } from './file-types.js';
import { fileIdOf, filesRequest, objectAnswer } from './files-http.js';
import { multipartBody } from './upload-body.js';

export function openAIFiles(ctx: FilesContext) {
  return {
    async upload(file: FileUpload, options: FilesCallOptions = {}): Promise<UploadedFile> {
      const form = multipartBody(
        [['purpose', file.mediaType.startsWith('image/') ? 'vision' : 'user_data']],
        { field: 'file', filename: file.filename, mediaType: file.mediaType, data: file.data },
        options.onProgress,
      );
      const answer = await filesRequest(ctx.ex, {
        method: 'POST',
        url: `${ctx.baseUrl}/files`,
        headers: { ...ctx.headers, ...form.headers },
        body: form.body,
        signal: options.signal,
      });
      const o = objectAnswer(ctx.ex.api, 'upload', answer.json);
      const uploaded: UploadedFile = {
        id: fileIdOf(ctx.ex.api, o.id, 'upload'),
        mediaType: file.mediaType,
        bytes: file.data.length,
      };
      // `expires_at` (unix seconds) is set only when an expiry was asked for; kept if it is there.
      if (typeof o.expires_at === 'number' && Number.isFinite(o.expires_at) && o.expires_at > 0) {
        const at = new Date(o.expires_at * 1000);
        if (!Number.isNaN(at.getTime())) uploaded.expiresAt = at.toISOString();
      }
      return uploaded;
    },
    async delete(id: string, options: FilesCallOptions = {}): Promise<void> {
      await filesRequest(
        ctx.ex,
        {
          method: 'DELETE',
          url: `${ctx.baseUrl}/files/${encodeURIComponent(fileIdOf(ctx.ex.api, id, 'delete'))}`,
          headers: ctx.headers,
          signal: options.signal,
        },
        [404],
      );
    },
  };
}
