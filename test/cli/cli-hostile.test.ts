/**
 * `panto` under attack: hostile files named by @mentions and arguments, hostile session paths, hostile text from the
 * model and the provider, signals mid-tool. Each case: a typed, readable error (no stack trace), no hang.
 */
import { spawn } from 'node:child_process';
import { constants, createReadStream } from 'node:fs';
import { mkdir, mkdtemp, open, readFile, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completeMention } from '../../src/cli/mentions.js';
import { SessionLog } from '../../src/session/index.js';
import { type FakeProviderServer, startFakeProviderServer } from '../helpers/fake-provider-server.js';
import { pantoBin, repoRoot, runPanto, runShell } from './run-cli.js';

let server: FakeProviderServer;
let tmp: string;
let sock: net.Server;

beforeAll(async () => {
  server = await startFakeProviderServer();
  tmp = await mkdtemp(path.join(os.tmpdir(), 'panto-hostile-'));
  await mkdir(path.join(tmp, 'dir'));
  await runShell('mkfifo', [path.join(tmp, 'fifo')]);
  sock = net.createServer().listen(path.join(tmp, 'sock'));
  await symlink('loop-b', path.join(tmp, 'loop-a'));
  await symlink('loop-a', path.join(tmp, 'loop-b'));
  await writeFile(path.join(tmp, '.env'), 'API_KEY=secret\n');
  await symlink('.env', path.join(tmp, 'notes.txt'));
  // 2 GiB + 1 byte, sparse: text at the start (so it looks like a text file), holes after.
  await writeFile(path.join(tmp, 'huge.txt'), 'line of text\n'.repeat(6000));
  await truncate(path.join(tmp, 'huge.txt'), 2 ** 31 + 1);
});
afterAll(async () => {
  sock.close();
  await server.close();
  await rm(tmp, { recursive: true, force: true });
});

const noKeys = {
  ANTHROPIC_API_KEY: undefined,
  OPENAI_API_KEY: undefined,
  GEMINI_API_KEY: undefined,
  GOOGLE_API_KEY: undefined,
};

function chat(lines: string[], args: string[], timeoutMs = 20_000) {
  return runPanto(
    ['chat', '--base-url', server.baseUrl('openai-chat'), '--model', 'gpt-4o', '--no-context-files', ...args],
    { cwd: tmp, stdin: lines.map((l) => `${l}\n`).join(''), env: noKeys, timeoutMs },
  );
}

const STACK = /\n\s+at |Node\.js v\d/;

/** The characters a terminal would act on (C0 but newline and tab, DEL, C1, bidi overrides) found in `text`. */
function rawControls(text: string): string[] {
  return [...text].filter((ch) => {
    const c = ch.codePointAt(0) ?? 0;
    return (c < 0x20 && c !== 0x0a && c !== 0x09) || (c >= 0x7f && c <= 0x9f) || (c >= 0x202a && c <= 0x202e);
  });
}

describe('@mentions of files that are not plain files', () => {
  it('a FIFO with no writer, /dev/zero, a socket, a directory, a symlink loop: notes, and the turn goes on', async () => {
    server.reset();
    const before = server.requests.length;
    server.enqueue({ type: 'reply', text: 'Answered anyway.' });
    const r = await chat(
      ['look at @fifo @/dev/zero @sock @dir @loop-a @missing.txt'],
      ['--session', path.join(tmp, 'mentions.jsonl')],
    );
    expect(r.stderr).not.toMatch(STACK);
    expect(r.stderr).toContain('@fifo: not attached (a FIFO, not a regular file)');
    expect(r.stderr).toContain('@/dev/zero: not attached (a character device, not a regular file)');
    expect(r.stderr).toContain('@sock: not attached (a socket, not a regular file)');
    expect(r.stderr).toContain('@dir: not attached (a directory)');
    expect(r.stderr).toContain('@loop-a: not attached (too many symbolic links)');
    expect(r.stderr).toContain('@missing.txt: not attached (no such file)');
    expect(r.stdout).toContain('Answered anyway.');
    expect(r.code).toBe(0);
    expect(server.requests.length - before).toBe(1);
  });

  it('a 2 GiB text file is inlined up to the cap, never read whole', async () => {
    server.reset();
    const before = server.requests.length;
    server.enqueue({ type: 'reply', text: 'Long file.' });
    const r = await chat(['summarise @huge.txt'], ['--session', path.join(tmp, 'huge.jsonl')]);
    expect(r.stderr).not.toMatch(STACK);
    expect(r.stderr).toContain('attached: huge.txt');
    expect(r.code).toBe(0);
    const body = JSON.stringify(server.requests[before]?.body.messages);
    expect(body).toContain(`showing the first 51200 of ${2 ** 31 + 1} bytes`);
    expect(body.length).toBeLessThan(60_000);
  });

  it('a symlink to a secret is judged by its target', async () => {
    server.reset();
    const before = server.requests.length;
    server.enqueue({ type: 'reply', text: 'ok' });
    const r = await chat(['read @notes.txt'], ['--session', path.join(tmp, 'secret.jsonl')]);
    expect(r.stderr).toContain(
      '@notes.txt: not attached (it links to a file the secrets denylist matches: .env)',
    );
    expect(JSON.stringify(server.requests[before]?.body.messages)).not.toContain('API_KEY');
  });
});

describe('--tools DIR with hostile .lua entries', () => {
  it('a .lua symlink to /dev/zero or to a FIFO is reported and skipped, not read forever', async () => {
    const dir = path.join(tmp, 'hostile-tools');
    await mkdir(dir, { recursive: true });
    await symlink('/dev/zero', path.join(dir, 'zero.lua'));
    await symlink(path.join(tmp, 'fifo'), path.join(dir, 'pipe.lua'));
    const r = await runPanto(['tool', '--list', '--tools', dir], { cwd: tmp, timeoutMs: 20_000 });
    expect(r.stderr).toContain('zero.lua: a character device, not a regular file; not read');
    expect(r.stderr).toContain('pipe.lua: a FIFO, not a regular file; not read');
    expect(r.stdout).toMatch(/^read /m);
    expect(r.code).toBe(0);
  });
});

describe('--workspace that is not a directory', () => {
  it.each([
    ['fifo', 'a FIFO, not a directory'],
    ['.env', 'a regular file, not a directory'],
    ['missing-dir', 'no such file or directory'],
  ])('%s: exit 1 before the chat starts', async (name, what) => {
    const r = await runPanto(
      ['chat', '--base-url', 'http://127.0.0.1:9/v1', '--model', 'x', '--workspace', name],
      { cwd: tmp, stdin: 'hi\n', env: noKeys, timeoutMs: 20_000 },
    );
    expect(r.stderr).toBe(
      name === 'missing-dir'
        ? `panto: --workspace: cannot read ${name}: ${what}\n`
        : `panto: --workspace ${name}: ${what}\n`,
    );
    expect(r.code).toBe(1);
  });
});

describe('--mcp FILE that is not a plain file', () => {
  it.each([
    ['fifo', 'a FIFO, not a regular file'],
    ['/dev/zero', 'a character device, not a regular file'],
    ['dir', 'a directory, not a regular file'],
  ])('%s: exit 1 at once, naming what it is', async (name, what) => {
    const r = await runPanto(
      ['chat', '--base-url', 'http://127.0.0.1:9/v1', '--model', 'x', '--no-context-files', '--mcp', name],
      { cwd: tmp, stdin: 'hi\n', env: noKeys, timeoutMs: 20_000 },
    );
    expect(r.stderr).toBe(`panto: MCP config ${name}: ${what} [ERR_MCP_CONFIG]\n`);
    expect(r.code).toBe(1);
  });
});

describe('a usage error with --mcp servers configured', () => {
  /** `panto chat` against a closed port, no context files, plus `flags`: for cases that must end before any request. */
  function offlineChat(flags: string[]) {
    return runPanto(
      ['chat', '--base-url', 'http://127.0.0.1:9/v1', '--model', 'x', '--no-context-files', ...flags],
      { cwd: tmp, env: noKeys, timeoutMs: 20_000 },
    );
  }

  async function mcpConfig(name: string): Promise<string> {
    const file = path.join(tmp, name);
    const servers = { panto: { command: process.execPath, args: [pantoBin, 'mcp', 'serve'] } };
    await writeFile(file, JSON.stringify({ mcpServers: servers }));
    return file;
  }

  it('--mcp and an existing --session: exit 2 before any server starts (the process does not hang)', async () => {
    const config = await mcpConfig('mcp-ok.json');
    const r = await offlineChat(['--mcp', config, '--session', '.env']);
    expect(r.stderr).toBe(
      'panto: --session .env: already exists (a new session is written to a new file; --resume .env continues a saved one)\n',
    );
    expect(r.code).toBe(2);
  });

  it("a second --mcp that is a FIFO: exit 1 before the first file's servers start", async () => {
    const config = await mcpConfig('mcp-ok2.json');
    const r = await offlineChat(['--mcp', config, '--mcp', 'fifo']);
    expect(r.stderr).not.toContain('started');
    expect(r.stderr).toBe('panto: MCP config fifo: a FIFO, not a regular file [ERR_MCP_CONFIG]\n');
    expect(r.code).toBe(1);
  });
});

describe('context files', () => {
  it('a 2 GiB AGENTS.md is read up to its cap (never whole); a FIFO CLAUDE.md is skipped, not waited on', async () => {
    const repo = path.join(tmp, 'ctx-repo');
    await mkdir(path.join(repo, '.git'), { recursive: true });
    await writeFile(path.join(repo, 'AGENTS.md'), 'RULE: be careful.\n'.repeat(5000));
    await truncate(path.join(repo, 'AGENTS.md'), 2 ** 31 + 1);
    await runShell('mkfifo', [path.join(repo, 'CLAUDE.md')]);
    server.reset();
    const before = server.requests.length;
    server.enqueue({ type: 'reply', text: 'ok' });
    const r = await runPanto(
      [
        'chat',
        '--base-url',
        server.baseUrl('openai-chat'),
        '--model',
        'gpt-4o',
        '--workspace',
        repo,
        '--session',
        path.join(tmp, 'ctx.jsonl'),
      ],
      { cwd: repo, stdin: 'hi\n', env: noKeys, timeoutMs: 20_000 },
    );
    expect(r.stderr).not.toContain('not read');
    expect(r.code).toBe(0);
    const system = JSON.stringify(server.requests[before]?.body.messages).slice(0, 200_000);
    expect(system).toContain('RULE: be careful.');
    expect(system).toContain('[truncated: only the first 65536 bytes of this file are shown]');
  });
});

describe('--session naming something that exists', () => {
  it.each(['dir', 'fifo', 'sock', 'loop-a', '.env'])(
    '%s: a usage error before the chat starts, no request',
    async (name) => {
      const before = server.requests.length;
      const r = await chat(['hi'], ['--session', path.join(tmp, name)]);
      expect(r.stderr).not.toMatch(STACK);
      expect(r.stderr).toContain(`panto: --session ${path.join(tmp, name)}: already exists`);
      expect(r.code).toBe(2);
      expect(server.requests.length).toBe(before);
    },
  );

  it('a path below a file: a plain error before the chat starts', async () => {
    const file = path.join(tmp, '.env', 'below', 's.jsonl');
    const r = await chat(['hi'], ['--session', file]);
    expect(r.stderr).toBe(`panto: --session: cannot create ${file}: a part of the path is not a directory\n`);
    expect(r.code).toBe(1);
  });

  it('a session file that cannot be created: the turn fails with a plain error, the chat goes on, exit 1', async () => {
    // The default session directory (.panto/sessions in the workspace) cannot be made: .panto is a file.
    const workspace = path.join(tmp, 'ws-dot-panto-file');
    await mkdir(workspace, { recursive: true });
    await writeFile(path.join(workspace, '.panto'), 'not a directory');
    const before = server.requests.length;
    const r = await chat(['hi', '/session'], ['--workspace', workspace]);
    expect(r.stderr).not.toMatch(STACK);
    expect(r.stderr).toMatch(
      /error: cannot create the directory .*\.panto.*: (already exists|a part of the path is not a directory)/,
    );
    expect(server.requests.length).toBe(before);
    expect(r.stderr).toContain('(not written yet: nothing was sent)');
    expect(r.code).toBe(1);
  });
});

describe('panto image with a file that is not a plain file', () => {
  it.each([
    ['fifo', 'a FIFO, not a regular file'],
    ['/dev/zero', 'a character device, not a regular file'],
    ['sock', 'a socket, not a regular file'],
  ])('%s: exit 1 at once, naming what it is', async (name, what) => {
    const r = await runPanto(['image', name], { cwd: tmp, timeoutMs: 20_000 });
    expect(r.stderr).toBe(`panto: cannot read ${name}: ${what}\n`);
    expect(r.code).toBe(1);
  });

  it('--out naming a FIFO nobody reads or a socket: exit 1 at once, nothing written', async () => {
    const photo = path.join(repoRoot, 'examples', 'workspace', 'photo.jpg');
    for (const [out, what] of [
      ['fifo', 'not a regular file (a FIFO with no reader, or a socket)'],
      ['sock', 'not a regular file (a FIFO with no reader, or a socket)'],
    ]) {
      const r = await runPanto(['image', photo, '--out', out as string], { cwd: tmp, timeoutMs: 20_000 });
      expect(r.stderr).toBe(`panto: cannot write ${out}: ${what}\n`);
      expect(r.code).toBe(1);
    }
  });

  it('--out /dev/null and a FIFO someone reads are written as streams (exit 0)', async () => {
    const photo = path.join(repoRoot, 'examples', 'workspace', 'photo.jpg');
    const toNull = await runPanto(['image', photo, '--out', '/dev/null', '--json'], {
      cwd: tmp,
      timeoutMs: 20_000,
    });
    expect(toNull.code).toBe(0);
    const fifo = path.join(tmp, 'read-fifo');
    await runShell('mkfifo', [fifo]);
    const chunks: Buffer[] = [];
    const reader = new Promise<void>((resolve, reject) => {
      createReadStream(fifo)
        .on('data', (d) => chunks.push(d as Buffer))
        .on('end', resolve)
        .on('error', reject);
    });
    const r = await runPanto(['image', photo, '--out', fifo, '--json'], { cwd: tmp, timeoutMs: 20_000 });
    if (r.code !== 0) {
      // panto may have failed before opening the FIFO: open it for writing once so the reader ends (non-blocking:
      // when panto did open and close it, the reader has gone and this fails with ENXIO instead of waiting).
      await open(fifo, constants.O_WRONLY | constants.O_NONBLOCK).then(
        (fh) => fh.close(),
        () => {},
      );
    }
    await reader;
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const got = Buffer.concat(chunks);
    expect(got.length).toBe(JSON.parse(r.stdout).output.byteLength);
    expect([...got.subarray(0, 2)]).toEqual([0xff, 0xd8]);
  });

  it('a file over the input cap is refused unread', async () => {
    const r = await runPanto(['image', 'huge.txt'], { cwd: tmp, timeoutMs: 20_000 });
    expect(r.stderr).toMatch(
      /^panto: huge.txt: over the \d+-byte input cap of the media pipeline; not read\n$/,
    );
    expect(r.code).toBe(1);
  });
});

describe('hostile text from the model and the provider', () => {
  const evil = '\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\u009b1A\u202Eevil';

  it('tool names, arguments and provider errors reach stderr neutralised; piped stdout keeps the answer as sent', async () => {
    server.reset();
    server.enqueue(
      { type: 'reply', text: 'calling', toolCalls: [{ id: 'c1', name: `rd${evil}`, args: { p: evil } }] },
      { type: 'reply', text: `answer ${evil}` },
      { type: 'http-error', status: 400, message: `bad request ${evil}` },
    );
    const r = await chat(['one', 'two'], ['--session', path.join(tmp, 'evil.jsonl')]);
    expect(rawControls(r.stderr)).toEqual([]);
    expect(r.stderr).toContain('[tool] rd^[]52;c;cm0gLXJmIH4=^G^[[2J<U+009B>1A<U+202E>evil(');
    expect(r.stderr).toContain('error: openai-chat HTTP 400 (invalid_request_error): bad request ^[]52;');
    expect(r.stdout).toContain(`answer ${evil}`);
    expect(r.code).toBe(1);
  });

  it('panto session --json: C1 and bidi controls the model wrote are \\u escapes (the same JSON value)', async () => {
    const file = path.join(tmp, 'evil-log.jsonl');
    const log = await SessionLog.create(file, { model: 'gpt-4o' });
    log.appendMessage({ role: 'user', content: [{ type: 'text', text: 'hi' }] });
    log.appendMessage({
      role: 'assistant',
      content: [{ type: 'text', text: `answer ${evil}` }],
      stopReason: 'end',
    });
    log.close();
    const r = await runPanto(['session', file, '--json'], { cwd: tmp });
    expect(r.code).toBe(0);
    expect(rawControls(r.stdout)).toEqual([]);
    expect(JSON.stringify(JSON.parse(r.stdout))).toContain(JSON.stringify(`answer ${evil}`).slice(1, -1));
  });
});

describe('Tab completion', () => {
  it('a file name carrying terminal controls is not offered (readline would print it raw)', async () => {
    const dir = path.join(tmp, 'complete');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'shot.png'), '');
    await writeFile(path.join(dir, 'shot\x1b]52;c;cm0gLXJm\x07.png'), '');
    await writeFile(path.join(dir, 'shot\u202Egnp.exe'), '');
    const [items] = await completeMention('@sh', dir);
    expect(items).toEqual(['@shot.png']);
  });
});

describe('a huge paste', () => {
  it('a line over the cap is refused, not sent; the next line is', async () => {
    server.reset();
    const before = server.requests.length;
    server.enqueue({ type: 'reply', text: 'short one answered' });
    const r = await chat(
      ['x'.repeat(5 * 1024 * 1024), 'a short one'],
      ['--session', path.join(tmp, 'paste.jsonl')],
    );
    expect(r.stderr).toContain(
      `error: a message of ${5 * 1024 * 1024} characters is over the ${4 * 1024 * 1024}-character cap; not sent`,
    );
    expect(r.stdout).toContain('short one answered');
    expect(server.requests.length - before).toBe(1);
    expect(r.code).toBe(1);
  });
});

describe('a huge paste after a normal line', () => {
  it("the refusal comes when the line's turn comes, after the first line's answer, not in the middle of it", async () => {
    server.reset();
    // The first answer streams, then stalls: the turn is still running while the long line is read.
    server.enqueue({ type: 'stall', text: 'FIRST-ANSWER' });
    const requests = server.requests.length;
    const long = 'y'.repeat(Math.floor(4.2 * 1024 * 1024));
    // stdout and stderr into one pipe, so their order is the order panto wrote them.
    const child = spawn(
      'sh',
      [
        '-c',
        `exec "${process.execPath}" "${pantoBin}" chat --base-url "${server.baseUrl('openai-chat')}" --model gpt-4o ` +
          `--no-context-files --session "${path.join(tmp, 'paste-after.jsonl')}" 2>&1`,
      ],
      { cwd: tmp, env: { ...process.env, ...noKeys }, stdio: ['pipe', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const write = (text: string) => new Promise<void>((resolve) => child.stdin.write(text, () => resolve()));
    child.stdin.on('error', () => {});
    await write('first\n');
    // (Piped stdout gets the answer when it ends or is stopped: wait for its request instead.)
    while (server.requests.length === requests) await new Promise((r) => setTimeout(r, 20));
    await write(`${long}\n`);
    // A blank line larger than the pipe buffer: once it is written, panto has read the whole long line.
    await write(`${' '.repeat(256 * 1024)}\n`);
    child.kill('SIGINT');
    while (!out.includes('[stopped')) await new Promise((r) => setTimeout(r, 20));
    child.stdin.end();
    expect(await exited).toBe(1);
    const stopped = out.indexOf('[stopped');
    const refusal = out.indexOf(`error: a message of ${long.length} characters is over the`);
    expect(refusal).toBeGreaterThan(stopped);
    expect(out.indexOf('FIRST-ANSWER')).toBeLessThan(stopped);
  });
});

describe('hostile flags', () => {
  it.each<[string, string[], string]>([
    [
      'not a URL',
      ['--base-url', 'not-a-url'],
      "--base-url expects an http:// or https:// URL, got 'not-a-url'",
    ],
    [
      'a file: URL',
      ['--base-url', 'file:///etc/passwd'],
      "--base-url expects an http:// or https:// URL, got 'file:///etc/passwd'",
    ],
    [
      'a 400-digit number',
      ['--base-url', 'http://127.0.0.1:9/v1', '--max-turns', '9'.repeat(400)],
      "--max-turns expects a positive integer, got '9999999999999999999999999999999999999999…' (too large)",
    ],
  ])('%s: a usage error before any request', async (_what, args, message) => {
    const r = await runPanto(['chat', '--model', 'x', '--no-context-files', ...args], {
      cwd: tmp,
      stdin: 'hi\n',
      env: noKeys,
    });
    expect(r.stderr).toBe(`panto: ${message}\n`);
    expect(r.code).toBe(2);
  });

  it('a flag value carrying terminal controls is echoed in the usage error with them visible', async () => {
    const r = await runPanto(
      ['chat', '--base-url', 'http://127.0.0.1:9/v1', '--thinking', '\x1b]0;pwned\x07'],
      {
        cwd: tmp,
        env: noKeys,
      },
    );
    expect(r.stderr).toBe("panto: --thinking expects one of off, low, medium, high; got '^[]0;pwned^G'\n");
    expect(r.code).toBe(2);
  });

  it('a provider that redirects: the error names the target, and the chat ends with exit 1', async () => {
    server.reset();
    server.enqueue({
      type: 'raw',
      status: 302,
      headers: { location: 'http://elsewhere.invalid/v1' },
      body: '',
    });
    const r = await chat(['hi'], ['--session', path.join(tmp, 'redirect.jsonl')]);
    expect(r.stderr).not.toMatch(STACK);
    expect(r.stderr).toMatch(
      /error: openai-chat HTTP 302: redirected to http:\/\/elsewhere\.invalid\/.*redirects are not followed/,
    );
    expect(r.code).toBe(1);
  });
});

describe('stdout closed early', () => {
  it('panto chat … | head -c 10 mid-answer ends quietly with code 0 and keeps what was logged', async () => {
    server.reset();
    server.enqueue({ type: 'reply', text: 'y'.repeat(300_000) });
    const session = path.join(tmp, 'epipe.jsonl');
    const args = [
      'chat',
      '--base-url',
      server.baseUrl('openai-chat'),
      '--model',
      'gpt-4o',
      '--no-context-files',
      '--session',
      session,
    ];
    const r = await runShell(
      'bash',
      [
        '-o',
        'pipefail',
        '-c',
        `echo hi | ${JSON.stringify(process.execPath)} ${JSON.stringify(pantoBin)} ${args.map((a) => JSON.stringify(a)).join(' ')} | head -c 10`,
      ],
      { cwd: tmp, env: noKeys },
    );
    expect(r.stdout).toBe('y'.repeat(10));
    expect(r.stderr).not.toMatch(STACK);
    expect(r.code).toBe(0);
    // The log is written line by line as the chat goes: the user's message is there.
    expect(await readFile(session, 'utf8')).toContain('"text":"hi"');
  });
});

describe('signals', () => {
  it('SIGINT while a tool runs stops the tool and the turn; a second SIGINT exits 0', async () => {
    const tools = path.join(tmp, 'tools');
    await mkdir(tools, { recursive: true });
    await writeFile(
      path.join(tools, 'spin.lua'),
      `return {
  name = "spin",
  description = "Never returns.",
  parameters = { type = "object", properties = {} },
  handler = function() while true do end end,
}
`,
    );
    server.reset();
    server.enqueue({ type: 'reply', text: 'spinning', toolCalls: [{ id: 'c1', name: 'spin', args: {} }] });
    const child = spawn(
      process.execPath,
      [
        pantoBin,
        'chat',
        '--base-url',
        server.baseUrl('openai-chat'),
        '--model',
        'gpt-4o',
        '--no-context-files',
        '--tools',
        tools,
        '--session',
        path.join(tmp, 'spin.jsonl'),
      ],
      { cwd: tmp, env: { ...process.env, ...noKeys }, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const until = async (test: () => boolean, what: string) => {
      const deadline = Date.now() + 20_000;
      while (!test()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    try {
      child.stdin.write('spin please\n');
      await until(() => stderr.includes('[tool] spin()'), 'the tool to start');
      child.kill('SIGINT');
      await until(() => stderr.includes('[tool] spin stopped'), 'the tool to stop');
      await until(() => stderr.includes('[stopped; the partial answer is kept'), 'the turn to stop');
      child.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(stderr).not.toMatch(STACK);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
