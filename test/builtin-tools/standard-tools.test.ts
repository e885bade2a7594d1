/**
 * The standard tools shipped in the package's lua/ (ls, find, grep, write, edit, bash, beside read), each on a real
 * temporary workspace through the real Lua host, with the hostile cases: binary files, huge files, symlink loops, CRLF,
 * invalid UTF-8, catastrophic regexes, output floods. The 100k-file tree is huge-tree.slow.ts (npm run
 * test:hostile-tools, in .ci/run).
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, open, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LuaToolSource } from '../../src/lua/index.js';

let ws: string;
let tools: LuaToolSource;

/** The text of a call's result (or its error). */
async function run(name: string, args: Record<string, unknown>): Promise<{ ok: boolean; text: string }> {
  const r = await tools.run(name, args);
  if (!r.ok) return { ok: false, text: r.error };
  const text = r.parts
    .filter((p) => p.type === 'text')
    .map((p) => (p as { text: string }).text)
    .join('\n');
  return { ok: true, text };
}

beforeAll(async () => {
  ws = await mkdtemp(path.join(os.tmpdir(), 'panto-std-tools-'));
  await mkdir(path.join(ws, 'src', 'deep'), { recursive: true });
  await writeFile(path.join(ws, 'README.md'), '# Project\nhello world\n');
  await writeFile(path.join(ws, 'src', 'main.ts'), 'export function main() {\n  return 42;\n}\n');
  await writeFile(path.join(ws, 'src', 'deep', 'util.ts'), 'const hello = "x";\nexport default hello;\n');
  await writeFile(path.join(ws, '.gitignore'), 'dist/\n*.log\n!keep.log\n');
  await mkdir(path.join(ws, 'dist'));
  await writeFile(path.join(ws, 'dist', 'bundle.js'), 'hello from the bundle\n');
  await writeFile(path.join(ws, 'debug.log'), 'hello log\n');
  await writeFile(path.join(ws, 'keep.log'), 'hello kept\n');
  await writeFile(path.join(ws, '.env'), 'SECRET=hello\n');
  tools = await LuaToolSource.fromDir([], {
    includeBuiltins: true,
    workspaceRoot: ws,
    capabilities: ['read_file', 'stat', 'list_dir', 'write_file', 'make_dir', 'exec'],
    budgets: { wallClockMs: 120_000 },
  });
  expect(tools.loadErrors).toEqual([]);
});
afterAll(async () => {
  await tools?.close();
  await rm(ws, { recursive: true, force: true });
});

describe('which tools load', () => {
  it('all seven with write and exec granted; only the reading ones by default (no load error for the others)', async () => {
    expect(
      tools
        .list()
        .map((d) => d.name)
        .sort(),
    ).toEqual(['bash', 'edit', 'find', 'grep', 'ls', 'read', 'write']);
    const reading = await LuaToolSource.fromDir([], { includeBuiltins: true, workspaceRoot: ws });
    try {
      expect(
        reading
          .list()
          .map((d) => d.name)
          .sort(),
      ).toEqual(['find', 'grep', 'ls', 'read']);
      expect(reading.loadErrors).toEqual([]);
    } finally {
      await reading.close();
    }
  });
});

describe('the one truncation rule (lua/lib/truncate.lua)', () => {
  /** truncate.text through a tool that requires the library module, as a user's tool would. */
  async function truncate(text: string, maxLines: number, maxBytes: number) {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'panto-trunc-'));
    await writeFile(
      path.join(dir, 'trunc.lua'),
      `local truncate = require("truncate")
      return { name = "trunc", description = "t", parameters = { type = "object" }, handler = function(a)
        local out, info = truncate.text(a.text, { max_lines = a.max_lines, max_bytes = a.max_bytes, more = "more" })
        return { text = out, meta = info }
      end }`,
    );
    const src = await LuaToolSource.fromDir([dir], { workspaceRoot: ws });
    try {
      const r = await src.run('trunc', { text, max_lines: maxLines, max_bytes: maxBytes });
      if (!r.ok) throw new Error(r.error);
      return {
        text: (r.parts[0] as { text: string }).text,
        info: r.meta as Record<string, number | boolean>,
      };
    } finally {
      await src.close();
      await rm(dir, { recursive: true });
    }
  }

  it('keeps what fits; else the head (two thirds), a note, the tail; a long line cut at a character boundary', async () => {
    expect((await truncate('a\nb\n', 10, 100)).text).toBe('a\nb\n');
    const lines = Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join('\n');
    const cut = await truncate(`${lines}\n`, 9, 10_000);
    expect(cut.text).toBe(
      [
        'line 1',
        'line 2',
        'line 3',
        'line 4',
        'line 5',
        'line 6',
        '[... 91 lines (725 bytes) left out of 100 lines (792 bytes); more ...]',
        'line 98',
        'line 99',
        'line 100',
        '',
      ].join('\n'),
    );
    expect(cut.info).toMatchObject({ truncated: true, lines: 100, cut_lines: 91, bytes: 792 });
    const byBytes = await truncate(lines, 1000, 60);
    expect(byBytes.text.split('\n').at(-1)).toBe('line 100');
    expect(byBytes.text).toMatch(/^line 1\nline 2\nline 3\nline 4\nline 5\n\[\.\.\. 92 lines \(731 bytes\)/);
    const wide = await truncate(`${'é'.repeat(100)}\nend`, 10, 41);
    expect(wide.text.split('\n')[0]).toBe(`${'é'.repeat(11)} …`);
  });

  it('a 1 MiB flood of one-character lines is cut in one pass', async () => {
    const flood = 'y\n'.repeat(512 * 1024);
    const r = await truncate(flood, 2000, 50 * 1024);
    expect(r.info).toMatchObject({ truncated: true, lines: 512 * 1024 });
    expect(r.text.split('\n').length).toBeLessThanOrEqual(2002);
  });
});

describe('ls', () => {
  it('entries sorted, directories with /, sizes; the secrets denylist hides .env', async () => {
    const r = await run('ls', {});
    expect(r.ok).toBe(true);
    expect(r.text.split('\n')).toEqual([
      '.gitignore  (22 B)',
      'README.md  (22 B)',
      'debug.log  (10 B)',
      'dist/',
      'keep.log  (11 B)',
      'src/',
    ]);
    expect((await run('ls', { path: 'src' })).text).toBe('deep/\nmain.ts  (40 B)');
  });

  it('a symlink is marked, not followed; a missing directory is an error; a big one is limited', async () => {
    const dir = path.join(ws, 'big');
    await mkdir(dir);
    for (let i = 0; i < 700; i++) await writeFile(path.join(dir, `f${String(i).padStart(4, '0')}`), '');
    await symlink('..', path.join(dir, 'up'));
    const r = await run('ls', { path: 'big' });
    expect(r.text.split('\n')).toHaveLength(501);
    expect(r.text).toContain(
      '[201 more entries not listed; pass a larger limit, or use find with a pattern]',
    );
    expect((await run('ls', { path: 'big', limit: 1000 })).text).toContain('up@');
    expect((await run('ls', { path: 'nope' })).ok).toBe(false);
    await rm(dir, { recursive: true });
  });
});

describe('find', () => {
  it('names and paths by glob; .gitignore honoured (with a negation); all = true includes ignored files', async () => {
    expect((await run('find', { pattern: '*.ts' })).text).toBe('src/deep/util.ts\nsrc/main.ts');
    expect((await run('find', { pattern: 'src/**/*.ts' })).text).toBe('src/deep/util.ts\nsrc/main.ts');
    expect((await run('find', { pattern: '*.{md,log}' })).text).toBe('README.md\nkeep.log');
    expect((await run('find', { pattern: '*.log', all: true })).text).toBe('debug.log\nkeep.log');
    expect((await run('find', { pattern: 'bundle.js' })).text).toMatch(/^no match for bundle\.js in \./);
    expect((await run('find', { pattern: 'deep' })).text).toBe('src/deep/');
    expect((await run('find', { pattern: '*.ts', path: 'src/deep' })).text).toBe('src/deep/util.ts');
  });

  it('a nested .gitignore applies below its directory', async () => {
    await writeFile(path.join(ws, 'src', '.gitignore'), 'deep/\n');
    try {
      expect((await run('find', { pattern: '*.ts' })).text).toBe('src/main.ts');
    } finally {
      await rm(path.join(ws, 'src', '.gitignore'));
    }
  });

  it('a symlink loop is listed, never followed', async () => {
    const dir = path.join(ws, 'loop');
    await mkdir(dir);
    await symlink('.', path.join(dir, 'self'));
    await symlink('../loop', path.join(dir, 'back'));
    try {
      const r = await run('find', { pattern: '*', path: 'loop' });
      expect(r.text).toBe('loop/back\nloop/self');
    } finally {
      await rm(dir, { recursive: true });
    }
  });
});

describe('grep', () => {
  it('regex matches with path and line; .gitignore honoured; the secrets denylist never read', async () => {
    const r = await run('grep', { pattern: 'hel+o' });
    expect(r.text).toBe(
      [
        'README.md:2: hello world',
        'keep.log:1: hello kept',
        'src/deep/util.ts:1: const hello = "x";',
        'src/deep/util.ts:2: export default hello;',
      ].join('\n'),
    );
    expect(r.text).not.toContain('SECRET');
    expect((await run('grep', { pattern: 'HELLO', ignore_case: true, glob: '*.md' })).text).toBe(
      'README.md:2: hello world',
    );
    expect((await run('grep', { pattern: 'return \\d+;' })).text).toBe('src/main.ts:2:   return 42;');
    expect((await run('grep', { pattern: '(?i)# PROJECT' })).text).toBe('README.md:1: # Project');
    expect((await run('grep', { pattern: '(', literal: true })).text).toBe(
      'src/main.ts:1: export function main() {',
    );
    expect((await run('grep', { pattern: 'hello', path: 'README.md' })).text).toBe(
      'README.md:2: hello world',
    );
  });

  it('context lines, with -- between groups', async () => {
    await writeFile(
      path.join(ws, 'ctx.txt'),
      ['a', 'MATCH 1', 'b', 'c', 'd', 'e', 'MATCH 2', 'f'].join('\n'),
    );
    try {
      const r = await run('grep', { pattern: 'MATCH', path: 'ctx.txt', context: 1 });
      expect(r.text).toBe(
        [
          'ctx.txt-1- a',
          'ctx.txt:2: MATCH 1',
          'ctx.txt-3- b',
          '--',
          'ctx.txt-6- e',
          'ctx.txt:7: MATCH 2',
          'ctx.txt-8- f',
        ].join('\n'),
      );
    } finally {
      await rm(path.join(ws, 'ctx.txt'));
    }
  });

  it('binary files and files over 16 MiB are skipped and counted; CRLF and invalid UTF-8 lines are searched', async () => {
    const dir = path.join(ws, 'odd');
    await mkdir(dir);
    await writeFile(path.join(dir, 'bin.dat'), Buffer.concat([Buffer.from('needle\0'), Buffer.alloc(100)]));
    const big = await open(path.join(dir, 'sparse.txt'), 'w');
    await big.truncate(20 * 1024 * 1024);
    await big.close();
    await writeFile(path.join(dir, 'crlf.txt'), 'one\r\nneedle here\r\nthree\r\n');
    await writeFile(
      path.join(dir, 'latin1.txt'),
      Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0x0a]),
    );
    try {
      const r = await run('grep', { pattern: 'needle', path: 'odd' });
      expect(r.text).toContain('odd/crlf.txt:2: needle here\n');
      expect(r.text).not.toContain('\r');
      expect(r.text).toMatch(/odd\/latin1\.txt:1: caf.+ needle/);
      expect(r.text).toContain('[1 binary files skipped]');
      expect(r.text).toContain('[1 files over 16 MiB skipped: read them in parts with read]');
    } finally {
      await rm(dir, { recursive: true });
    }
  });

  it('a catastrophic regex on a long line is reported, not run until the budget; a bad regex names its problem', async () => {
    await writeFile(path.join(ws, 'redos.txt'), `${'a'.repeat(5000)}b\n`);
    try {
      const r = await run('grep', { pattern: '(a+)+$', path: 'redos.txt' });
      expect(r.ok).toBe(true);
      expect(r.text).toContain('lines not checked: the pattern backtracks too much on this line');
    } finally {
      await rm(path.join(ws, 'redos.txt'));
    }
    const bad = await run('grep', { pattern: 'a{3,1}' });
    expect(bad).toEqual({
      ok: false,
      text: 'grep: invalid regular expression: a {n,m} quantifier with m < n at position 7 of the pattern',
    });
  });

  it('a pattern that backtracks on many lines stops the search after 3 with a note; a long line is not "too complex"', async () => {
    await writeFile(path.join(ws, 'redos-many.txt'), `${'a'.repeat(40)}b\n`.repeat(50));
    await writeFile(path.join(ws, 'long-line.txt'), `needle${'x'.repeat(200_000)}\n`);
    try {
      const r = await run('grep', { pattern: '(a+)+$', path: 'redos-many.txt' });
      expect(r.ok).toBe(true);
      expect(r.text).toContain(
        '[the search stopped: the pattern backtracks too much on this line on 3 lines; simplify the pattern (or use literal)]',
      );
      const long = await run('grep', { pattern: 'needle\\d', path: 'long-line.txt' });
      expect(long.text).toBe('no match for needle\\d in long-line.txt (1 files searched)');
    } finally {
      await rm(path.join(ws, 'redos-many.txt'));
      await rm(path.join(ws, 'long-line.txt'));
    }
  });

  it('a minified line is cut in the output', async () => {
    await writeFile(path.join(ws, 'min.js'), `var x="${'z'.repeat(3000)}needle";\n`);
    try {
      const r = await run('grep', { pattern: 'needle', path: 'min.js' });
      expect(r.text).toMatch(/^min\.js:1: var x="z+ … \[2515 more bytes\]$/);
    } finally {
      await rm(path.join(ws, 'min.js'));
    }
  });
});

describe('symbolic links that leave the workspace', () => {
  it('read, grep, edit and write refuse them; ls and find list them without following', async () => {
    const outside = await mkdtemp(path.join(os.tmpdir(), 'panto-std-outside-'));
    await writeFile(path.join(outside, 'secret.txt'), 'needle outside\n');
    const dir = path.join(ws, 'links');
    await mkdir(dir);
    await symlink(outside, path.join(dir, 'out-dir'));
    await symlink(path.join(outside, 'secret.txt'), path.join(dir, 'out-file'));
    try {
      for (const [name, args] of [
        ['read', { path: 'links/out-file' }],
        ['grep', { pattern: 'needle', path: 'links/out-file' }],
        ['grep', { pattern: 'needle', path: 'links/out-dir' }],
        ['edit', { path: 'links/out-file', old_text: 'needle', new_text: 'changed' }],
        ['write', { path: 'links/out-file', content: 'replaced' }],
        ['write', { path: 'links/out-dir/new.txt', content: 'x' }],
        ['ls', { path: 'links/out-dir' }],
        ['find', { pattern: '*', path: 'links/out-dir' }],
      ] as const) {
        const r = await run(name, args);
        expect([name, r.ok, r.text]).toEqual([name, false, expect.stringContaining('outside the workspace')]);
      }
      const grepped = await run('grep', { pattern: 'needle', path: 'links' });
      expect(grepped.text).toMatch(/^no match for needle in links/);
      expect((await run('find', { pattern: '*', path: 'links' })).text).toBe('links/out-dir\nlinks/out-file');
      expect((await run('ls', { path: 'links' })).text).toBe('out-dir@\nout-file@');
      expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('needle outside\n');
      expect(execFileSync('ls', [outside], { encoding: 'utf8' })).toBe('secret.txt\n');
    } finally {
      await rm(dir, { recursive: true });
      await rm(outside, { recursive: true });
    }
  });
});

describe('write', () => {
  it('creates a file and its directories, replaces one, refuses a secret and the outside', async () => {
    expect((await run('write', { path: 'new/dir/a.txt', content: 'one\ntwo\n' })).text).toBe(
      'Wrote 8 bytes (2 lines) to new/dir/a.txt (new file).',
    );
    expect(await readFile(path.join(ws, 'new', 'dir', 'a.txt'), 'utf8')).toBe('one\ntwo\n');
    expect((await run('write', { path: 'new/dir/a.txt', content: 'x' })).text).toBe(
      'Wrote 1 bytes (1 lines) to new/dir/a.txt (replaced its 8 bytes).',
    );
    expect((await run('write', { path: '.env', content: 'x' })).ok).toBe(false);
    expect(await readFile(path.join(ws, '.env'), 'utf8')).toBe('SECRET=hello\n');
    const outside = await run('write', { path: '../escape.txt', content: 'x' });
    expect(outside).toMatchObject({ ok: false, text: expect.stringContaining('outside the workspace') });
    expect((await run('write', { path: 'src', content: 'x' })).text).toBe('src: is a directory');
    await rm(path.join(ws, 'new'), { recursive: true });
  });
});

describe('edit', () => {
  const file = () => path.join(ws, 'e.txt');

  it('one edit, several edits at once; the result shows the change', async () => {
    await writeFile(file(), 'alpha\nbeta\ngamma\ndelta\n');
    const one = await run('edit', { path: 'e.txt', old_text: 'beta', new_text: 'BETA\nbeta2' });
    expect(one.text).toBe('Edited e.txt: 1 replacement (+2 -1 lines)\n@@ line 2 @@\n-beta\n+BETA\n+beta2');
    const two = await run('edit', {
      path: 'e.txt',
      edits: [
        { old_text: 'alpha', new_text: 'A' },
        { old_text: 'delta\n', new_text: 'D\n' },
      ],
    });
    expect(two.ok).toBe(true);
    expect(await readFile(file(), 'utf8')).toBe('A\nBETA\nbeta2\ngamma\nD\n');
  });

  it('refuses a missing text (pointing at the closest line), an ambiguous one (its lines), overlaps — and writes nothing', async () => {
    await writeFile(file(), 'x = 1\n  if (ready) {\nx = 1\n');
    const missing = await run('edit', { path: 'e.txt', old_text: 'if (ready)  {', new_text: 'y' });
    expect(missing.ok).toBe(false);
    expect(missing.text).toContain(
      'old_text was not found in e.txt; a line like its first line is at line 2, with other spacing: "  if (ready) {"',
    );
    const twice = await run('edit', { path: 'e.txt', old_text: 'x = 1', new_text: 'x = 2' });
    expect(twice.text).toBe(
      'edit: old_text appears 2 times in e.txt (lines 1, 3); nothing was written. Include more surrounding lines to make it unique, or set replace_all.',
    );
    const overlap = await run('edit', {
      path: 'e.txt',
      edits: [
        { old_text: 'x = 1\n  if', new_text: 'a' },
        { old_text: 'if (ready)', new_text: 'b' },
      ],
    });
    expect(overlap.text).toBe(
      'edits 1 and 2 overlap in e.txt; nothing was written. Merge them into one edit.',
    );
    const partly = await run('edit', {
      path: 'e.txt',
      edits: [
        { old_text: '  if (ready) {', new_text: 'changed' },
        { old_text: 'not there', new_text: 'z' },
      ],
    });
    expect(partly.text).toContain('edit 2: old_text was not found');
    expect(await readFile(file(), 'utf8')).toBe('x = 1\n  if (ready) {\nx = 1\n');
    expect(
      (await run('edit', { path: 'e.txt', old_text: 'x = 1', new_text: 'x = 2', replace_all: true })).ok,
    ).toBe(true);
    expect(await readFile(file(), 'utf8')).toBe('x = 2\n  if (ready) {\nx = 2\n');
  });

  it('keeps CRLF line endings; edits around invalid UTF-8 byte for byte; refuses a huge file and a binary one', async () => {
    await writeFile(file(), 'one\r\ntwo\r\nthree\r\n');
    expect((await run('edit', { path: 'e.txt', old_text: 'two\nthree', new_text: '2\n3' })).text).toContain(
      'CRLF line endings kept',
    );
    expect(await readFile(file(), 'utf8')).toBe('one\r\n2\r\n3\r\n');
    const latin1 = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a, 0x6f, 0x6c, 0x64, 0x0a]);
    await writeFile(file(), latin1);
    expect((await run('edit', { path: 'e.txt', old_text: 'old', new_text: 'new' })).ok).toBe(true);
    expect(await readFile(file())).toEqual(
      Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a, 0x6e, 0x65, 0x77, 0x0a]),
    );
    const big = await open(file(), 'w');
    await big.truncate(20 * 1024 * 1024);
    await big.close();
    expect((await run('edit', { path: 'e.txt', old_text: 'a', new_text: 'c' })).text).toBe(
      "e.txt: 20971520 bytes, over edit's 16 MiB limit; use bash (sed) or write for a file this big",
    );
    await writeFile(file(), Buffer.from('a\0b'));
    expect((await run('edit', { path: 'e.txt', old_text: 'a', new_text: 'c' })).text).toBe(
      'e.txt: a binary file; edit changes text files',
    );
    await rm(file());
  });
});

describe('bash', () => {
  it('the exit code and the output; a failing command is an error result with its output', async () => {
    expect((await run('bash', { command: 'echo out; echo err >&2' })).text).toBe(
      '[exit code 0]\n[stdout]\nout\n\n[stderr]\nerr\n',
    );
    const failed = await run('bash', { command: 'ls no-such-file' });
    expect(failed.ok).toBe(false);
    expect(failed.text).toMatch(/^\[exit code 2\]\n\[stderr\]\nls: cannot access 'no-such-file'/);
    expect((await run('bash', { command: 'pwd', cwd: 'src' })).text).toContain(
      `${path.join(await realWs(), 'src')}\n`,
    );
  });

  it('a flood of output keeps its head and tail with one note; a command past its timeout is killed', {
    timeout: 60_000,
  }, async () => {
    const flood = await run('bash', { command: 'seq 1 200000' });
    expect(flood.ok).toBe(true);
    expect(flood.text).toMatch(/^\[exit code 0\]\n\[stdout\]\n1\n2\n3\n/);
    expect(flood.text).toMatch(
      /\[\.\.\. \d+ lines \(\d+ bytes\) left out of \d+ lines \(\d+ bytes\); redirect the output to a file and read or grep it \.\.\.\]/,
    );
    expect(flood.text).toMatch(/200000\n/);
    expect(flood.text.length).toBeLessThan(40 * 1024);
    // An endless flood, and a command that ignores SIGTERM: both end at the timeout with bounded output.
    const endless = await run('bash', { command: 'yes', timeout: 2 });
    expect(endless).toMatchObject({
      ok: false,
      text: expect.stringContaining('[killed after the 2 s timeout]'),
    });
    expect(endless.text.length).toBeLessThan(40 * 1024);
    const stubborn = await run('bash', { command: 'trap "" TERM; sleep 30', timeout: 1 });
    expect(stubborn.text).toContain('[killed after the 1 s timeout]');
    const slow = await run('bash', { command: 'sleep 30', timeout: 1 });
    expect(slow).toMatchObject({
      ok: false,
      text: expect.stringContaining('[killed after the 1 s timeout]'),
    });
  });
});

async function realWs(): Promise<string> {
  return execFileSync('realpath', [ws], { encoding: 'utf8' }).trim();
}
