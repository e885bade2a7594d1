/** Drain a provider stream to its final message (for callers that do not need deltas, e.g. a summarizer). */

import type { AssistantMessage } from '../../conversation.js';
import { PantoError } from '../../errors.js';
import type { StreamEvent } from './stream-event.js';

/**
 * Resolve to the `done` message; reject with the `error` event's `PantoError` (the partial message is dropped).
 * `onEvent` sees every event on the way. Rejects with `ERR_PROVIDER` when the stream ends without a terminal event.
 */
export async function collectStream(
  events: AsyncIterable<StreamEvent>,
  onEvent?: (event: StreamEvent) => void,
): Promise<AssistantMessage> {
  for await (const event of events) {
    onEvent?.(event);
    if (event.type === 'done') return event.message;
    if (event.type === 'error') throw event.error;
  }
  throw new PantoError('ERR_PROVIDER', 'the provider stream ended without a final message');
}
