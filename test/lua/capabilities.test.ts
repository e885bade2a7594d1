// The standard capabilities beyond reading: write_file / make_dir, exec and fetch — each off unless granted, each
// contained (workspace, denylist, caps, process group, address rule). Quick cases here; the slow and process-heavy
// hostile ones (fork bomb, output flood, endless bodies at scale) are in scripts/test-hostile-lua.mjs.

import { readFileSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPantoError } from '../../src/errors.js';
import { LuaToolSource, type LuaToolSourceOptions } from '../../src/lua/index.js';
import { ctx } from './lua-test-helpers.js';

const posix = process.platform !== 'win32';

/** True while `pid` runs (a zombie waiting for its reaper does not count). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}
const NODE = process.execPath;

/** A tool file declaring `caps` whose handler is `body`. */
const luaTool = (name: string, caps: string[], body: string) =>
  `return { name = ${JSON.stringify(name)}, description = "d", capabilities = { ${caps
    .map((c) => JSON.stringify(c))
    .join(', ')} }, handler = function(args, ctx)\n${body}\nend }\n`;

const TOOLS: Record<string, string> = {
  'write.lua': luaTool(
    'write',
    ['write_file'],
    `local ok, err = panto.write_file(args.path, args.data, { append = args.append })
     if not ok then return nil, err end
     return tostring(ok)`,
  ),
  'mkdir.lua': luaTool(
    'mkdir',
    ['make_dir'],
    'local ok, err = panto.make_dir(args.path); return ok and "true" or err',
  ),
  'exec.lua': luaTool(
    'exec',
    ['exec'],
    `local r, err = panto.exec(args.argv, { cwd = args.cwd, stdin = args.stdin, env = args.env,
                                        timeout_ms = args.timeout_ms, shell = args.shell })
     if not r then return nil, err end
     return { text = "ok", meta = { code = r.code, signal = r.signal, stdout = r.stdout, stderr = r.stderr,
                                    truncated = r.truncated, timed_out = r.timed_out } }`,
  ),
  'fetch.lua': luaTool(
    'fetch',
    ['fetch'],
    `local r, err = panto.fetch(args.url, { method = args.method, headers = args.headers, body = args.body,
                                          timeout_ms = args.timeout_ms, max_bytes = args.max_bytes })
     if not r then return nil, err end
     return { text = "ok", meta = { status = r.status, body = r.body, url = r.url, truncated = r.truncated,
                                    type = r.headers["content-type"], echo = r.headers["x-echo"] } }`,
  ),
  'bad_exec.lua': luaTool(
    'bad_exec',
    ['exec'],
    `local a = { pcall(panto.exec, "ls -l") }
     local b = { pcall(panto.exec, {}) }
     local c = { pcall(panto.exec, { "x" }, { shel = true }) }
     return table.concat({ a[2], b[2], c[2] }, " | ")`,
  ),
};

let dir: string;
let outside: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'panto-lua-caps-'));
  outside = await mkdtemp(path.join(tmpdir(), 'panto-lua-caps-outside-'));
  for (const [name, src] of Object.entries(TOOLS)) await writeFile(path.join(dir, name), src);
});

async function load(options: Omit<LuaToolSourceOptions, 'workspaceRoot'> = {}) {
  const ws = await mkdtemp(path.join(tmpdir(), 'panto-lua-caps-ws-'));
  const source = await LuaToolSource.fromDir(dir, {
    capabilities: ['write_file', 'make_dir', 'exec', 'fetch'],
    ...options,
    workspaceRoot: ws,
  });
  expect(source.loadErrors).toEqual([]);
  const run = (name: string, args: Record<string, unknown> = {}, signal?: AbortSignal) =>
    source.call(name, args, ctx(ws, 'c1', signal));
  return { source, ws, run };
}

const textOf = (r: Awaited<ReturnType<LuaToolSource['call']>>) =>
  r.ok ? (r.parts[0] as { text: string }).text : `ERR ${r.error}`;

describe('capabilities are off unless granted', () => {
  it('a tool declaring write_file, exec or fetch does not load by default', async () => {
    const source = await LuaToolSource.fromDir(dir);
    expect(source.list()).toEqual([]);
    expect(source.loadErrors.map((e) => e.message)).toEqual([
      "bad_exec.lua: tool 'bad_exec': 'capabilities': the host does not grant 'exec' (granted: read_file, stat, list_dir)",
      "exec.lua: tool 'exec': 'capabilities': the host does not grant 'exec' (granted: read_file, stat, list_dir)",
      "fetch.lua: tool 'fetch': 'capabilities': the host does not grant 'fetch' (granted: read_file, stat, list_dir)",
      "mkdir.lua: tool 'mkdir': 'capabilities': the host does not grant 'make_dir' (granted: read_file, stat, list_dir)",
      "write.lua: tool 'write': 'capabilities': the host does not grant 'write_file' (granted: read_file, stat, list_dir)",
    ]);
  });

  it('checks the exec and fetch options', async () => {
    const bad = async (o: LuaToolSourceOptions) =>
      LuaToolSource.fromDir(dir, o).then(
        () => 'loaded',
        (e) => (isPantoError(e, 'ERR_INVALID_ARGUMENT') ? (e as Error).message : String(e)),
      );
    expect(await bad({ exec: { timeoutMs: -1 } })).toBe('exec.timeoutMs must be a positive number, got -1');
    expect(await bad({ fetch: { privateRanges: ['10.0.0.0/99'] } })).toBe(
      "fetch.privateRanges: '10.0.0.0/99' is not an IP address or CIDR range",
    );
  });
});

describe('approval: which Lua tools need it', () => {
  it("by default ('auto'): tools declaring write_file, make_dir, exec or fetch, and tools saying needs_approval = true", async () => {
    const d = await mkdtemp(path.join(tmpdir(), 'panto-lua-approval-'));
    await writeFile(path.join(d, 'a.lua'), luaTool('reader', ['read_file'], 'return "x"'));
    await writeFile(
      path.join(d, 'b.lua'),
      luaTool('runner', ['exec', 'read_file'], 'return "x"').replace(
        'description = "d",',
        'description = "d", needs_approval = false,',
      ),
    );
    await writeFile(
      path.join(d, 'c.lua'),
      luaTool('careful', [], 'return "x"').replace(
        'description = "d",',
        'description = "d", needs_approval = true,',
      ),
    );
    await writeFile(
      path.join(d, 'd.lua'),
      luaTool('bad', [], 'return "x"').replace(
        'description = "d",',
        'description = "d", needs_approval = "yes",',
      ),
    );
    const grant = { capabilities: ['read_file', 'exec'] as const };
    const decls = async (approval?: 'auto' | 'declared' | 'none') => {
      const src = await LuaToolSource.fromDir(d, { ...grant, ...(approval ? { approval } : {}) });
      return Object.fromEntries(
        src.list().map((t) => [t.name, [t.needsApproval ?? false, t.capabilities ?? []]]),
      );
    };
    expect(await decls()).toEqual({
      careful: [true, []],
      reader: [false, []],
      runner: [true, ['exec']],
    });
    expect(await decls('declared')).toEqual({
      careful: [true, []],
      reader: [false, []],
      runner: [false, ['exec']],
    });
    expect(await decls('none')).toEqual({
      careful: [false, []],
      reader: [false, []],
      runner: [false, ['exec']],
    });
    const src = await LuaToolSource.fromDir(d, grant);
    expect(src.loadErrors.map((e) => e.message)).toEqual([
      "d.lua: tool 'bad': 'needs_approval' must be true or false, got string",
    ]);
  });
});

describe('write_file and make_dir', () => {
  let t: Awaited<ReturnType<typeof load>>;
  beforeAll(async () => {
    t = await load({ budgets: { maxWriteBytes: 1000 } });
    await symlink(outside, path.join(t.ws, 'out'));
    await mkdir(path.join(t.ws, 'sub'));
    await writeFile(path.join(t.ws, 'sub', 'real.txt'), 'real');
    await symlink(path.join(t.ws, 'sub', 'real.txt'), path.join(t.ws, 'inside-link.txt'));
    await symlink(path.join(outside, 'gone.txt'), path.join(t.ws, 'dangling.txt'));
    await symlink(path.join(outside, 'victim.txt'), path.join(t.ws, 'outside-link.txt'));
    await writeFile(path.join(outside, 'victim.txt'), 'untouched');
  });

  it('writes a new file, creating missing parent directories', async () => {
    expect(textOf(await t.run('write', { path: 'a/b/c.txt', data: 'hello' }))).toBe('true');
    expect(await readFile(path.join(t.ws, 'a', 'b', 'c.txt'), 'utf8')).toBe('hello');
  });

  it('replaces a file atomically (a new inode, no temporary file left), keeping its permission bits', async () => {
    const file = path.join(t.ws, 'mode.txt');
    await writeFile(file, 'old', { mode: 0o640 });
    const before = await stat(file);
    expect(textOf(await t.run('write', { path: 'mode.txt', data: 'new contents' }))).toBe('true');
    const after = await stat(file);
    expect(await readFile(file, 'utf8')).toBe('new contents');
    expect(after.ino).not.toBe(before.ino);
    if (posix) expect(after.mode & 0o777).toBe(0o640);
    expect((await readdir(t.ws)).filter((n) => n.includes('panto-tmp'))).toEqual([]);
  });

  it('appends', async () => {
    await t.run('write', { path: 'log.txt', data: 'a' });
    await t.run('write', { path: 'log.txt', data: 'b', append: true });
    expect(textOf(await t.run('write', { path: 'new-append.txt', data: 'c', append: true }))).toBe('true');
    expect(await readFile(path.join(t.ws, 'log.txt'), 'utf8')).toBe('ab');
    expect(await readFile(path.join(t.ws, 'new-append.txt'), 'utf8')).toBe('c');
  });

  it('writes through a symlink that stays inside to its target', async () => {
    expect(textOf(await t.run('write', { path: 'inside-link.txt', data: 'via link' }))).toBe('true');
    expect(await readFile(path.join(t.ws, 'sub', 'real.txt'), 'utf8')).toBe('via link');
    expect((await lstat(path.join(t.ws, 'inside-link.txt'))).isSymbolicLink()).toBe(true);
  });

  it('refuses outside the workspace, through symlinks leaving it, denylisted files, over the cap', async () => {
    const cases: Array<[string, string]> = [
      ['../escape.txt', 'ERR ../escape.txt: outside the workspace'],
      [path.join(outside, 'abs.txt'), `ERR ${path.join(outside, 'abs.txt')}: outside the workspace`],
      ['out/x.txt', 'ERR out/x.txt: resolves outside the workspace (through a symbolic link)'],
      ['outside-link.txt', 'ERR outside-link.txt: resolves outside the workspace (through a symbolic link)'],
      ['dangling.txt', 'ERR dangling.txt: a symbolic link to a missing file; not followed'],
      ['.env', 'ERR .env: access denied (matches the secrets denylist: .env)'],
      ['.git/config', 'ERR .git/config: access denied (matches the secrets denylist: .git/config)'],
      ['sub', 'ERR sub: is a directory'],
      ['.', 'ERR .: is the workspace root'],
    ];
    for (const [p, want] of cases)
      expect([p, textOf(await t.run('write', { path: p, data: 'x' }))]).toEqual([p, want]);
    expect(textOf(await t.run('write', { path: 'big.txt', data: 'x'.repeat(1001) }))).toBe(
      'ERR big.txt: 1001 bytes, over the write cap of 1000 bytes',
    );
    expect(await readFile(path.join(outside, 'victim.txt'), 'utf8')).toBe('untouched');
    expect(await readdir(outside)).toEqual(['victim.txt']);
  });

  it('make_dir creates nested directories, accepts existing ones, refuses outside and denylisted', async () => {
    expect(textOf(await t.run('mkdir', { path: 'x/y/z' }))).toBe('true');
    expect((await stat(path.join(t.ws, 'x', 'y', 'z'))).isDirectory()).toBe(true);
    expect(textOf(await t.run('mkdir', { path: 'x/y' }))).toBe('true');
    expect(textOf(await t.run('mkdir', { path: 'out/new' }))).toBe(
      'out/new: resolves outside the workspace (through a symbolic link)',
    );
    expect(textOf(await t.run('mkdir', { path: '../up' }))).toBe('../up: outside the workspace');
    expect(textOf(await t.run('mkdir', { path: 'home/.ssh' }))).toBe(
      'home/.ssh: access denied (matches the secrets denylist: .ssh/)',
    );
    expect(await readdir(outside)).toEqual(['victim.txt']);
  });
});

describe('exec', () => {
  let t: Awaited<ReturnType<typeof load>>;
  beforeAll(async () => {
    process.env.PANTO_TEST_SECRET = 'do-not-leak';
    t = await load({ exec: { maxOutputBytes: 1000, env: { FIXED: 'yes' } } });
    await mkdir(path.join(t.ws, 'sub'));
    await mkdir(path.join(t.ws, '.ssh'));
  });
  afterAll(() => {
    delete process.env.PANTO_TEST_SECRET;
  });
  const meta = async (args: Record<string, unknown>) => {
    const r = await t.run('exec', args);
    if (!r.ok) return { error: r.error };
    return r.meta as Record<string, unknown>;
  };
  const js = (code: string) => [NODE, '-e', code];

  it('runs argv (no shell: metacharacters are plain text) and returns code, stdout, stderr', async () => {
    expect(
      await meta({
        argv: js('process.stdout.write(process.argv[1]); console.error("err"); process.exit(3)').concat([
          'a; rm -rf x $(id)',
        ]),
      }),
    ).toEqual({ code: 3, stdout: 'a; rm -rf x $(id)', stderr: 'err\n', truncated: false, timed_out: false });
  });

  it('passes stdin, runs in a cwd inside the workspace, refuses one outside or denylisted', async () => {
    expect(await meta({ argv: js('process.stdin.pipe(process.stdout)'), stdin: 'piped in' })).toMatchObject({
      code: 0,
      stdout: 'piped in',
    });
    expect(await meta({ argv: js('process.stdout.write(process.cwd())'), cwd: 'sub' })).toMatchObject({
      stdout: path.join(await import('node:fs/promises').then((f) => f.realpath(t.ws)), 'sub'),
    });
    expect(await meta({ argv: js('1'), cwd: '..' })).toEqual({
      error: 'exec: cwd ..: outside the workspace',
    });
    expect(await meta({ argv: js('1'), cwd: '.ssh' })).toEqual({
      error: 'exec: cwd .ssh: access denied (matches the secrets denylist: .ssh/)',
    });
  });

  it('gives a minimal environment: the host list, fixed variables and the tool env, nothing else', async () => {
    const r = await meta({
      argv: js('process.stdout.write(JSON.stringify(process.env))'),
      env: { TOOL: '1' },
    });
    const env = JSON.parse(r.stdout as string) as Record<string, string>;
    expect(env.PANTO_TEST_SECRET).toBeUndefined();
    expect(env.FIXED).toBe('yes');
    expect(env.TOOL).toBe('1');
    if (process.env.PATH) expect(env.PATH ?? env.Path).toBeDefined();
  });

  it('caps output keeping head and tail, with a note', async () => {
    const r = await meta({
      argv: js('process.stdout.write("H".repeat(400) + "m".repeat(100000) + "T".repeat(400))'),
    });
    const out = r.stdout as string;
    expect(r.truncated).toBe(true);
    expect(out.startsWith('H'.repeat(400))).toBe(true);
    expect(out.endsWith('T'.repeat(400))).toBe(true);
    expect(out).toContain('[... 99800 bytes left out of 100800 (the middle of the output) ...]');
  });

  it('kills a command past its timeout and says so', async () => {
    const t0 = performance.now();
    const r = await meta({ argv: js('setTimeout(() => {}, 60000)'), timeout_ms: 300 });
    expect(r).toMatchObject({ timed_out: true });
    // POSIX: killed by a signal (no exit code); Windows: taskkill /F ends it with an exit code.
    if (posix) expect(r).toMatchObject({ signal: 'SIGKILL' });
    if (posix) expect(r.code).toBeUndefined();
    expect(performance.now() - t0).toBeLessThan(10_000);
  });

  it('reports a command that cannot start, and wrong calls', async () => {
    expect(await meta({ argv: ['no-such-command-xyz'] })).toEqual({
      error: 'exec: no-such-command-xyz: command not found (or the working directory is gone)',
    });
    expect(textOf(await t.run('bad_exec'))).toBe(
      'panto.exec: argv must be a non-empty list of strings, e.g. {"git", "status"} (a command line needs {shell = true}) | ' +
        'panto.exec: argv must be a non-empty list of strings, e.g. {"git", "status"} (a command line needs {shell = true}) | ' +
        "panto.exec: unknown option 'shel' (known: cwd, stdin, env, timeout_ms, shell)",
    );
  });

  it.runIf(posix)('runs a command line when the tool asks for a shell', async () => {
    expect(await meta({ argv: 'echo $((6 * 7)) | tr 4 X', shell: true })).toMatchObject({
      code: 0,
      stdout: 'X2\n',
    });
  });

  it.runIf(posix)(
    'ends what a command left running when it exits (a grandchild holding the pipe)',
    async () => {
      const t0 = performance.now();
      const r = await meta({ argv: ['sh', '-c', 'sleep 30 & echo $!'] });
      expect(performance.now() - t0).toBeLessThan(5000);
      const pid = Number((r.stdout as string).trim());
      await new Promise((res) => setTimeout(res, 200));
      expect(running(pid)).toBe(false);
    },
  );

  it.runIf(posix)('an abort kills the whole process group', async () => {
    const marker = path.join(t.ws, 'survivor.txt');
    const ac = new AbortController();
    const p = t.run(
      'exec',
      { argv: ['sh', '-c', `(sleep 1; echo alive > ${marker}) & sleep 30`] },
      ac.signal,
    );
    await new Promise((res) => setTimeout(res, 300));
    ac.abort();
    expect(await p).toEqual({ ok: false, error: 'aborted' });
    await new Promise((res) => setTimeout(res, 1500));
    await expect(stat(marker)).rejects.toThrow();
  });
});

describe('fetch', () => {
  let server: Server;
  let base: string;
  let port: number;
  beforeAll(async () => {
    server = createServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://x');
      if (u.pathname === '/hello') {
        res.setHeader('content-type', 'text/plain');
        res.setHeader('x-echo', `${req.method} ${req.headers['x-in'] ?? '-'}`);
        let body = '';
        req.on('data', (d) => {
          body += d;
        });
        req.on('end', () => res.end(`hello ${body}`));
      } else if (u.pathname === '/redirect') {
        res.writeHead(302, { location: u.searchParams.get('to') ?? '/hello' }).end();
      } else if (u.pathname === '/see-other') {
        res.writeHead(303, { location: '/hello' }).end();
      } else if (u.pathname === '/loop') {
        res.writeHead(302, { location: '/loop' }).end();
      } else if (u.pathname === '/endless') {
        res.writeHead(200);
        const chunk = Buffer.alloc(64 * 1024, 97);
        const pump = () => {
          while (res.write(chunk)) {}
        };
        res.on('drain', pump);
        pump();
      } else if (u.pathname === '/trickle') {
        res.writeHead(200);
        const timer = setInterval(() => res.write('.'), 100);
        res.on('close', () => clearInterval(timer));
      } else res.writeHead(404).end('no');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it('refuses loopback, private, link-local and metadata addresses by default, and other schemes', async () => {
    const t = await load();
    const refused = async (url: string) => textOf(await t.run('fetch', { url }));
    expect(await refused(`${base}/hello`)).toBe(
      'ERR fetch: 127.0.0.1 resolves to 127.0.0.1, a loopback, private, link-local or reserved address (refused; the host can allow it)',
    );
    expect(await refused(`http://localhost:${port}/hello`)).toMatch(
      /^ERR fetch: localhost resolves to (127\.0\.0\.1|::1), a loopback/,
    );
    expect(await refused(`http://[::1]:${port}/`)).toMatch(/^ERR fetch: \[::1\] resolves to ::1/);
    expect(await refused('http://169.254.169.254/latest/meta-data/')).toMatch(
      /169\.254\.169\.254, a loopback/,
    );
    expect(await refused('http://[fd00:ec2::254]/')).toMatch(/a loopback, private/);
    expect(await refused('http://10.1.2.3/')).toMatch(/a loopback, private/);
    expect(await refused(`http://2130706433:${port}/`)).toMatch(/resolves to 127\.0\.0\.1/);
    expect(await refused(`http://0x7f.1:${port}/`)).toMatch(/resolves to 127\.0\.0\.1/);
    expect(await refused(`http://[::ffff:127.0.0.1]:${port}/`)).toMatch(/a loopback, private/);
    expect(await refused('http://0.0.0.0/')).toMatch(/a loopback, private/);
    expect(await refused('file:///etc/passwd')).toBe(
      'ERR fetch: only http and https URLs are fetched, not file',
    );
    expect(await refused('not a url')).toBe('ERR fetch: not a valid URL: not a url');
  });

  it('fetches from a host the host allows: status, headers, body; a POST with headers', async () => {
    const t = await load({ fetch: { privateHosts: ['127.0.0.1'] } });
    const r = await t.run('fetch', { url: `${base}/hello` });
    expect(r).toMatchObject({
      ok: true,
      meta: { status: 200, body: 'hello ', type: 'text/plain', echo: 'GET -', truncated: false },
    });
    const post = await t.run('fetch', {
      url: `${base}/hello`,
      method: 'POST',
      body: 'data',
      headers: { 'x-in': 'v' },
    });
    expect(post).toMatchObject({ ok: true, meta: { body: 'hello data', echo: 'POST v' } });
  });

  it('judges every redirect: a hop to a private address or an unlisted host is refused; at most 5', async () => {
    const t = await load({ fetch: { privateHosts: ['127.0.0.1'] } });
    expect(
      textOf(await t.run('fetch', { url: `${base}/redirect?to=http://localhost:${port}/hello` })),
    ).toMatch(/^ERR fetch: localhost resolves to/);
    expect(textOf(await t.run('fetch', { url: `${base}/redirect?to=http://169.254.169.254/` }))).toMatch(
      /169\.254\.169\.254, a loopback/,
    );
    expect(textOf(await t.run('fetch', { url: `${base}/redirect?to=file:///etc/passwd` }))).toBe(
      'ERR fetch: only http and https URLs are fetched, not file',
    );
    expect(await t.run('fetch', { url: `${base}/redirect` })).toMatchObject({
      ok: true,
      meta: { status: 200, url: `${base}/hello` },
    });
    expect(await t.run('fetch', { url: `${base}/see-other`, method: 'POST', body: 'x' })).toMatchObject({
      ok: true,
      meta: { echo: 'GET -', body: 'hello ' },
    });
    expect(textOf(await t.run('fetch', { url: `${base}/loop` }))).toBe('ERR fetch: more than 5 redirects');
  });

  it('cuts an endless body at max_bytes and ends a trickling one at the deadline', async () => {
    const t = await load({ fetch: { privateRanges: ['127.0.0.0/8'] } });
    expect(await t.run('fetch', { url: `${base}/endless`, max_bytes: 100_000 })).toMatchObject({
      ok: true,
      meta: { status: 200, truncated: true, body: 'a'.repeat(100_000) },
    });
    const t0 = performance.now();
    expect(textOf(await t.run('fetch', { url: `${base}/trickle`, timeout_ms: 500 }))).toBe(
      'ERR fetch: timed out after 500 ms',
    );
    expect(performance.now() - t0).toBeLessThan(5000);
  });

  it('allowHosts limits the hosts at all', async () => {
    const t = await load({
      fetch: { allowHosts: ['example.com', '*.example.org'], privateHosts: ['127.0.0.1'] },
    });
    expect(textOf(await t.run('fetch', { url: `${base}/hello` }))).toBe(
      "ERR fetch: 127.0.0.1 is not on the host's list of allowed hosts",
    );
  });
});

describe('with worker isolation', () => {
  it('write_file, exec and fetch work the same in a worker', async () => {
    const t = await load({ isolation: 'worker' });
    try {
      expect(textOf(await t.run('write', { path: 'w/x.txt', data: 'from worker' }))).toBe('true');
      expect(await readFile(path.join(t.ws, 'w', 'x.txt'), 'utf8')).toBe('from worker');
      expect(await t.run('exec', { argv: [NODE, '-e', 'process.stdout.write("hi")'] })).toMatchObject({
        ok: true,
        meta: { code: 0, stdout: 'hi' },
      });
      expect(textOf(await t.run('fetch', { url: 'http://127.0.0.1:1/' }))).toMatch(/a loopback, private/);
    } finally {
      await t.source.close();
    }
  });
});
