/**
 * A tool result cut to a number of text characters: the text beyond it is cut from the middle of each long text part,
 * keeping the part's head and tail, with a note in the cut that says how much was cut and how to get it. Short parts
 * are kept whole (the room is shared out so that a long part never costs a short one its text); images and PDFs are
 * not touched (the media pipeline bounds them). Used where tool results are stored (the Agent's share of the context
 * window) and by compaction (a kept result that alone would not fit).
 */

import type { StoredPart, ToolResultBlock } from '../conversation.js';

/** The note that stands for the cut part of a text of `total` characters, `cut` of them left out. */
export function cutNote(cut: number, total: number, limit: number): string {
  return (
    `\n\n[… ${cut} of this tool result's ${total} characters were cut here: more than its share of the context ` +
    `window (${limit} characters). To see them, call the tool again for a smaller piece, e.g. a line or byte range. …]\n\n`
  );
}

/** `block` with its text parts together at most about `maxChars` characters (notes included); `block` itself when so. */
export function shortenToolResult(block: ToolResultBlock, maxChars: number): ToolResultBlock {
  const limit = Math.max(0, Math.floor(maxChars));
  const texts: Array<{ index: number; length: number }> = [];
  let total = 0;
  block.parts.forEach((p, index) => {
    if (p?.type !== 'text' || typeof p.text !== 'string') return;
    texts.push({ index, length: p.text.length });
    total += p.text.length;
  });
  if (total <= limit) return block;
  // Share the room out, shortest first: a part that fits its fair share is kept whole and leaves the rest to others.
  texts.sort((a, b) => a.length - b.length);
  const room = new Map<number, number>();
  let left = limit;
  texts.forEach((t, k) => {
    const fair = Math.floor(left / (texts.length - k));
    const take = Math.min(t.length, fair);
    room.set(t.index, take);
    left -= take;
  });
  const parts = block.parts.map((p, index): StoredPart => {
    const keep = room.get(index);
    if (keep === undefined || p.type !== 'text' || p.text.length <= keep) return p;
    return { type: 'text', text: cutMiddle(p.text, keep, limit) };
  });
  return { ...block, parts };
}

/** `text` cut to about `room` characters: head, note, tail (the head twice the tail), never inside a surrogate pair. */
function cutMiddle(text: string, room: number, limit: number): string {
  const note = cutNote(text.length, text.length, limit);
  const keep = Math.max(0, room - note.length);
  let head = Math.ceil((keep * 2) / 3);
  let tail = keep - head;
  if (isHighSurrogate(text.charCodeAt(head - 1))) head--;
  if (tail > 0 && isLowSurrogate(text.charCodeAt(text.length - tail))) tail--;
  const cut = text.length - head - tail;
  return `${text.slice(0, head)}${cutNote(cut, text.length, limit)}${tail > 0 ? text.slice(text.length - tail) : ''}`;
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}
