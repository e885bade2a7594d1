/**
 * Media bytes the library made itself (decoded from base64 it received, never handed to anyone else): the one place
 * where `toStoredParts` may let `processMedia` take their memory over (`transfer: true`, no input copy) instead of
 * copying it. Bytes a tool or host passed in stay theirs — a tool may keep and return the same Buffer again, so
 * detaching it would break the tool's next call.
 */

const privateMedia = new WeakSet<Uint8Array>();

/**
 * Marks `bytes` as the library's own: created by the caller of this function, referenced nowhere but the media part
 * it is put in, and never read after that part is stored. Returns `bytes`.
 */
export function markPrivateMedia<T extends Uint8Array>(bytes: T): T {
  privateMedia.add(bytes);
  return bytes;
}

/** True when `bytes` was marked by `markPrivateMedia` (its memory may be taken over when it is processed). */
export function isPrivateMedia(bytes: Uint8Array): boolean {
  return privateMedia.has(bytes);
}
