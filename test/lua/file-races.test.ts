// Check and use the same file (issue 36): a racer process swaps workspace entries for symlinks out of the workspace
// (and for FIFOs) as fast as it can while a Lua tool reads, stats and lists them. No read may ever return the
// outside file, no listing may name the outside directory's entries, and a FIFO swapped in must never block a libuv
// thread (a blocked thread would stall every later fs call of the process).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ctx, type Loaded, loadTools } from './lua-test-helpers.js';

const posix = process.platform !== 'win32';

const TOOLS = {
  'read.lua': `return { name = "read_raw", description = "d", capabilities = { "read_file", "stat", "list_dir" },
    handler = function(args)
      local data, err = panto.read_file(args.path)
      if not data then return nil, err end
      return data
    end }`,
  'list.lua': `return { name = "list", description = "d", capabilities = { "list_dir" },
    handler = function(args)
      local entries, err = panto.list_dir(args.path)
      if not entries then return nil, err end
      local out = {}
      for _, e in ipairs(entries) do out[#out + 1] = e.name end
      return table.concat(out, ",")
    end }`,
  'write.lua': `return { name = "write", description = "d", capabilities = { "write_file" },
    handler = function(args)
      local ok, err = panto.write_file(args.path, "written", { append = args.append })
      if not ok then return nil, err end
      return "ok"
    end }`,
  'stat.lua': `return { name = "stat", description = "d", capabilities = { "stat" },
    handler = function(args)
      local st, err = panto.stat(args.path)
      if not st then return nil, err end
      return st.type .. ":" .. st.size
    end }`,
};

let env: Loaded;
let outside: string;
let racer: ChildProcess | null = null;

beforeAll(async () => {
  env = await loadTools(TOOLS, { capabilities: ['read_file', 'stat', 'list_dir', 'write_file'] });
  expect(env.source.loadErrors).toEqual([]);
  outside = await mkdtemp(path.join(tmpdir(), 'panto-race-outside-'));
  await writeFile(path.join(outside, 'secret.txt'), 'OUTSIDE SECRET');
  await mkdir(path.join(outside, 'dir'));
  await writeFile(path.join(outside, 'dir', 'x.txt'), 'OUTSIDE SECRET');
  await writeFile(path.join(outside, 'dir', 'outside-only-name'), 'x');
});

afterEach(() => {
  racer?.kill('SIGKILL');
  racer = null;
});

/**
 * Start a node process running `steps` (sync fs calls, `fs`, `ws` and `outside` in scope) in a loop until killed.
 * Each step runs on its own (one failing, e.g. because a tool created a directory in between, never stops the rest).
 */
function startRacer(steps: string[]): ChildProcess {
  const body = steps.map((st) => `try { ${st} } catch {}`).join('\n');
  const script = `const fs = require('fs'); const ws = ${JSON.stringify(env.workspace)};
    const outside = ${JSON.stringify(outside)};
    for (;;) { ${body} }`;
  const p = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
  racer = p;
  return p;
}

const text = (r: Awaited<ReturnType<typeof env.source.call>>) =>
  r.ok ? (r.parts[0] as { text: string }).text : `ERR ${r.error}`;

describe.runIf(posix)('a file swapped for a symlink between check and use', () => {
  it('never returns the outside file (file swapped; parent directory swapped)', async () => {
    const ws = env.workspace;
    await mkdir(path.join(ws, 'd'));
    await writeFile(path.join(ws, 'd', 'x.txt'), 'inside');
    await writeFile(path.join(ws, 'f.txt'), 'inside');
    startRacer([
      "fs.rmSync(ws + '/tmp-link', { force: true })",
      "fs.symlinkSync(outside + '/secret.txt', ws + '/tmp-link')",
      "fs.renameSync(ws + '/tmp-link', ws + '/f.txt')",
      "fs.writeFileSync(ws + '/tmp-file', 'inside')",
      "fs.renameSync(ws + '/tmp-file', ws + '/f.txt')",
      "fs.rmSync(ws + '/tmp-dlink', { force: true })",
      "fs.symlinkSync(outside + '/dir', ws + '/tmp-dlink')",
      "fs.renameSync(ws + '/d', ws + '/d-real')",
      "fs.renameSync(ws + '/tmp-dlink', ws + '/d')",
      "fs.unlinkSync(ws + '/d')",
      "fs.renameSync(ws + '/d-real', ws + '/d')",
    ]);
    await new Promise((r) => setTimeout(r, 100));
    const seen = new Map<string, number>();
    const batch = async (name: string, p: string) => {
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => env.source.call(name, { path: p }, ctx(ws, `r${i}`))),
      );
      for (const r of results) {
        const t = text(r);
        const key = t.startsWith('ERR') ? t.replace(/^ERR [^:]*: /, 'ERR ') : t;
        seen.set(key, (seen.get(key) ?? 0) + 1);
        expect(t).not.toContain('OUTSIDE');
        expect(t).not.toContain('outside-only-name');
      }
    };
    // At least 10 rounds, and on until the race showed both sides (a loaded machine may starve the racer).
    const raced = () => (seen.get('inside') ?? 0) > 0 && [...seen.keys()].some((k) => k.startsWith('ERR'));
    for (let round = 0; round < 10 || (!raced() && round < 100); round++) {
      await batch('read_raw', 'f.txt');
      await batch('read_raw', 'd/x.txt');
      await batch('list', 'd');
      await batch('stat', 'd/x.txt');
    }
    // The race was real: some reads saw the inside file, some were refused.
    expect(seen.get('inside') ?? 0).toBeGreaterThan(0);
    expect([...seen.keys()].filter((k) => k.startsWith('ERR')).length).toBeGreaterThan(0);
  }, 120_000);

  it('never writes outside: a directory swapped for a symlink between the check and the open', async () => {
    const ws = env.workspace;
    const target = await mkdtemp(path.join(tmpdir(), 'panto-race-write-target-'));
    await mkdir(path.join(ws, 'wd'));
    startRacer([
      "fs.rmSync(ws + '/tmp-wlink', { force: true })",
      `fs.symlinkSync(${JSON.stringify(target)}, ws + '/tmp-wlink')`,
      "fs.rmSync(ws + '/wd', { recursive: true, force: true })",
      "fs.renameSync(ws + '/tmp-wlink', ws + '/wd')",
      "fs.unlinkSync(ws + '/wd')",
      "fs.mkdirSync(ws + '/wd')",
      "fs.writeFileSync(ws + '/wd/existing.txt', 'inside')",
    ]);
    await new Promise((r) => setTimeout(r, 100));
    const outcomes = new Map<string, number>();
    const raced = () => (outcomes.get('ok') ?? 0) > 0 && outcomes.size > 1;
    for (let round = 0; round < 10 || (!raced() && round < 100); round++) {
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          env.source.call(
            'write',
            { path: i % 3 === 0 ? 'wd/existing.txt' : `wd/new-${round}-${i}.txt`, append: i % 3 === 1 },
            ctx(ws, `w${i}`),
          ),
        ),
      );
      for (const r of results) {
        const key = r.ok ? 'ok' : r.error.replace(/^[^:]*: /, '');
        outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      }
    }
    racer?.kill('SIGKILL');
    // The race was real (writes succeeded and writes were refused: resolving outside, changed while opened) ...
    expect(outcomes.get('ok') ?? 0, JSON.stringify([...outcomes])).toBeGreaterThan(0);
    expect([...outcomes.keys()].length, JSON.stringify([...outcomes])).toBeGreaterThan(1);
    // ... and nothing landed in the directory the symlink pointed at: no file, no temporary file.
    expect(await readdir(target)).toEqual([]);
  }, 120_000);

  it('never blocks on a FIFO swapped in (later fs calls of the process still finish)', async () => {
    const ws = env.workspace;
    await writeFile(path.join(ws, 'p.txt'), 'inside');
    try {
      execFileSync('mkfifo', [path.join(ws, 'probe-fifo')]);
    } catch {
      return; // no mkfifo on this system
    }
    startRacer([
      "fs.rmSync(ws + '/tmp-fifo', { force: true })",
      "require('child_process').execFileSync('mkfifo', [ws + '/tmp-fifo'])",
      "fs.renameSync(ws + '/tmp-fifo', ws + '/p.txt')",
      "fs.writeFileSync(ws + '/tmp-file2', 'inside')",
      "fs.renameSync(ws + '/tmp-file2', ws + '/p.txt')",
    ]);
    await new Promise((r) => setTimeout(r, 100));
    const texts = new Set<string>();
    for (let round = 0; round < 10 || (!texts.has('inside') && round < 100); round++) {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          env.source.call('read_raw', { path: 'p.txt' }, ctx(ws, `p${i}`)),
        ),
      );
      for (const r of results) texts.add(text(r).replace(/^ERR [^:]*: /, 'ERR '));
      const probe = await Promise.race([
        readFile(path.join(ws, 'd', 'x.txt'), 'utf8').catch(() => 'gone'),
        new Promise((r) => setTimeout(() => r('BLOCKED'), 5000)),
      ]);
      expect(probe).not.toBe('BLOCKED');
    }
    // The FIFO (the probe-fifo above, and p.txt whenever the racer left one there) is refused, never opened.
    expect(text(await env.source.call('read_raw', { path: 'probe-fifo' }, ctx(ws)))).toBe(
      'ERR probe-fifo: a FIFO, not a regular file',
    );
    expect(text(await env.source.call('stat', { path: 'probe-fifo' }, ctx(ws)))).toBe('other:0');
    expect(texts.has('inside')).toBe(true);
  }, 120_000);
});
