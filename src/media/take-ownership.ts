/**
 * Ownership transfer of a caller's input bytes (`processMedia(bytes, { transfer: true })`): zero-copy hand-over of
 * the memory behind `bytes` to the library, detaching the caller's ArrayBuffer so that no one can read or change the
 * bytes while the pipeline works on them.
 */
/** `ArrayBuffer.prototype.transfer` (ES2024; Node >= 21): detaches or throws, never copies a non-detachable buffer. */
type Transferable = ArrayBuffer & { transfer?: () => ArrayBuffer; resizable?: boolean };

/**
 * Takes over the memory of `bytes` when it is the WHOLE of a detachable, non-shared, fixed-length ArrayBuffer
 * (byteOffset 0, byteLength equal to the buffer's, not empty): returns a Uint8Array over a NEW ArrayBuffer holding
 * the same memory (no copy), and the caller's ArrayBuffer is detached (every view of it has length 0 from now on).
 *
 * Returns `undefined` and leaves `bytes` untouched otherwise: a view of part of a buffer (a subarray, a small Buffer
 * from Node's shared 8 KiB pool), a SharedArrayBuffer, a resizable ArrayBuffer, an empty or already detached one, or
 * memory that cannot be detached (a WebAssembly.Memory's buffer). Where the runtime has no
 * `ArrayBuffer.prototype.transfer` (Node 20) the transfer goes through `structuredClone`, which silently COPIES a
 * non-detachable buffer instead of failing: that copy is dropped at once (one transient copy, only for such exotic
 * buffers), and the caller's buffer is still left as it was.
 */
export function takeOwnership(bytes: Uint8Array): Uint8Array | undefined {
  const buf = bytes.buffer as Transferable;
  if (!isArrayBuffer(buf) || buf.resizable === true) return undefined;
  const n = buf.byteLength;
  if (n === 0 || bytes.byteOffset !== 0 || bytes.byteLength !== n) return undefined;
  let owned: ArrayBuffer;
  try {
    owned = typeof buf.transfer === 'function' ? buf.transfer() : structuredClone(buf, { transfer: [buf] });
  } catch {
    return undefined; // not detachable (or a runtime that refuses): the caller keeps its buffer
  }
  // structuredClone copies what it cannot detach: only a detached original means the memory changed hands.
  if (buf.byteLength !== 0 || owned.byteLength !== n) return undefined;
  return new Uint8Array(owned, 0, n);
}

const arrayBufferByteLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength')?.get;

/** A brand check that holds across realms: ArrayBuffer's byteLength getter throws for a SharedArrayBuffer. */
function isArrayBuffer(v: unknown): v is ArrayBuffer {
  try {
    arrayBufferByteLength?.call(v);
    return arrayBufferByteLength !== undefined;
  } catch {
    return false;
  }
}
