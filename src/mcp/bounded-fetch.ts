/**
 * `fetch` for the Streamable HTTP client transport with a bound on what one response can make us hold.
 *
 * The SDK reads a JSON response with `response.json()`, an error response with `response.text()` and an SSE stream
 * with a parser that buffers an event until its blank line — all without a limit, and after `fetch` has transparently
 * decompressed the body (a 100 KB gzip body can be 100 MB of text). This wrapper passes every response body through a
 * counter that errors the body (and cancels the download) once
 * - an SSE (`text/event-stream`) body has more than `maxBytes` since its last blank line (one event), or
 * - any other body has more than `maxBytes` in total.
 * - a body that is not SSE gets no byte for `idleMs` (headers came, then the body stalls: the socket would be held
 *   until the call timed out, and longer). An SSE stream may stay silent (a long call without progress): it is not
 *   timed here; the call's own timeout covers it.
 * Memory stays bounded either way. The body errors with `PantoError('ERR_MCP_LIMIT', reason)`. For an SSE stream the
 * SDK only reports that error (`onerror`) and leaves the requests of that response waiting for their timeout; for a
 * JSON or error body it rejects the request at once (an error body's reason is lost: "… endpoint: null") but leaks the
 * request's handlers. So `onCut` also gets the ids of the JSON-RPC requests the cut response answers (from the POSTed
 * body), for the caller to fail them (or clean them up) and to tell which calls were cut, and the request's method
 * (`GET`: the standalone or a resumed SSE stream, which the SDK reconnects after every cut, for ever).
 * Bodiless responses are returned as they are. Redirects stay the SDK's business (it follows same-origin ones only).
 */

import { PantoError } from '../errors.js';
import { timerMs } from '../timer-ms.js';

type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * The global `fetch`, with every response body bounded as described above. `onCut` hears why a body was cut: the SDK
 * reads an error response with `text().catch(() => null)`, so without it the reason would be lost ("… endpoint: null").
 */
export function boundedFetch(
  maxBytes: number,
  onCut?: (reason: string, requestIds: Array<string | number>, method: string) => void,
  idleMs = Number.POSITIVE_INFINITY,
): FetchLike {
  return async (url, init) => {
    const response = await fetch(url, init);
    if (response.body === null) return response;
    const sse = /^\s*text\/event-stream\s*(;|$)/i.test(response.headers.get('content-type') ?? '');
    const method = (init?.method ?? 'GET').toUpperCase();
    const cut = onCut && ((reason: string) => onCut(reason, requestIds(init?.body), method));
    const body = response.body.pipeThrough(
      counter(maxBytes, sse, cut, sse ? Number.POSITIVE_INFINITY : idleMs),
    );
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/** The ids of the JSON-RPC requests in a POSTed body (one message or a batch); none for anything else. */
function requestIds(body: unknown): Array<string | number> {
  if (typeof body !== 'string') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [];
  }
  const ids: Array<string | number> = [];
  for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
    const msg = m as { id?: unknown; method?: unknown } | null;
    if (msg && typeof msg.method === 'string' && (typeof msg.id === 'string' || typeof msg.id === 'number')) {
      ids.push(msg.id);
    }
  }
  return ids;
}

function counter(
  maxBytes: number,
  perEvent: boolean,
  onCut: ((reason: string) => void) | undefined,
  idleMs: number,
): TransformStream<Uint8Array, Uint8Array> {
  let count = 0;
  // SSE: a blank line (empty, or a lone "\r") ends an event and restarts the count.
  let lineHasContent = false;
  let idle: ReturnType<typeof setTimeout> | undefined;
  let ended = false;
  const stall = (controller: TransformStreamDefaultController<Uint8Array>) => {
    if (!Number.isFinite(idleMs)) return;
    clearTimeout(idle);
    idle = setTimeout(() => {
      if (ended) return;
      ended = true;
      const reason = `the server's response body stalled: no byte for ${idleMs} ms; the call was ended`;
      onCut?.(reason);
      try {
        controller.error(new PantoError('ERR_MCP_LIMIT', reason));
      } catch {
        // the body was already cancelled by its reader
      }
    }, timerMs(idleMs));
    idle.unref?.();
  };
  const transformer = {
    start(controller: TransformStreamDefaultController<Uint8Array>) {
      stall(controller);
    },
    flush() {
      ended = true;
      clearTimeout(idle);
    },
    // The reader cancelled the body (Node versions that call a transformer's cancel): nothing stalls any more.
    cancel() {
      ended = true;
      clearTimeout(idle);
    },
    transform(chunk: Uint8Array, controller: TransformStreamDefaultController<Uint8Array>) {
      if (ended) return;
      stall(controller);
      count += chunk.byteLength;
      if (perEvent) {
        let pos = 0;
        for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, pos)) {
          const n = nl - pos;
          if (n > 1 || (n === 1 && chunk[pos] !== 13)) lineHasContent = true;
          // A blank line: the event ended; what follows it in this chunk is all that counts now.
          if (!lineHasContent) count = chunk.byteLength - (nl + 1);
          lineHasContent = false;
          pos = nl + 1;
        }
        const n = chunk.byteLength - pos;
        if (n > 1 || (n === 1 && chunk[pos] !== 13)) lineHasContent = true;
      }
      if (count > maxBytes) {
        const reason = `the server sent ${perEvent ? 'an SSE event' : 'a response body'} over ${maxBytes} bytes (maxMessageBytes); it was not read further`;
        ended = true;
        clearTimeout(idle);
        onCut?.(reason);
        controller.error(new PantoError('ERR_MCP_LIMIT', reason));
        return;
      }
      controller.enqueue(chunk);
    },
  };
  return new TransformStream<Uint8Array, Uint8Array>(transformer);
}
