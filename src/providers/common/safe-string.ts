/**
 * Text of a value a stream sent where a string or number was expected (an id, a name, a type), without running any of
 * its members: `String(v)` on a parsed object calls its `toString` / `valueOf` members, which a hostile event can set
 * (`{"toString":1}` throws a TypeError), and on a deeply nested array recurses until the stack overflows.
 *
 * Contract: strings as they are; numbers, booleans, null and undefined as `String` gives them; an array as
 * `[array]`, any other object as `[object Object]` (what `String` gives a plain object). Never throws.
 */
export function safeString(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return String(value);
  return Array.isArray(value) ? '[array]' : '[object Object]';
}

/**
 * `JSON.stringify(value)` cut to `maxChars`, for quoting a hostile value in an error message: a value nested deeper
 * than the stack allows (or otherwise unprintable) becomes `[unprintable value]` instead of a RangeError. Never throws.
 */
export function safeJson(value: unknown, maxChars = 500): string {
  try {
    return (JSON.stringify(value) ?? 'undefined').slice(0, maxChars);
  } catch {
    return '[unprintable value]';
  }
}
