/**
 * Generated message JSON for the `textInFile` parity tests: message objects whose text places hold repeated and
 * `\u`-escaped `text` keys, long literals of awkward characters, non-strings and broken literals (a raw control
 * character, a bad escape), in parts of every type. Written as raw JSON text, so keys can repeat.
 */

/** A mulberry32 stream in [0, 1). */
export function mulberry32(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface HostileTextLines {
  pick<T>(xs: readonly T[]): T;
  /** `k`, or (15%) `k` with its first `t` written `\u0074`. */
  key(k: string): string;
  /** A message object's JSON (role, one or two `content` and `results` keys). */
  message(): string;
}

/** The generator over `random`; `prose` is one of the long texts it writes. */
export function hostileTextLines(random: () => number, prose: string): HostileTextLines {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
  const key = (k: string) => (random() < 0.15 ? k.replace('t', '\\u0074') : k);
  const longText = () =>
    JSON.stringify(
      pick([prose, 'x'.repeat(40), '', '日本語'.repeat(9), '\u0000\n\t"'.repeat(5), '😀'.repeat(12)]) +
        pick(['', 'ï', '\\']),
    );
  const broken = () =>
    pick(['"raw\u0001control pad pad pad pad pad pad pad"', '"bad \\x escape pad pad pad pad pad pad"']);
  const textValue = () => {
    const r = random();
    return r < 0.96 ? longText() : r < 0.98 ? pick(['5', 'null', '{}', '["a"]']) : broken();
  };
  const part = (): string => {
    const fields = [`"${key('type')}":"${random() < 0.85 ? 'text' : random() < 0.8 ? 'thinking' : 'image'}"`];
    const count = random() < 0.7 ? 1 : 2 + Math.floor(random() * 2);
    for (let i = 0; i < count; i++) fields.push(`"${key('text')}":${textValue()}`);
    if (random() < 0.1) fields.push('"extra":1');
    if (random() < 0.3) fields.reverse();
    return `{${fields.join(',')}}`;
  };
  const parts = () => `[${Array.from({ length: Math.floor(random() * 3) }, part).join(',')}]`;
  const message = (): string => {
    const role = random() < 0.97 ? pick(['user', 'assistant', 'tool']) : 'system';
    const fields = [`"role":"${role}"`];
    for (let i = 0, count = 1 + Math.floor(random() * 2); i < count; i++) {
      fields.push(`"${key('content')}":${parts()}`);
      fields.push(
        `"${key('results')}":[{"type":"tool_result","toolUseId":"c","toolName":"t","isError":false,"parts":${parts()}}]`,
      );
    }
    return `{${fields.join(',')}}`;
  };
  return { pick, key, message };
}
