/**
 * The stream readline echoes into. While an answer streams, the echo of what the user types is held back so it
 * never lands in the middle of the answer; the line appears as `[queued] …` when sent, and a line still being typed
 * is redrawn with the prompt when the turn ends.
 */
import { Writable } from 'node:stream';

type TtyOut = NodeJS.WritableStream & { isTTY?: boolean; columns?: number; rows?: number };

export class MutedOutput extends Writable {
  muted = false;
  readonly isTTY: boolean;
  readonly #target: TtyOut;

  constructor(target: TtyOut) {
    super();
    this.#target = target;
    this.isTTY = Boolean(target.isTTY);
    // readline re-lays out its line on resize.
    (target as NodeJS.EventEmitter).on?.('resize', () => this.emit('resize'));
  }

  get columns(): number {
    return this.#target.columns ?? 80;
  }

  get rows(): number {
    return this.#target.rows ?? 24;
  }

  override _write(
    chunk: Buffer | string,
    _encoding: BufferEncoding,
    done: (error?: Error | null) => void,
  ): void {
    if (this.muted) {
      done();
      return;
    }
    // Forwarded at once (not on the target's callback) so the echo stays in order with the chat's own writes.
    this.#target.write(chunk);
    done();
  }
}
