/**
 * Text a server sends that reaches the host (a stderr line, a `notifications/message` log, a progress message, a
 * transport error quoted in a failed call): bounded to `MAX_SERVER_TEXT_CHARS`, so a hostile server cannot hand the
 * host (or a terminal, or a model) megabytes per line.
 */

/** Longest server-provided text handed to the host, in characters. */
export const MAX_SERVER_TEXT_CHARS = 2000;

/** `text` cut to `MAX_SERVER_TEXT_CHARS`, with the full length noted. */
export function clipServerText(text: string): string {
  return text.length > MAX_SERVER_TEXT_CHARS
    ? `${text.slice(0, MAX_SERVER_TEXT_CHARS)}… (${text.length} characters)`
    : text;
}
