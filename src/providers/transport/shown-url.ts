/**
 * A request URL as messages show it: never a credential. A `user:password@` part is dropped; the value of a query
 * parameter whose name looks like a secret (`key`, `api_key`, `token`, `access_token`, `secret`, `password`, `sig`,
 * `signature`, `auth`...) is masked; and the API key itself, wherever it appears, is masked too (a key pasted into a
 * base URL's path). Text that is not a URL is shown masked the same way.
 */

const SECRET_PARAM = /key|token|secret|password|passwd|sig|auth|credential/i;

export function shownUrl(url: string, apiKey?: string): string {
  let shown = url;
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    for (const name of [...parsed.searchParams.keys()]) {
      if (SECRET_PARAM.test(name)) parsed.searchParams.set(name, '***');
    }
    shown = parsed.href.replaceAll('%2A%2A%2A', '***');
  } catch {
    // Not a URL: masked below as text.
  }
  if (apiKey !== undefined && apiKey.length >= 4) shown = shown.split(apiKey).join('***');
  return shown;
}
