/**
 * Inline Markdown of one line as styled runs: `code`, **strong** / __strong__, *emphasis* / _emphasis_,
 * ~~strike~~, [links](url) (the text underlined, the URL after it dimmed), ![images](url) as `[image: alt]`,
 * <autolinks> and backslash escapes. A delimiter with no closer on the line stays literal text. Lines over
 * `MAX_INLINE_CHARS` are left plain (the closer search is quadratic in the worst case).
 */
import type { Run, Style } from './styled-text.js';

export const MAX_INLINE_CHARS = 4000;

const CODE: Style = { fg: 33 };
const LINK_URL: Style = { dim: true };
const PUNCT = /[!-/:-@[-`{-~]/;

const isSpace = (c: string | undefined) => c === undefined || /\s/.test(c);
const isAlnum = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}]/u.test(c);

export function parseInline(line: string, base: Style = {}, offset = 0): Run[] {
  if (line.length > MAX_INLINE_CHARS) return [{ text: line, style: base, src: offset }];
  const out: Run[] = [];
  let plain = '';
  let plainStart = 0;
  const flush = () => {
    if (plain !== '') out.push({ text: plain, style: base, src: offset + plainStart });
    plain = '';
  };
  const addPlain = (text: string, at: number) => {
    if (plain === '') plainStart = at;
    plain += text;
  };
  let i = 0;
  while (i < line.length) {
    const c = line[i] as string;
    if (c === '\\' && i + 1 < line.length && PUNCT.test(line[i + 1] as string)) {
      flush();
      addPlain(line[i + 1] as string, i + 1);
      flush();
      i += 2;
      continue;
    }
    if (c === '`') {
      const n = runLength(line, i, '`');
      const close = findBacktickCloser(line, i + n, n);
      if (close >= 0) {
        flush();
        let code = line.slice(i + n, close);
        let start = i + n;
        if (code.length >= 2 && code.startsWith(' ') && code.endsWith(' ') && code.trim() !== '') {
          code = code.slice(1, -1);
          start++;
        }
        out.push({ text: code, style: { ...base, ...CODE }, src: offset + start });
        i = close + n;
        continue;
      }
      addPlain(line.slice(i, i + n), i);
      i += n;
      continue;
    }
    if (c === '*' || c === '_' || c === '~') {
      const n = runLength(line, i, c);
      const size = c === '~' ? (n === 2 ? 2 : 0) : Math.min(n, 3);
      if (size > 0 && n === size && opens(line, i, size, c)) {
        const close = findCloser(line, i + size, size, c);
        if (close >= 0) {
          flush();
          const style: Style =
            c === '~'
              ? { ...base, strike: true }
              : size === 1
                ? { ...base, italic: true }
                : size === 2
                  ? { ...base, bold: true }
                  : { ...base, bold: true, italic: true };
          out.push(...parseInline(line.slice(i + size, close), style, offset + i + size));
          i = close + size;
          continue;
        }
      }
      addPlain(line.slice(i, i + n), i);
      i += n;
      continue;
    }
    if (c === '[' || (c === '!' && line[i + 1] === '[')) {
      const image = c === '!';
      const link = parseLink(line, image ? i + 1 : i);
      if (link) {
        flush();
        if (image) {
          out.push({ text: `[image: ${link.text || link.url}]`, style: { ...base, dim: true }, src: -1 });
        } else {
          out.push(...parseInline(link.text, { ...base, underline: true }, offset + link.textStart));
          if (link.url !== link.text && link.url !== '')
            out.push({ text: ` (${link.url})`, style: { ...base, ...LINK_URL }, src: -1 });
        }
        i = link.end;
        continue;
      }
    }
    if (c === '<') {
      const m = /^<((?:https?|mailto):[^\s<>]+)>/.exec(line.slice(i));
      if (m) {
        flush();
        out.push({ text: m[1] as string, style: { ...base, underline: true }, src: offset + i + 1 });
        i += m[0].length;
        continue;
      }
    }
    addPlain(c, i);
    i++;
  }
  flush();
  return out;
}

function runLength(s: string, i: number, ch: string): number {
  let n = 0;
  while (s[i + n] === ch) n++;
  return n;
}

function findBacktickCloser(s: string, from: number, n: number): number {
  let i = s.indexOf('`', from);
  while (i >= 0) {
    const len = runLength(s, i, '`');
    if (len === n) return i;
    i = s.indexOf('`', i + len);
  }
  return -1;
}

/** A left-flanking delimiter run (`_` also not inside a word). */
function opens(s: string, i: number, n: number, ch: string): boolean {
  const after = s[i + n];
  if (isSpace(after)) return false;
  if (ch === '_' && isAlnum(s[i - 1])) return false;
  return true;
}

function findCloser(s: string, from: number, n: number, ch: string): number {
  let i = s.indexOf(ch, from);
  while (i >= 0) {
    const len = runLength(s, i, ch);
    if (len === n && i > from && !isSpace(s[i - 1]) && !(ch === '_' && isAlnum(s[i + n]))) return i;
    i = s.indexOf(ch, i + len);
  }
  return -1;
}

function parseLink(
  s: string,
  i: number,
): { text: string; textStart: number; url: string; end: number } | undefined {
  let depth = 0;
  let j = i;
  for (; j < s.length; j++) {
    const c = s[j];
    if (c === '\\') {
      j++;
      continue;
    }
    if (c === '[') depth++;
    else if (c === ']') {
      depth--;
      if (depth === 0) break;
    }
  }
  if (j >= s.length || s[j + 1] !== '(') return undefined;
  const close = s.indexOf(')', j + 2);
  if (close < 0) return undefined;
  const url = (
    s
      .slice(j + 2, close)
      .trim()
      .split(/\s+/)[0] ?? ''
  ).replace(/^<|>$/g, '');
  return { text: s.slice(i + 1, j), textStart: i + 1, url, end: close + 1 };
}
