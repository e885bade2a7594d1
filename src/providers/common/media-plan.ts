/**
 * Which images and PDFs go into one request. Every decision replaces a part by an honest text placeholder in the
 * REQUEST only (the stored conversation is never touched) and is reported as a warning.
 *
 * Order of the checks (deterministic; "oldest" = earliest in the conversation):
 * 1. parts the host named in `omitParts`;
 * 2. capability gating — an image/PDF (or image type) the model does not accept;
 * 3. per-part limits — one image over the model's byte or side limit, one PDF over the PDF byte limit;
 * 4. image count — the oldest images beyond `imagesPerRequest`;
 * 5. the many-image rule — while the request holds more than `over` images and any of them is larger than `maxSide`,
 *    the oldest image goes (so the newest pictures survive);
 * 6. total image bytes, then PDF bytes/pages, then the whole request size — oldest first until it fits.
 * The newest parts are never dropped while an older one of the same kind could be.
 */

import type { DocumentPart, ImagePart } from '../../conversation.js';
import type { ModelInfo } from '../model/model-info.js';
import type { PreparedDocument, PreparedImage, PreparedPart } from './prepared.js';
import type {
  PartRef,
  SerializeOptions,
  SerializeWarning,
  SerializeWarningCode,
} from './serialize-options.js';

/** One image/document of the request and where its prepared form sits (so a placeholder can replace it). */
export interface MediaItem {
  prepared: PreparedImage | PreparedDocument;
  list: PreparedPart[];
  index: number;
  ref: PartRef;
  omitted?: boolean;
}

/** Per-part JSON overhead counted towards the request size (keys, media type, data-URL prefix). */
const PART_OVERHEAD = 96;

const MiB = 1024 * 1024;

/**
 * Apply the checks above to `items` (oldest first), replacing omitted parts in their lists. `textBytes` is an
 * estimate of everything in the request that is not media. Returns one warning per distinct reason.
 */
export function planMedia(
  items: MediaItem[],
  model: ModelInfo,
  options: SerializeOptions,
  textBytes: number,
): SerializeWarning[] {
  if (items.length === 0) return [];
  const groups = new Map<
    string,
    { code: SerializeWarningCode; reason: string; noun: string; keys: string[] }
  >();
  const m = `model '${model.id}'`;
  const { limits, input } = model;

  const omit = (item: MediaItem, code: SerializeWarningCode, reason: string): void => {
    const noun = item.prepared.kind;
    item.list[item.index] = { kind: 'text', text: `[${noun} omitted: ${reason}]` };
    item.omitted = true;
    const id = `${code}|${noun}|${reason}`;
    let group = groups.get(id);
    if (!group) {
      group = { code, reason, noun, keys: [] };
      groups.set(id, group);
    }
    group.keys.push(item.prepared.key);
  };
  const alive = (kind?: 'image' | 'document'): MediaItem[] =>
    items.filter((it) => !it.omitted && (kind === undefined || it.prepared.kind === kind));

  // 1. Host omissions.
  const filter = options.omitParts;
  if (filter !== undefined) {
    const reason = options.omitReason ?? 'left out of this request by the host';
    for (const item of items) {
      const hit =
        typeof filter === 'function'
          ? filter(item.ref, item.prepared.part as ImagePart | DocumentPart)
          : filter.has(item.prepared.key);
      if (hit) omit(item, 'omitted-by-host', reason);
    }
  }

  // 2. Capability gating.
  for (const item of alive()) {
    const p = item.prepared;
    if (p.kind === 'image') {
      if (!input.image) omit(item, 'unsupported-input', `${m} does not accept image input`);
      else if (input.imageTypes && !input.imageTypes.includes(p.part.mediaType)) {
        omit(item, 'unsupported-input', `${m} does not accept ${p.part.mediaType} images`);
      }
    } else if (!input.pdf) {
      omit(item, 'unsupported-input', `${m} does not accept PDF input`);
    }
  }

  // 3. Per-part limits.
  for (const item of alive()) {
    const p = item.prepared;
    if (p.kind === 'image') {
      const side = Math.max(p.part.width, p.part.height);
      if (p.part.data.length > limits.maxImageBytes) {
        omit(
          item,
          'request-limit',
          `it exceeds the limit of ${bytes(limits.maxImageBytes)} per image for ${m}`,
        );
      } else if (limits.maxImageSide !== undefined && side > limits.maxImageSide) {
        omit(item, 'request-limit', `it exceeds the limit of ${limits.maxImageSide} px per side for ${m}`);
      }
    } else if (limits.pdfBytes !== undefined && p.part.data.length > limits.pdfBytes) {
      omit(
        item,
        'request-limit',
        `it exceeds the limit of ${bytes(limits.pdfBytes)} of PDF per request for ${m}`,
      );
    }
  }

  // 4. Image count.
  const images = alive('image');
  const excess = images.length - limits.imagesPerRequest;
  for (let i = 0; i < excess; i++) {
    omit(
      images[i] as MediaItem,
      'request-limit',
      `request limit of ${limits.imagesPerRequest} images for ${m}; this older image was left out`,
    );
  }

  // 5. Many-image side rule.
  const rule = limits.manyImageRule;
  if (rule) {
    const kept = alive('image');
    let count = kept.length;
    let oversized = kept.filter((it) => sideOf(it) > rule.maxSide).length;
    for (const item of kept) {
      if (count <= rule.over || oversized === 0) break;
      if (sideOf(item) > rule.maxSide) oversized--;
      count--;
      omit(
        item,
        'request-limit',
        `${m} allows at most ${rule.maxSide} px per side when a request holds more than ${rule.over} images; this older image was left out`,
      );
    }
  }

  // 6. Byte and page budgets, oldest first (each step sees what the previous ones left).
  const byteSize = (it: MediaItem) => it.prepared.part.data.length;
  const pageCount = (it: MediaItem) => (it.prepared.part as DocumentPart).pages ?? 0;
  const budgets = [
    {
      max: limits.totalImageBytes,
      kind: 'image',
      size: byteSize,
      amount: (n: number) => `${bytes(n)} of images`,
    },
    { max: limits.pdfBytes, kind: 'document', size: byteSize, amount: (n: number) => `${bytes(n)} of PDF` },
    { max: limits.pdfPages, kind: 'document', size: pageCount, amount: (n: number) => `${n} PDF pages` },
  ] as const;
  for (const { max, kind, size, amount } of budgets) {
    if (max === undefined) continue;
    dropOldest(alive(kind), max, size, (it) => {
      omit(it, 'request-limit', `request limit of ${amount(max)} for ${m}; this older ${kind} was left out`);
    });
  }
  const requestBudget = limits.requestBytes - textBytes;
  dropOldest(
    alive(),
    requestBudget,
    (it) => it.prepared.part.data.length + PART_OVERHEAD,
    (it) => {
      omit(
        it,
        'request-limit',
        `request size limit of ${bytes(limits.requestBytes)} for ${m}; this older ${it.prepared.kind} was left out`,
      );
    },
  );

  return [...groups.values()].map((g) => ({
    code: g.code,
    message: `${g.keys.length} ${g.noun}${g.keys.length === 1 ? '' : 's'} replaced by a placeholder: ${g.reason}`,
    parts: g.keys,
  }));
}

function sideOf(item: MediaItem): number {
  const part = item.prepared.part as ImagePart;
  return Math.max(part.width, part.height);
}

/** Call `drop` on the oldest items until the sum of `size` over the rest is at most `budget`. */
function dropOldest(
  items: MediaItem[],
  budget: number,
  size: (item: MediaItem) => number,
  drop: (item: MediaItem) => void,
): void {
  let total = 0;
  for (const item of items) total += size(item);
  for (const item of items) {
    if (total <= budget) return;
    total -= size(item);
    drop(item);
  }
}

function bytes(n: number): string {
  if (n % MiB === 0) return `${n / MiB} MiB`;
  return `${n} bytes`;
}
