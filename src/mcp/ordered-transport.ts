/**
 * A client `Transport` around another (stdio or Streamable HTTP) that delivers what the server sent in wire order and
 * lets every notification be handled before a response read after it settles its request.
 *
 * The SDK client runs a notification's handler a microtask after reading it but settles a response at once: a
 * progress notification read in the same chunk as its call's response would find the call finished and be dropped
 * ("unknown token"). Here a response that follows a notification delivered in the same turn waits one macrotask
 * (`setImmediate`), so the notification's handler has run. Everything else is delivered at once, in order.
 *
 * Uses only the public `Transport` interface of the inner transport (its callbacks and methods), so an SDK upgrade
 * cannot undo it. Besides: `onSend` sees every message before it is sent, and `inject` delivers a message as if the
 * server had sent it (a response made up for a request whose answer was cut). When the inner transport closes,
 * messages still waiting are delivered first, then `onclose`.
 */

import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';

type Queued = { message: JSONRPCMessage; extra: MessageExtraInfo | undefined };

export class OrderedTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  readonly inner: Transport;
  readonly #onSend: ((message: JSONRPCMessage) => void) | undefined;
  readonly #queue: Queued[] = [];
  #scheduled: ReturnType<typeof setImmediate> | undefined;
  /** A notification was delivered in the current turn (a response after it must wait for the next). */
  #notifiedThisTurn = false;
  #turnReset: ReturnType<typeof setImmediate> | undefined;

  constructor(inner: Transport, onSend?: (message: JSONRPCMessage) => void) {
    this.inner = inner;
    this.#onSend = onSend;
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  start(): Promise<void> {
    this.inner.onmessage = (message, extra) => this.#push(message, extra);
    this.inner.onerror = (error) => this.onerror?.(error);
    this.inner.onclose = () => {
      this.#drain(true);
      this.onclose?.();
    };
    return this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    this.#onSend?.(message);
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** Deliver `message` as if the server had sent it (in order with what was read). */
  inject(message: JSONRPCMessage): void {
    this.#push(message, undefined);
  }

  #push(message: JSONRPCMessage, extra: MessageExtraInfo | undefined): void {
    this.#queue.push({ message, extra });
    if (this.#scheduled === undefined) this.#drain(false);
  }

  /** Deliver in order; stop before a response that follows a notification of this turn (unless `all`). */
  #drain(all: boolean): void {
    if (this.#scheduled !== undefined && all) {
      clearImmediate(this.#scheduled);
      this.#scheduled = undefined;
    }
    while (this.#queue.length > 0) {
      const { message, extra } = this.#queue[0] as Queued;
      const response = 'id' in message && !('method' in message);
      if (response && this.#notifiedThisTurn && !all) {
        this.#scheduled = setImmediate(() => {
          this.#scheduled = undefined;
          this.#notifiedThisTurn = false;
          this.#drain(false);
        });
        return;
      }
      this.#queue.shift();
      if (!response) this.#markNotified();
      this.onmessage?.(message, extra);
    }
  }

  #markNotified(): void {
    this.#notifiedThisTurn = true;
    this.#turnReset ??= setImmediate(() => {
      this.#turnReset = undefined;
      this.#notifiedThisTurn = false;
    });
  }
}
