/**
 * A small syntax highlighter for code fences: keywords, strings, numbers and comments of the common languages (C-like,
 * JavaScript/TypeScript, Python, shell, Rust, Go, Lua, SQL, Ruby), one line at a time. Block comments (`/* … *\/`,
 * Lua `--[[ … ]]`) carry over lines through `HighlightState`. It only colours: the text of every line is kept as is.
 */
import type { Run, Style } from './styled-text.js';

/** Longer lines are shown plain (the scan is quadratic in the worst case). */
export const MAX_HIGHLIGHT_CHARS = 2000;

const KEYWORD: Style = { fg: 35 };
const STRING: Style = { fg: 32 };
const NUMBER: Style = { fg: 33 };
const COMMENT: Style = { fg: 90 };
const PLAIN: Style = {};

type Family = 'c' | 'hash' | 'lua' | 'sql' | 'none';

const FAMILY: Record<string, Family> = {};
for (const l of [
  'js',
  'javascript',
  'jsx',
  'ts',
  'typescript',
  'tsx',
  'c',
  'h',
  'cpp',
  'c++',
  'cc',
  'hpp',
  'java',
  'kotlin',
  'kt',
  'swift',
  'go',
  'rust',
  'rs',
  'cs',
  'csharp',
  'scala',
  'dart',
  'php',
  'json',
  'jsonc',
  'css',
  'scss',
  'zig',
])
  FAMILY[l] = 'c';
for (const l of [
  'py',
  'python',
  'sh',
  'bash',
  'zsh',
  'shell',
  'console',
  'rb',
  'ruby',
  'yaml',
  'yml',
  'toml',
  'make',
  'makefile',
  'dockerfile',
  'r',
  'perl',
  'ini',
  'conf',
])
  FAMILY[l] = 'hash';
for (const l of ['lua', 'haskell', 'hs']) FAMILY[l] = 'lua';
FAMILY.sql = 'sql';

const KEYWORDS = new Set(
  (
    'abstract and as async await break case catch class const continue def default defer del delete do elif else ' +
    'elseif end enum esac export extends false fi fn for from func function go if impl import in interface is let ' +
    'local loop match mod module mut new nil none not null or package pass pub raise repeat return select self ' +
    'static struct super switch then this throw trait true try type typeof until use var void when where while with ' +
    'yield lambda None True False int float str bool string number boolean unsigned char double long short'
  ).split(' '),
);
const SQL_KEYWORDS = new Set(
  'select from where insert into values update set delete create table drop alter join left right inner outer on group by order having limit and or not null as distinct union all'.split(
    ' ',
  ),
);

export interface HighlightState {
  /** Inside a block comment that ends with this text. */
  blockEnd?: string;
}

/** The runs of one code line in `language`; `state` carries a block comment to the next line. */
export function highlightLine(line: string, language: string, state: HighlightState): Run[] {
  const family = FAMILY[language.toLowerCase()] ?? (language === '' ? 'none' : 'c');
  if ((family === 'none' && state.blockEnd === undefined) || line.length > MAX_HIGHLIGHT_CHARS)
    return [{ text: line, style: PLAIN, src: 0 }];
  const out: Run[] = [];
  const add = (text: string, style: Style, src: number) => {
    if (text !== '') out.push({ text, style, src });
  };
  let i = 0;
  if (state.blockEnd !== undefined) {
    const end = line.indexOf(state.blockEnd);
    if (end < 0) return [{ text: line, style: COMMENT, src: 0 }];
    add(line.slice(0, end + state.blockEnd.length), COMMENT, 0);
    i = end + state.blockEnd.length;
    delete state.blockEnd;
  }
  let plainStart = i;
  const flushPlain = (to: number) => {
    add(line.slice(plainStart, to), PLAIN, plainStart);
  };
  while (i < line.length) {
    const rest = line.slice(i);
    const c = line[i] as string;
    const lineComment =
      (family === 'c' && rest.startsWith('//')) ||
      (family === 'hash' && c === '#' && (i === 0 || /\s/.test(line[i - 1] as string))) ||
      ((family === 'lua' || family === 'sql') && rest.startsWith('--') && !rest.startsWith('--[['));
    if (lineComment) {
      flushPlain(i);
      add(rest, COMMENT, i);
      return out;
    }
    const blockOpen =
      family === 'c' || family === 'sql' ? (rest.startsWith('/*') ? '*/' : undefined) : undefined;
    const luaBlock = family === 'lua' && rest.startsWith('--[[') ? ']]' : undefined;
    const open = blockOpen ?? luaBlock;
    if (open !== undefined) {
      flushPlain(i);
      const end = line.indexOf(open, i + 2);
      if (end < 0) {
        add(rest, COMMENT, i);
        state.blockEnd = open;
        return out;
      }
      add(line.slice(i, end + open.length), COMMENT, i);
      i = end + open.length;
      plainStart = i;
      continue;
    }
    if (c === '"' || c === "'" || c === '`') {
      flushPlain(i);
      let j = i + 1;
      while (j < line.length && line[j] !== c) j += line[j] === '\\' ? 2 : 1;
      const end = Math.min(line.length, j + 1);
      add(line.slice(i, end), STRING, i);
      i = end;
      plainStart = i;
      continue;
    }
    if (/[0-9]/.test(c) && (i === 0 || !/[\w$]/.test(line[i - 1] as string))) {
      const m = /^(0x[0-9a-fA-F_]+|[0-9][0-9_]*(\.[0-9_]+)?([eE][+-]?[0-9]+)?)/.exec(rest);
      if (m) {
        flushPlain(i);
        add(m[0], NUMBER, i);
        i += m[0].length;
        plainStart = i;
        continue;
      }
    }
    if (/[A-Za-z_]/.test(c) && (i === 0 || !/[\w$]/.test(line[i - 1] as string))) {
      const m = /^[A-Za-z_][\w]*/.exec(rest) as RegExpExecArray;
      const word = m[0];
      const keyword = family === 'sql' ? SQL_KEYWORDS.has(word.toLowerCase()) : KEYWORDS.has(word);
      if (keyword) {
        flushPlain(i);
        add(word, KEYWORD, i);
        plainStart = i + word.length;
      }
      i += word.length;
      continue;
    }
    i++;
  }
  flushPlain(line.length);
  return out;
}
