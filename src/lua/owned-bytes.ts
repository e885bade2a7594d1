/**
 * Bytes that may become a Lua string without a copy must own their memory: never a view into Node's shared Buffer
 * pool (`Buffer.concat`, `Buffer.from(string)` and small `allocUnsafe` use it), which later Buffers overwrite.
 */

/** `chunks` joined into a buffer of its own (at most `total` bytes when given). */
export function concatOwned(chunks: readonly Uint8Array[], total?: number): Buffer {
  const size = total ?? chunks.reduce((n, c) => n + c.byteLength, 0);
  const out = Buffer.allocUnsafeSlow(size);
  let at = 0;
  for (const c of chunks) {
    if (at >= size) break;
    const piece = c.byteLength > size - at ? c.subarray(0, size - at) : c;
    out.set(piece, at);
    at += piece.byteLength;
  }
  return at === size ? out : out.subarray(0, at);
}
