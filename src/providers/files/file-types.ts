/** The types of the Files API clients (provider-files.ts builds one; each surface's file implements its half). */

import type { ModelApi } from '../model/model-info.js';
import type { FilesExchange } from './files-http.js';

/** What to upload: stored bytes (already valid for the provider: the media pipeline made them). */
export interface FileUpload {
  data: Uint8Array;
  mediaType: string;
  /** File name sent with it (1–255 characters of `[A-Za-z0-9._-]` is safe everywhere). */
  filename: string;
}

/** A file a provider stored. */
export interface UploadedFile {
  /** Anthropic `file_…`, OpenAI `file-…`, Gemini `files/…` (its `name`). */
  id: string;
  /** Gemini: the `uri` requests reference. */
  uri?: string;
  /** ISO 8601 time the provider deletes it (Gemini: 48 h after the upload), when it has one. */
  expiresAt?: string;
  mediaType: string;
  /** Bytes uploaded. */
  bytes: number;
}

export interface FilesCallOptions {
  signal?: AbortSignal | undefined;
  /**
   * Upload: bytes of the request body carrying the file sent so far, and the body's total (the multipart framing
   * included), called as the body is written (every 256 KiB, and at the end with `sent === total`).
   */
  onProgress?: ((sent: number, total: number) => void) | undefined;
}

export interface ProviderFiles {
  readonly api: ModelApi;
  /** The API root the requests use (`apiBase`: either spelling of a base URL gives the same one; no trailing slash). */
  readonly baseUrl: string;
  /** Fingerprint of the credential: 16 hex digits, or `none` without one. */
  readonly account: string;
  upload(file: FileUpload, options?: FilesCallOptions): Promise<UploadedFile>;
  /** Delete `id` (a file this account uploaded); resolves when it is gone, also when it was gone already. */
  delete(id: string, options?: FilesCallOptions): Promise<void>;
}

/** What each surface's client is built from. */
export interface FilesContext {
  ex: FilesExchange;
  baseUrl: string;
  /** Auth and fixed headers (the surface adds its own). */
  headers: Record<string, string>;
  pollMs: number;
}
