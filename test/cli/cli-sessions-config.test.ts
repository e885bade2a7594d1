import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/cli/config.js';
import { type FakeProviderServer, startFakeProviderServer } from '../helpers/fake-provider-server.js';
import { runPanto } from './run-cli.js';

let server: FakeProviderServer;
let other: FakeProviderServer;
let tmp: string;

beforeAll(async () => {
  server = await startFakeProviderServer();
  other = await startFakeProviderServer();
  tmp = await mkdtemp(path.join(os.tmpdir(), 'panto-sessions-'));
});
afterAll(async () => {
  await server.close();
  await other.close();
  await rm(tmp, { recursive: true, force: true });
});

const env = (extra: Record<string, string | undefined> = {}) => ({
  ANTHROPIC_API_KEY: undefined,
  OPENAI_API_KEY: undefined,
  GEMINI_API_KEY: undefined,
  GOOGLE_API_KEY: undefined,
  PANTO_CONFIG: undefined,
  HOME: tmp,
  XDG_CONFIG_HOME: undefined,
  ...extra,
});

type ChatMessage = { role: string; content: unknown };
const texts = (messages: ChatMessage[]) =>
  messages.map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));

describe('sessions: --continue, --resume, /new, and the endpoint a session remembers', () => {
  it('--continue takes the newest session of the workspace; a resume goes back to the same server and model', async () => {
    const ws = path.join(tmp, 'ws1');
    await mkdir(ws);
    server.enqueue({ type: 'reply', text: 'first answer' });
    const first = await runPanto(
      [
        'chat',
        '--base-url',
        server.baseUrl('openai-chat'),
        '--model',
        'gpt-4.1',
        '--thinking',
        'low',
        '--no-context-files',
      ],
      { cwd: ws, stdin: 'remember the number 7\n', env: env() },
    );
    expect(first.code).toBe(0);
    // No --base-url, no --model: the session's own server and model.
    other.enqueue({ type: 'reply', text: 'wrong server' });
    server.enqueue({ type: 'reply', text: 'it was 7' });
    const before = server.requests.length;
    const again = await runPanto(['chat', '--continue', '--no-context-files'], {
      cwd: ws,
      stdin: 'which number?\n',
      env: env(),
    });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('it was 7');
    expect(again.stderr).toMatch(
      /panto chat: gpt-4\.1 via openai-chat at http:\/\/127\.0\.0\.1:\d+\/v1; session .*\(resumed, 2 messages\)/,
    );
    const request = server.requests[before];
    expect(request?.model).toBe('gpt-4.1');
    expect(request?.body.reasoning_effort).toBeUndefined(); // gpt-4.1 does not reason: the level is kept, not sent
    expect(texts(request?.body.messages as ChatMessage[]).join('|')).toContain('remember the number 7');
    expect(other.requests).toHaveLength(0);
    other.reset();
    expect(await readdir(path.join(ws, '.panto', 'sessions'))).toHaveLength(1);
  });

  it('resuming against another server is said, not silent', async () => {
    const ws = path.join(tmp, 'ws2');
    await mkdir(ws);
    server.enqueue({ type: 'reply', text: 'one' });
    await runPanto(
      ['chat', '--base-url', server.baseUrl('openai-chat'), '--model', 'gpt-4o', '--no-context-files'],
      {
        cwd: ws,
        stdin: 'hi\n',
        env: env(),
      },
    );
    other.enqueue({ type: 'reply', text: 'two' });
    const r = await runPanto(
      ['chat', '-c', '--base-url', other.baseUrl('openai-chat'), '--no-context-files'],
      {
        cwd: ws,
        stdin: 'again\n',
        env: env(),
      },
    );
    expect(r.stdout).toContain('two');
    expect(r.stderr).toMatch(
      /note: this session was with openai-chat at http:\/\/127\.0\.0\.1:\d+\/v1; it goes on with openai-chat at http:\/\/127\.0\.0\.1:\d+\/v1 as asked/,
    );
  });

  it('--resume with no file from a pipe lists the recent sessions (exit 2); with none there is a plain error', async () => {
    const ws = path.join(tmp, 'ws1');
    const r = await runPanto(['chat', '--resume', '--no-context-files'], { cwd: ws, stdin: '', env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--resume needs a FILE when not on a terminal; the latest sessions here:');
    expect(r.stderr).toContain('remember the number 7');
    const empty = path.join(tmp, 'empty');
    await mkdir(empty);
    const none = await runPanto(['chat', '--continue'], { cwd: empty, stdin: '', env: env() });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no saved session in');
  });

  it('--session with --resume or --continue, or both of those, is a usage error', async () => {
    for (const args of [
      ['--session', path.join(tmp, 'n.jsonl'), '--continue'],
      ['--session', path.join(tmp, 'n.jsonl'), '--resume', path.join(tmp, 'x.jsonl')],
      ['--continue', '--resume', path.join(tmp, 'x.jsonl')],
    ]) {
      const r = await runPanto(['chat', ...args], { cwd: tmp, stdin: '', env: env() });
      expect(r.code).toBe(2);
    }
  });

  it('/new starts a new session file; the old one stays as it was', async () => {
    const ws = path.join(tmp, 'ws3');
    await mkdir(ws);
    server.enqueue({ type: 'reply', text: 'a' }, { type: 'reply', text: 'b' });
    const before = server.requests.length;
    const r = await runPanto(
      ['chat', '--base-url', server.baseUrl('openai-chat'), '--model', 'gpt-4o', '--no-context-files'],
      { cwd: ws, stdin: 'first topic\n/new\nsecond topic\n', env: env() },
    );
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('new session: ');
    expect(await readdir(path.join(ws, '.panto', 'sessions'))).toHaveLength(2);
    const second = texts(server.requests[before + 1]?.body.messages as ChatMessage[]).join('|');
    expect(second).toContain('second topic');
    expect(second).not.toContain('first topic');
  });
});

describe('the config file', () => {
  it('checks every field, naming the file and the field', () => {
    expect(() => parseConfig('{', 'c.json')).toThrow(/config c.json: not valid JSON/);
    expect(() => parseConfig('{"modle": "x"}', 'c.json')).toThrow("config c.json: unknown field 'modle'");
    expect(() => parseConfig('{"provider": "opnai"}', 'c.json')).toThrow(
      /config c.json: 'provider': expects one of/,
    );
    expect(() => parseConfig('{"baseUrl": "ftp://x"}', 'c.json')).toThrow(
      "'baseUrl' must be an http:// or https:// URL",
    );
    expect(() => parseConfig('{"models": {"m": {"contextWindow": -1}}}', 'c.json')).toThrow(
      "'models.m.contextWindow' must be a positive integer, got -1",
    );
    expect(() => parseConfig('{"models": {"m": {"input": ["text", "video"]}}}', 'c.json')).toThrow(
      "'models.m.input'",
    );
    expect(() => parseConfig('{"models": {"m": {"price": {"input": 1}}}}', 'c.json')).toThrow(
      "'models.m.price' must be an object with at least input and output",
    );
    const ok = parseConfig(
      '{"provider":"openai-chat","model":"local","thinking":"low","models":{"local":{"contextWindow":8192,"input":["text","image"],"price":{"input":1,"output":2}}}}',
      'c.json',
    );
    expect(ok.models.get('local')).toEqual({
      id: 'local',
      contextWindow: 8192,
      input: { image: true, pdf: false },
      price: { input: 1, output: 2 },
    });
  });

  it('default endpoint and model from the file; a custom model gets its window, image input and price', async () => {
    const ws = path.join(tmp, 'ws4');
    await mkdir(ws);
    const file = path.join(tmp, 'panto.json');
    await writeFile(
      file,
      JSON.stringify({
        provider: 'openai-chat',
        baseUrl: server.baseUrl('openai-chat'),
        model: 'qwen3-local',
        models: {
          'qwen3-local': { contextWindow: 8192, input: ['text', 'image'], price: { input: 1, output: 2 } },
          'qwen3-big': { contextWindow: 32768 },
        },
      }),
    );
    server.enqueue({ type: 'reply', text: 'hello from qwen', usage: { input: 1000, output: 500 } });
    const before = server.requests.length;
    const r = await runPanto(['chat', '--no-context-files'], {
      cwd: ws,
      stdin:
        'hi @../../../examples/workspace/chart.png\n/session\n/model qwen3-bgi\n/model qwen3-big\n/session\n',
      env: env({ PANTO_CONFIG: file }),
    });
    expect(r.code).toBe(0);
    expect(server.requests[before]?.model).toBe('qwen3-local');
    // 1000 in at $1/M + 500 out at $2/M = $0.002
    expect(r.stderr).toContain(
      '[tokens: 1,000 in · 500 out · $0.0020 | session: 1,000 in · 500 out · $0.0020]',
    );
    expect(r.stderr).toContain('of a 8192-token window');
    expect(r.stderr).toContain('(from the config file)');
    expect(r.stderr).not.toContain('is not in the catalog');
    expect(r.stderr).toContain(
      "error: /model: 'qwen3-bgi' is not a model the catalog or the config file knows (did you mean qwen3-big",
    );
    expect(r.stderr).toContain('model: qwen3-big via openai-chat (was qwen3-local)');
    expect(r.stderr).toContain('of a 32768-token window');
  });

  it('a broken config file stops the command with a usage error before anything starts', async () => {
    const file = path.join(tmp, 'bad.json');
    await writeFile(file, '{"thinking": "max"}');
    const r = await runPanto(['chat'], { cwd: tmp, stdin: '', env: env({ PANTO_CONFIG: file }) });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`config ${file}: 'thinking' must be one of off, low, medium, high, got "max"`);
    const missing = await runPanto(['chat'], {
      cwd: tmp,
      stdin: '',
      env: env({ PANTO_CONFIG: path.join(tmp, 'nope.json') }),
    });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no such file or directory');
  });
});
