/**
 * The text cap: every piece of text that leaves Lua for the host (results, error messages, log lines, progress
 * messages, strings inside `meta`) is at most `maxTextBytes` UTF-8 bytes. Longer text is cut on a character boundary
 * and a note saying so is appended, so neither the model nor a host log can be flooded by one call.
 */

const decoder = new TextDecoder('utf-8');

/**
 * Decode `bytes` as UTF-8, cut to `max` bytes with a note naming the original size (`total`, when `bytes` is already
 * a prefix of a longer text). The result (before the note) is at most `max` UTF-8 bytes even for invalid input: each
 * invalid byte decodes to U+FFFD, three bytes in UTF-8, so up to `max` invalid bytes would otherwise triple. Never
 * copies the input.
 */
export function capText(bytes: Uint8Array, max: number, what = 'text', total = bytes.byteLength): string {
  if (total <= max) {
    const text = decoder.decode(bytes);
    const fitted = fitUtf8(text, max);
    return fitted === null
      ? text
      : `${fitted}\n[${what} truncated: ${Buffer.byteLength(text)} bytes as text, the cap is ${max}]`;
  }
  // Cut on a UTF-8 character boundary so no replacement character is produced by the cut itself.
  let end = max;
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  const kept = decoder.decode(bytes.subarray(0, end));
  return `${fitUtf8(kept, max) ?? kept}\n[${what} truncated: ${total} bytes, the cap is ${max}]`;
}

/** `text` (well-formed) cut to at most `max` UTF-8 bytes on a character boundary, or null when it already fits. */
function fitUtf8(text: string, max: number): string | null {
  // A UTF-16 unit encodes to at most 3 UTF-8 bytes.
  if (text.length * 3 <= max || Buffer.byteLength(text) <= max) return null;
  const bytes = encoder.encode(text);
  let end = max;
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return decoder.decode(bytes.subarray(0, end));
}

const encoder = new TextEncoder();

/** `capText` for a JS string (measured in UTF-8 bytes). Cheap when the string is clearly short. */
export function capString(s: string, max: number, what = 'text'): string {
  // A UTF-16 unit encodes to at most 3 UTF-8 bytes.
  if (s.length * 3 <= max) return s;
  // Encode at most a little more than the cap (plus one unit per 3 bytes).
  const head = s.length > max + 1 ? s.slice(0, max + 1) : s;
  const bytes = encoder.encode(head);
  if (bytes.byteLength <= max && head.length === s.length) return s;
  const total = head.length === s.length ? bytes.byteLength : Buffer.byteLength(s);
  if (total <= max) return s;
  let end = Math.min(max, bytes.byteLength);
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return `${decoder.decode(bytes.subarray(0, end))}\n[${what} truncated: ${total} bytes, the cap is ${max}]`;
}
