/**
 * What a request builder needs to send a stored image/PDF by reference, or smaller, instead of inline: the content
 * hash that keys both (sha256 of the stored bytes), the provider file a hash was uploaded as, and the wishes a
 * serializer reports when it could send a better request with work only the caller can do (an upload, a re-encode).
 * Pure: hashing reads the part, nothing else.
 */

import { createHash } from 'node:crypto';
import type { DocumentPart, ImagePart } from '../../conversation.js';

/** A file uploaded to the provider account a request goes to (see `SerializeOptions.files`). */
export interface FileRef {
  /** The provider's file id: Anthropic `file_…`, OpenAI `file-…`, Gemini `files/…`. */
  id: string;
  /** Gemini: the file's `uri`, which requests reference (`fileData.fileUri`). */
  uri?: string;
}

/** A stored image/PDF the request would reference by file id if the caller uploaded it. */
export interface UploadWish {
  /** sha256 (hex) of the stored bytes: the key of `SerializeOptions.files`. */
  sha256: string;
  part: ImagePart | DocumentPart;
}

/** Re-encode limits for a smaller copy of a stored image. */
export interface DegradeTarget {
  /** Longest side in pixels (`processMedia`'s `maxDimension`). */
  maxSide: number;
  /** Encoded bytes, not base64 (`processMedia`'s `maxEncodedBytes`). */
  maxBytes: number;
}

/** A stored image the request would send smaller, re-encoded to `target`, instead of leaving it out. */
export interface DegradeWish {
  /** `degradeKey(sha256, target)`: the key of `SerializeOptions.degraded`. */
  key: string;
  sha256: string;
  part: ImagePart;
  target: DegradeTarget;
}

/**
 * Work that would give a better request than the body returned with it: uploads (the surface references files and
 * `SerializeOptions.files` holds no entry for these hashes) and re-encodes (the request guard had to shed bytes or
 * pixels and `SerializeOptions.degraded` holds no entry for these). Serialize again with the results.
 */
export interface RequestWishes {
  uploads: UploadWish[];
  degrade: DegradeWish[];
}

/** The key of a re-encoded copy: the stored bytes' hash and the target. */
export function degradeKey(sha256: string, target: DegradeTarget): string {
  return `${sha256}@${target.maxSide}px/${target.maxBytes}B`;
}

/** Hashes already computed, per part object (checked against the part's current `data`). */
const hashes = new WeakMap<object, { data: string; sha256: string }>();

/**
 * sha256 (lower-case hex) of the bytes a stored image/PDF holds (its base64 decoded), computed once per part object
 * and reused by every later request: an agent sends the whole history each turn. Equal bytes give equal hashes
 * whatever the part object, so the same screenshot returned twice is one file.
 */
export function mediaSha256(part: ImagePart | DocumentPart): string {
  const cached = hashes.get(part);
  if (cached !== undefined && cached.data === part.data) return cached.sha256;
  const sha256 = createHash('sha256').update(Buffer.from(part.data, 'base64')).digest('hex');
  hashes.set(part, { data: part.data, sha256 });
  return sha256;
}
