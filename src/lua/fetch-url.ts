/**
 * `panto.fetch`: HTTP(S) for a Lua tool that cannot reach what it should not (docs/lua-tools.md "fetch"; facts in
 * shared/reference/scriptable-host.md).
 *
 * - http and https only, Node's own `http`/`https`, a fresh connection per request (no pooled socket is reused).
 * - The address rule is applied where the connection is made: a `lookup` that resolves the name, judges EVERY address
 *   it got (`AddressRules`; one refused address refuses the name, so a DNS answer mixing a public and a private
 *   address cannot slip through) and hands only those to the socket, so the connect uses the checked address (no
 *   second resolution to rebind). An IP-literal host (which skips `lookup`) is judged before the request. `URL`
 *   has already turned `2130706433`, `0x7f.1` or `[::ffff:127.0.0.1]` into canonical addresses.
 * - Redirects are followed by hand, at most 5, each hop judged like the first (scheme, host list, address);
 *   credentials (`authorization`, `cookie`) are not sent to another origin; 303 (and 301/302 after a POST) become GET.
 * - One deadline for the whole exchange (`timeout_ms`, redirects and body included), so a trickling body ends too; the
 *   body is cut at `max_bytes` (`truncated = true`), the rest is not read. No compression is asked for.
 */

import dns from 'node:dns';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { AddressRules } from './address-rules.js';
import type { FileResult } from './file-read.js';
import { concatOwned } from './owned-bytes.js';

/** Host settings of `fetch` (plain data: they cross to a worker). */
export interface FetchOptions {
  /** Only these hosts may be fetched (`example.com`, `*.example.com`); default any host with a public address. */
  allowHosts?: readonly string[];
  /** Hosts that may resolve to loopback, private or link-local addresses (e.g. `localhost`, `intranet.corp`). */
  privateHosts?: readonly string[];
  /** Address ranges allowed although not public (`10.0.0.0/8`, `127.0.0.1`, `fd00::/8`). */
  privateRanges?: readonly string[];
  /** Deadline of a fetch whose tool gives none (the whole exchange), ms. Default 30,000. */
  timeoutMs?: number;
  /** Largest body read, bytes; a tool's `max_bytes` may only lower it. Default 10 MiB. */
  maxBytes?: number;
}

export const DEFAULT_FETCH_TIMEOUT_MS = 30_000;
export const DEFAULT_FETCH_MAX_BYTES = 10 * 1024 * 1024;
const MAX_REDIRECTS = 5;
const CREDENTIAL_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization']);
/** Request headers a tool may not set (they describe the connection, which is ours). */
const CONNECTION_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
]);

export interface FetchRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: Uint8Array | undefined;
  timeoutMs: number;
  maxBytes: number;
  rules: AddressRules;
  signal: AbortSignal;
}

/** What `panto.fetch` returns. Header names are lower case; repeated headers are joined with "\n". */
export interface FetchResult {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** The URL of the last hop (after redirects). */
  url: string;
  /** The body was longer than `max_bytes` and was cut there. */
  truncated: boolean;
}

class FetchRefused extends Error {}

/** Fetch `req.url`; never rejects. A refusal, a network error or the deadline is `{ok: false, error}`. */
export async function fetchUrl(req: FetchRequest): Promise<FileResult<FetchResult>> {
  const controller = new AbortController();
  const deadline = setTimeout(
    () => controller.abort(new FetchRefused(`fetch: timed out after ${req.timeoutMs} ms`)),
    req.timeoutMs,
  );
  const onAbort = () => controller.abort(new FetchRefused('fetch: aborted'));
  req.signal.addEventListener('abort', onAbort, { once: true });
  if (req.signal.aborted) onAbort();
  try {
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return { ok: false, error: `fetch: not a valid URL: ${req.url.slice(0, 200)}` };
    }
    let method = req.method.toUpperCase();
    let body = req.body;
    const headers = { ...req.headers };
    for (let hop = 0; ; hop++) {
      const problem = urlProblem(url, req.rules);
      if (problem !== null) return { ok: false, error: `fetch: ${problem}` };
      const res = await request(url, method, headers, body, req.rules, controller.signal);
      const location = res.headers.location;
      if (res.statusCode !== undefined && [301, 302, 303, 307, 308].includes(res.statusCode) && location) {
        res.destroy();
        if (hop >= MAX_REDIRECTS) return { ok: false, error: `fetch: more than ${MAX_REDIRECTS} redirects` };
        let next: URL;
        try {
          next = new URL(location, url);
        } catch {
          return { ok: false, error: `fetch: a redirect to an invalid URL: ${location.slice(0, 200)}` };
        }
        if (
          res.statusCode === 303 ||
          ((res.statusCode === 301 || res.statusCode === 302) && method === 'POST')
        ) {
          if (method !== 'HEAD') method = 'GET';
          body = undefined;
          for (const k of Object.keys(headers)) if (k.toLowerCase().startsWith('content-')) delete headers[k];
        }
        if (next.origin !== url.origin) {
          for (const k of Object.keys(headers))
            if (CREDENTIAL_HEADERS.has(k.toLowerCase())) delete headers[k];
        }
        url = next;
        continue;
      }
      const read = await readBody(res, req.maxBytes, controller.signal);
      return {
        ok: true,
        value: {
          status: res.statusCode ?? 0,
          headers: flattenHeaders(res),
          body: read.body,
          url: url.href,
          truncated: read.truncated,
        },
      };
    }
  } catch (err) {
    const reason = controller.signal.aborted ? controller.signal.reason : err;
    if (reason instanceof FetchRefused) return { ok: false, error: reason.message };
    const e = reason as NodeJS.ErrnoException;
    return { ok: false, error: `fetch: ${e.code ? `${e.code}: ` : ''}${e.message ?? String(reason)}` };
  } finally {
    clearTimeout(deadline);
    req.signal.removeEventListener('abort', onAbort);
  }
}

/** Why `url` may not be fetched before any connection (scheme, host list, an IP-literal host), or null. */
function urlProblem(url: URL, rules: AddressRules): string | null {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `only http and https URLs are fetched, not ${url.protocol.replace(/:$/, '')}`;
  }
  const host = url.hostname;
  const onList = rules.hostProblem(host);
  if (onList !== null) return onList;
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  if (net.isIP(bare) !== 0) return rules.addressProblem(host, bare);
  return null;
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

/** A `lookup` for `net.connect` that resolves `host` and refuses it when any address it got is refused. */
function checkedLookup(rules: AddressRules) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) {
        callback(err, '');
        return;
      }
      for (const a of addresses) {
        const problem = rules.addressProblem(hostname, a.address);
        if (problem !== null) {
          callback(Object.assign(new FetchRefused(`fetch: ${problem}`), { code: 'EREFUSED' }), '');
          return;
        }
      }
      if (options.all) callback(null, addresses);
      else {
        const first = addresses[0];
        if (first === undefined)
          callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '');
        else callback(null, first.address, first.family);
      }
    });
  };
}

function request(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: Uint8Array | undefined,
  rules: AddressRules,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const lib = url.protocol === 'https:' ? https : http;
    const sent: Record<string, string> = { 'user-agent': 'libpanto', 'accept-encoding': 'identity' };
    for (const [k, v] of Object.entries(headers))
      if (!CONNECTION_HEADERS.has(k.toLowerCase())) sent[k.toLowerCase()] = v;
    let req: http.ClientRequest;
    try {
      req = lib.request(url, {
        method,
        headers: sent,
        agent: false,
        lookup: checkedLookup(rules) as unknown as typeof dns.lookup,
        signal,
      });
    } catch (err) {
      reject(err);
      return;
    }
    req.on('response', resolve);
    req.on('error', (err) => {
      // The lookup's refusal arrives wrapped by the socket: report it as such.
      reject(
        err instanceof FetchRefused
          ? err
          : (err as { cause?: unknown }).cause instanceof FetchRefused
            ? (err as { cause: FetchRefused }).cause
            : err,
      );
    });
    req.end(body === undefined ? undefined : Buffer.from(body.buffer, body.byteOffset, body.byteLength));
  });
}

function readBody(
  res: IncomingMessage,
  maxBytes: number,
  signal: AbortSignal,
): Promise<{ body: Buffer; truncated: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const done = (truncated: boolean) => {
      signal.removeEventListener('abort', onAbort);
      resolve({ body: concatOwned(chunks, Math.min(total, maxBytes)), truncated });
    };
    const onAbort = () => {
      res.destroy();
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    res.on('data', (chunk: Buffer) => {
      const room = maxBytes - total;
      if (chunk.byteLength > room) {
        if (room > 0) chunks.push(chunk.subarray(0, room));
        total = maxBytes + 1;
        res.destroy();
        done(true);
        return;
      }
      chunks.push(chunk);
      total += chunk.byteLength;
    });
    res.on('end', () => done(false));
    res.on('error', (err) => {
      signal.removeEventListener('abort', onAbort);
      reject(err);
    });
  });
}

function flattenHeaders(res: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) {
    if (v === undefined) continue;
    out[k] = Array.isArray(v) ? v.join('\n') : v;
  }
  return out;
}
