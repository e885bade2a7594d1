/**
 * Deterministic corrupt and truncated variants of real files, for robustness tests. Every function copies; the input
 * is never modified. Same seed -> same bytes, so a failure names a reproducible case.
 */

/** mulberry32: a small seeded PRNG returning floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Variant {
  /** Human-readable case name, e.g. `truncated@128` or `flipped#3`. */
  name: string;
  bytes: Buffer;
}

/**
 * Prefixes of `bytes`: cut at a few fixed small offsets (inside the magic and header), at 25/50/75 % and just before
 * the end. Offsets are unique, sorted, and strictly shorter than the input.
 */
export function truncations(bytes: Uint8Array): Variant[] {
  const n = bytes.length;
  const cuts = new Set<number>([0, 1, 4, 8, 12, 16, 24, 32, 64]);
  for (const f of [0.25, 0.5, 0.75]) cuts.add(Math.floor(n * f));
  cuts.add(n - 16);
  cuts.add(n - 2);
  cuts.add(n - 1);
  return [...cuts]
    .filter((c) => c >= 0 && c < n)
    .sort((a, b) => a - b)
    .map((c) => ({ name: `truncated@${c}`, bytes: Buffer.from(bytes.subarray(0, c)) }));
}

/**
 * `count` variants of `bytes`, each with `flips` bytes XORed with a random non-zero value at random positions at or
 * after `keepPrefix` (keep the magic so the file is still routed to its decoder).
 */
export function byteFlips(
  bytes: Uint8Array,
  options: { seed: number; count: number; flips: number; keepPrefix?: number },
): Variant[] {
  const rand = seededRandom(options.seed);
  const start = Math.min(options.keepPrefix ?? 0, bytes.length);
  const span = bytes.length - start;
  const out: Variant[] = [];
  for (let i = 0; i < options.count; i++) {
    const copy = Buffer.from(bytes);
    for (let k = 0; k < options.flips && span > 0; k++) {
      const at = start + Math.floor(rand() * span);
      copy[at] = (copy[at] as number) ^ (1 + Math.floor(rand() * 255));
    }
    out.push({ name: `flipped#${i}(seed ${options.seed})`, bytes: copy });
  }
  return out;
}

/** `bytes` with every byte from `from` on replaced by `fill` (a zeroed tail keeps the length but loses the data). */
export function zeroedTail(bytes: Uint8Array, from: number, fill = 0): Buffer {
  const copy = Buffer.from(bytes);
  copy.fill(fill, Math.min(from, copy.length));
  return copy;
}
