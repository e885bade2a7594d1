/**
 * Which images and PDFs go into one request, and how. Every decision changes the REQUEST only (the stored conversation
 * is never touched) and is reported as a warning: a part replaced by an honest text placeholder, an older image sent
 * as a smaller copy, a part sent as a provider file reference.
 *
 * Order of the checks (deterministic; "oldest" = earliest in the conversation):
 * 1. parts the host named in `omitParts`;
 * 2. capability gating — an image/PDF (or image type) the model does not accept;
 * 3. per-part limits — one image over the model's byte or side limit is sent re-encoded within them, one PDF over
 *    the PDF byte limit is left out;
 * 4. image count — the oldest images beyond `imagesPerRequest` are left out;
 * 5. the many-image rule — while the request holds more than `over` images, every image larger than `maxSide` is
 *    sent re-encoded to `maxSide`; what still breaks the rule goes, oldest first (so the newest pictures survive);
 * 6. total image bytes, then PDF bytes/pages, then the whole request size — the oldest inline images are sent as
 *    smaller copies (`DEGRADE_TARGET`) until the request fits, and only then are the oldest parts left out.
 * The newest parts are never dropped while an older one of the same kind could be.
 *
 * Degrade before drop: a re-encode is I/O the serializer cannot do. The plan names each copy it wants
 * (`wanted.degrade`, keyed by the stored bytes' hash and the target) and uses it when `options.degraded` holds it; a
 * copy not there yet is left out this time, exactly as without re-encoding, so every body is valid on its own. The
 * agent re-encodes the wanted copies and serializes again.
 *
 * File references: a part the surface can reference (`MediaItem.referable`) whose hash `options.files` maps to a file
 * is sent by id; it costs a few bytes of the request, so the byte budgets of step 6 leave it out (image counts, page
 * counts and the pixel rules still apply: the provider processes the picture either way). A part with no entry is
 * wanted as an upload (`wanted.uploads`).
 */

import type { DocumentPart, ImagePart } from '../../conversation.js';
import type { ModelInfo } from '../model/model-info.js';
import {
  type DegradeTarget,
  type DegradeWish,
  degradeKey,
  mediaSha256,
  type RequestWishes,
  type UploadWish,
} from './media-files.js';
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
  /** The surface can reference an uploaded file where this part sits. */
  referable: boolean;
  omitted?: boolean;
}

/** How a re-encode went: the copy stands in the request, is wanted (not made yet), or could not be made. */
type Degrade = 'done' | 'pending' | 'failed';

/** What the plan decided besides the placeholders it put in the part lists. */
export interface MediaPlan {
  warnings: SerializeWarning[];
  wanted?: RequestWishes;
}

/** Per-part JSON overhead counted towards the request size (keys, media type, data-URL prefix). */
const PART_OVERHEAD = 96;

/** Request bytes of a part sent as a file reference (its block, the id). */
const REFERENCE_BYTES = 160;

/**
 * The smaller copy the byte budgets send for an older image: at most 1024 px per side and 192 KiB encoded (a
 * 2880x1800 screenshot becomes 1024x640, still legible; ~6% of its tokens on Anthropic). One fixed target, so the
 * copy of an image is the same bytes every turn: cached by the caller and by the provider's prompt cache.
 */
export const DEGRADE_TARGET: DegradeTarget = { maxSide: 1024, maxBytes: 192 * 1024 };

const MiB = 1024 * 1024;

/**
 * Apply the checks above to `items` (oldest first), replacing omitted parts in their lists, substituting smaller
 * copies and setting file references. `textBytes` is an estimate of everything in the request that is not media.
 * Returns one warning per distinct reason and the wishes.
 */
export function planMedia(
  items: MediaItem[],
  model: ModelInfo,
  options: SerializeOptions,
  textBytes: number,
): MediaPlan {
  if (items.length === 0) return { warnings: [] };
  const groups = new Map<
    string,
    { code: SerializeWarningCode; reason: string; noun: string; keys: string[] }
  >();
  const m = `model '${model.id}'`;
  const { limits, input } = model;
  const files = options.files;
  const degradeWishes = new Map<string, DegradeWish>();
  /** The stored image behind each item sent as a copy, and why (the last reason wins). */
  const degraded = new Map<MediaItem, { original: ImagePart; target: DegradeTarget; reason: string }>();

  const omit = (item: MediaItem, code: SerializeWarningCode, reason: string): void => {
    const noun = item.prepared.kind;
    item.list[item.index] = { kind: 'text', text: `[${noun} omitted: ${reason}]` };
    item.omitted = true;
    degraded.delete(item);
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

  /**
   * Send `item` (an image) as a copy re-encoded to `target`, always made from the stored bytes: `done` when the copy
   * is in `options.degraded` and now stands in the request; `pending` when it is not there yet (it is wanted) and
   * `failed` when its re-encode failed — then the image is left as it is for the checks that follow.
   */
  const tryDegrade = (item: MediaItem, target: DegradeTarget, reason: string): Degrade => {
    const original = degraded.get(item)?.original ?? (item.prepared.part as ImagePart);
    const sha256 = mediaSha256(original);
    const key = degradeKey(sha256, target);
    const copy = options.degraded?.get(key);
    if (copy === undefined) {
      if (!degradeWishes.has(key)) degradeWishes.set(key, { key, sha256, part: original, target });
      return 'pending';
    }
    if (copy === null) return 'failed';
    item.prepared.part = copy;
    degraded.set(item, { original, target, reason });
    return 'done';
  };

  /** Whether the part is planned as a reference (a known file, or assumed to be uploaded). */
  const referenced = (item: MediaItem): boolean => {
    if (!item.referable || files === undefined) return false;
    const found = files.get(mediaSha256(item.prepared.part));
    return found === undefined ? options.assumeUploaded === true : found !== null;
  };

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
      const overBytes = p.part.data.length > limits.maxImageBytes;
      const overSide = limits.maxImageSide !== undefined && side > limits.maxImageSide;
      if (!overBytes && !overSide) continue;
      const target = {
        maxSide: Math.min(side, limits.maxImageSide ?? side),
        maxBytes: rawBytesFor(limits.maxImageBytes),
      };
      const reason = overBytes
        ? `it exceeds the limit of ${bytes(limits.maxImageBytes)} per image for ${m}`
        : `it exceeds the limit of ${limits.maxImageSide} px per side for ${m}`;
      if (tryDegrade(item, target, reason) !== 'done') omit(item, 'request-limit', reason);
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

  // 5. Many-image side rule: re-encode every oversized image, then drop what still breaks the rule, oldest first.
  const rule = limits.manyImageRule;
  if (rule) {
    const kept = alive('image');
    if (kept.length > rule.over) {
      const reason = `${m} allows at most ${rule.maxSide} px per side when a request holds more than ${rule.over} images`;
      for (const item of kept) {
        if (sideOf(item) > rule.maxSide) {
          tryDegrade(item, { maxSide: rule.maxSide, maxBytes: rawBytesFor(limits.maxImageBytes) }, reason);
        }
      }
    }
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

  // 6. Byte and page budgets, oldest first (each step sees what the previous ones left). Bytes count what is on the
  // wire: a referenced part's bytes are not.
  const wireSize = (it: MediaItem) => (referenced(it) ? 0 : it.prepared.part.data.length);
  const pageCount = (it: MediaItem) => (it.prepared.part as DocumentPart).pages ?? 0;
  const budgets = [
    {
      max: limits.totalImageBytes,
      kind: 'image',
      size: wireSize,
      amount: (n: number) => `${bytes(n)} of images`,
    },
    { max: limits.pdfBytes, kind: 'document', size: wireSize, amount: (n: number) => `${bytes(n)} of PDF` },
    { max: limits.pdfPages, kind: 'document', size: pageCount, amount: (n: number) => `${n} PDF pages` },
  ] as const;
  for (const { max, kind, size, amount } of budgets) {
    if (max === undefined) continue;
    if (kind === 'image') {
      const reason = `request limit of ${amount(max)} for ${m}`;
      degradeToFit(alive('image'), max, size, (it) =>
        referenced(it) ? 'failed' : tryDegrade(it, DEGRADE_TARGET, reason),
      );
    }
    dropOldest(alive(kind), max, size, (it) => {
      omit(it, 'request-limit', `request limit of ${amount(max)} for ${m}; this older ${kind} was left out`);
    });
  }
  const requestBudget = limits.requestBytes - textBytes;
  const requestSize = (it: MediaItem) =>
    (referenced(it) ? REFERENCE_BYTES : it.prepared.part.data.length) + PART_OVERHEAD;
  const requestReason = `request size limit of ${bytes(limits.requestBytes)} for ${m}`;
  degradeToFit(alive(), requestBudget, requestSize, (it) =>
    referenced(it) ? 'failed' : tryDegrade(it, DEGRADE_TARGET, requestReason),
  );
  dropOldest(alive(), requestBudget, requestSize, (it) => {
    omit(it, 'request-limit', `${requestReason}; this older ${it.prepared.kind} was left out`);
  });

  // File references of what is left, and the uploads wanted for it.
  const uploads = new Map<string, UploadWish>();
  if (files !== undefined) {
    for (const item of alive()) {
      if (!item.referable) continue;
      const sha256 = mediaSha256(item.prepared.part);
      const file = files.get(sha256);
      if (file) item.prepared.file = file;
      else if (file === undefined && !uploads.has(sha256))
        uploads.set(sha256, { sha256, part: item.prepared.part });
    }
  }

  const warnings: SerializeWarning[] = [...groups.values()].map((g) => ({
    code: g.code,
    message: `${g.keys.length} ${g.noun}${g.keys.length === 1 ? '' : 's'} replaced by a placeholder: ${g.reason}`,
    parts: g.keys,
  }));
  const sent = new Map<string, { target: DegradeTarget; keys: string[] }>();
  for (const [item, { target, reason }] of degraded) {
    const id = `${reason}|${target.maxSide}`;
    const group = sent.get(id) ?? { target, keys: [] };
    group.keys.push(item.prepared.key);
    sent.set(id, group);
  }
  for (const [id, { target, keys }] of sent) {
    const reason = id.slice(0, id.lastIndexOf('|'));
    warnings.push({
      code: 'media-degraded',
      message: `${keys.length} older image${keys.length === 1 ? ' was' : 's were'} sent smaller (re-encoded to at most ${target.maxSide} px and ${kib(target.maxBytes)}; the stored conversation is unchanged): ${reason}`,
      parts: keys,
    });
  }
  const plan: MediaPlan = { warnings };
  if (uploads.size > 0 || degradeWishes.size > 0) {
    plan.wanted = { uploads: [...uploads.values()], degrade: [...degradeWishes.values()] };
  }
  return plan;
}

function sideOf(item: MediaItem): number {
  const part = item.prepared.part as ImagePart;
  return Math.max(part.width, part.height);
}

/**
 * While the sum of `size` over `items` is over `budget`, send the oldest inline images as copies (`degrade`), oldest
 * first, counting a copy not made yet at its most (`DEGRADE_TARGET.maxBytes` as base64) so that only as many are
 * wanted as the budget needs. Images already within the target and documents are skipped; `degrade` answers
 * `failed` for an image it will not re-encode (a reference: its bytes are not in the request).
 */
function degradeToFit(
  items: MediaItem[],
  budget: number,
  size: (item: MediaItem) => number,
  degrade: (item: MediaItem) => Degrade,
): void {
  let total = 0;
  for (const item of items) total += size(item);
  const most = Math.ceil(DEGRADE_TARGET.maxBytes / 3) * 4;
  for (const item of items) {
    if (total <= budget) return;
    if (item.prepared.kind !== 'image') continue;
    const part = item.prepared.part;
    if (Math.max(part.width, part.height) <= DEGRADE_TARGET.maxSide && part.data.length <= most) continue;
    const before = size(item);
    const outcome = degrade(item);
    if (outcome === 'done') total -= before - size(item);
    else if (outcome === 'pending') total -= Math.max(0, part.data.length - most);
  }
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

/** Largest raw byte count whose base64 encoding fits in `base64Length` characters. */
function rawBytesFor(base64Length: number): number {
  return Math.floor(base64Length / 4) * 3;
}

function bytes(n: number): string {
  if (n % MiB === 0) return `${n / MiB} MiB`;
  return `${n} bytes`;
}

function kib(n: number): string {
  return n % 1024 === 0 ? `${n / 1024} KiB` : bytes(n);
}
