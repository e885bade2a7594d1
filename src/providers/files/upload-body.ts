/**
 * The request body of an upload, streamed in chunks so that the bytes sent can be reported as they are written:
 * `multipartBody` (a `multipart/form-data` body with text fields and one file, RFC 7578) and `bytesBody` (the raw
 * bytes). Contract:
 * - The body is a `ReadableStream` pulled one chunk at a time (`UPLOAD_CHUNK_BYTES`, high-water mark 0): a chunk counts
 *   as sent when the consumer (fetch, writing to its socket with backpressure) asks for the next one, so `onProgress`
 *   follows the socket, not a buffer filled ahead. The last call has `sent === total`.
 * - `headers` carry `content-type` (with the boundary) and `content-length`: the length is exact, so no chunked
 *   encoding is needed.
 * - The file's bytes are never copied: chunks are views of `data`.
 * - `onProgress` that throws is ignored (a progress bar cannot break an upload).
 */

import { randomBytes } from 'node:crypto';

/** Bytes per chunk of the body (each chunk is one progress step: 120 steps for a 30 MB PDF). */
export const UPLOAD_CHUNK_BYTES = 256 * 1024;

/** Bytes of the request body sent so far, and its total. */
export type UploadProgress = (sent: number, total: number) => void;

export interface UploadBody {
  body: ReadableStream<Uint8Array>;
  headers: Record<string, string>;
  /** Exact length of the body in bytes. */
  length: number;
}

/** A field value or file name inside a quoted header parameter: `"`, CR and LF percent-encoded (as browsers do). */
function quoted(value: string): string {
  return value.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** `multipart/form-data` with the text `fields` first, then the file (under `file.field`). */
export function multipartBody(
  fields: ReadonlyArray<readonly [string, string]>,
  file: { field: string; filename: string; mediaType: string; data: Uint8Array },
  onProgress?: UploadProgress,
): UploadBody {
  const boundary = `----panto${randomBytes(16).toString('hex')}`;
  let head = '';
  for (const [name, value] of fields) {
    head += `--${boundary}\r\nContent-Disposition: form-data; name="${quoted(name)}"\r\n\r\n${value}\r\n`;
  }
  head +=
    `--${boundary}\r\nContent-Disposition: form-data; name="${quoted(file.field)}"; ` +
    `filename="${quoted(file.filename)}"\r\nContent-Type: ${file.mediaType.replace(/[\r\n]/g, '')}\r\n\r\n`;
  const parts = [Buffer.from(head, 'utf8'), file.data, Buffer.from(`\r\n--${boundary}--\r\n`, 'utf8')];
  return streamOf(parts, `multipart/form-data; boundary=${boundary}`, onProgress);
}

/** The bytes themselves as the body, with `contentType`. */
export function bytesBody(data: Uint8Array, contentType: string, onProgress?: UploadProgress): UploadBody {
  return streamOf([data], contentType, onProgress);
}

function streamOf(
  parts: readonly Uint8Array[],
  contentType: string,
  onProgress?: UploadProgress,
): UploadBody {
  const total = parts.reduce((n, p) => n + p.length, 0);
  let index = 0;
  let offset = 0;
  let sent = 0;
  /** Bytes of the chunk handed out last: sent once the next one is asked for. */
  let handed = 0;
  const report = () => {
    if (handed === 0) return;
    sent += handed;
    handed = 0;
    try {
      onProgress?.(sent, total);
    } catch {
      // A listener's failure is not the upload's.
    }
  };
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        report();
        while (index < parts.length && offset >= (parts[index] as Uint8Array).length) {
          index++;
          offset = 0;
        }
        if (index >= parts.length) {
          controller.close();
          return;
        }
        const part = parts[index] as Uint8Array;
        const end = Math.min(part.length, offset + UPLOAD_CHUNK_BYTES);
        const chunk = part.subarray(offset, end);
        offset = end;
        handed = chunk.length;
        controller.enqueue(chunk);
      },
    },
    { highWaterMark: 0 },
  );
  return { body, headers: { 'content-type': contentType, 'content-length': String(total) }, length: total };
}
