/**
 * `fetch` for the Streamable HTTP client transport with a bound on what one response can make us hold.
 *
 * The SDK reads a JSON response with `response.json()`, an error response with `response.text()` and an SSE stream
 * with a parser that buffers an event until its blank line — all without a limit, and after `fetch` has transparently
 * decompressed the body (a 100 KB gzip body can be 100 MB of text). This wrapper passes every response body through a
 * counter that errors the body (and cancels the download) once
 * - an SSE (`text/event-stream`) body has more than `maxBytes` since its last blank line (one event), or
 * - any other body has more than `maxBytes` in total.
 * The SDK then reports the error (`onerror`) and the request fails or times out; memory stays bounded either way.
 * Bodiless responses are returned as they are. Redirects stay the SDK's business (it follows same-origin ones only).
 */

type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * The global `fetch`, with every response body bounded as described above. `onCut` hears why a body was cut: the SDK
 * reads an error response with `text().catch(() => null)`, so without it the reason would be lost ("… endpoint: null").
 */
export function boundedFetch(maxBytes: number, onCut?: (reason: string) => void): FetchLike {
  return async (url, init) => {
    const response = await fetch(url, init);
    if (response.body === null) return response;
    const sse = /^\s*text\/event-stream\s*(;|$)/i.test(response.headers.get('content-type') ?? '');
    const body = response.body.pipeThrough(counter(maxBytes, sse, onCut));
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

function counter(
  maxBytes: number,
  perEvent: boolean,
  onCut: ((reason: string) => void) | undefined,
): TransformStream<Uint8Array, Uint8Array> {
  let count = 0;
  // SSE: a blank line (empty, or a lone "\r") ends an event and restarts the count.
  let lineHasContent = false;
  return new TransformStream({
    transform(chunk, controller) {
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
        onCut?.(reason);
        controller.error(new Error(reason));
        return;
      }
      controller.enqueue(chunk);
    },
  });
}
