import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionLog } from '../../src/session/index.js';
import type { FakeProviderServer } from '../helpers/fake-provider-server.js';
import { fakeChatFlags, NO_KEYS, pantoBin, repoRoot, runPanto, runShell, withFakeServer } from './run-cli.js';

let server: FakeProviderServer;
let tmp: string;

withFakeServer('panto-chat-cmd-', (s, t) => {
  server = s;
  tmp = t;
});

const noKeys = NO_KEYS;

type ChatMessage = { role: string; content: unknown };

/** The OpenAI Chat messages of the `i`-th recorded request. */
function messagesOf(i: number): ChatMessage[] {
  return (server.requests[i]?.body.messages ?? []) as ChatMessage[];
}

/** `panto chat` against the fake OpenAI Chat server with `lines` on stdin. */
function chat(lines: string[], args: string[] = [], cwd = tmp) {
  return runPanto(['chat', ...fakeChatFlags(server), ...args], {
    cwd,
    stdin: lines.map((l) => `${l}\n`).join(''),
    env: noKeys,
  });
}

function textOf(message: ChatMessage | undefined): string {
  const c = message?.content;
  if (typeof c === 'string') return c;
  return ((c ?? []) as Array<{ text?: string }>).map((p) => p.text ?? '').join('');
}

describe('panto chat slash commands', () => {
  it('an unknown /command is an error with suggestions, never sent; //text sends /text', async () => {
    server.reset();
    const before = server.requests.length;
    server.enqueue({ type: 'reply', text: 'a path, yes' });
    const r = await chat(['/sesion', '//usr/bin is a path?'], ['--session', path.join(tmp, 'unknown.jsonl')]);
    expect(r.stderr).toContain("error: unknown command '/sesion' (did you mean /session");
    const sent = server.requests.slice(before);
    expect(sent).toHaveLength(1);
    const user = messagesOf(before).filter((m) => m.role === 'user');
    expect(user.map(textOf)).toEqual(['/usr/bin is a path?']);
    expect(r.stdout).toContain('a path, yes');
  });

  it('/help lists every command; /session before anything is sent names the file and writes none', async () => {
    const file = path.join(tmp, 'never.jsonl');
    const r = await chat(['/help', '/session', '/exit'], ['--session', file]);
    expect(r.code).toBe(0);
    for (const c of ['/help', '/exit', '/retry', '/compact', '/session', '/thinking'])
      expect(r.stderr).toContain(c);
    expect(r.stderr).toContain(`session:  ${file} (not written yet: nothing was sent)`);
    expect(r.stderr).toContain('128000-token window');
    expect(existsSync(file)).toBe(false);
    expect(r.stderr).not.toContain('session saved');
  });

  it('/retry asks again after a failed turn; /session then shows the tokens used', async () => {
    server.reset();
    const before = server.requests.length;
    server.enqueue(
      { type: 'http-error', status: 400, message: 'bad request for this test' },
      { type: 'reply', text: 'second try works', usage: { input: 1200, output: 34 } },
    );
    const file = path.join(tmp, 'retry.jsonl');
    const r = await chat(['hello', '/retry', '/session'], ['--session', file]);
    expect(r.stderr).toContain('bad request for this test');
    expect(r.stderr).toContain('(/retry tries again)');
    expect(r.stdout).toContain('second try works');
    expect(server.requests.length - before).toBe(2);
    // gpt-4o at $2.50 / $10 per million: 1,200 in + 34 out = $0.00334.
    expect(r.stderr).toContain(
      '[tokens: 1,200 in · 34 out · $0.0033 | session: 1,200 in · 34 out · $0.0033]',
    );
    expect(r.stderr).toMatch(/used: +1,200 in · 34 out · \$0\.0033 \(whole session, 1 request\)/);
    expect(r.code).toBe(1);
  });

  it('/compact summarizes the older messages through the provider and the log records it', async () => {
    server.reset();
    const before = server.requests.length;
    server.enqueue(
      { type: 'reply', text: `first answer ${'x'.repeat(4000)}` },
      { type: 'reply', text: `second answer ${'y'.repeat(4000)}` },
      { type: 'reply', text: 'SUMMARY: the user asked twice.' },
    );
    const file = path.join(tmp, 'compact.jsonl');
    const r = await chat(
      ['first question', 'second question', '/compact'],
      ['--session', file, '--context-window', '6000'],
    );
    expect(r.stderr).toMatch(/\[compacted the conversation: ~\d+ -> ~\d+ tokens\]/);
    const summaryRequest = server.requests[before + 2];
    expect(JSON.stringify(summaryRequest?.body)).toContain('Summarize this conversation');
    const shown = await runPanto(['session', file]);
    expect(shown.stdout).toContain('SUMMARY: the user asked twice.');
  });

  it('/thinking with a bad mode is an error; /thinking prints the last thinking', async () => {
    server.reset();
    server.enqueue({ type: 'reply', thinking: 'Let me weigh the options.', text: 'Done.' });
    const r = await chat(['go', '/thinking', '/thinking loud'], ['--session', path.join(tmp, 'think.jsonl')]);
    expect(r.stderr).toContain('[thought for 25 characters; /thinking shows it]');
    expect(r.stderr).toContain('Let me weigh the options.');
    expect(r.stderr).toContain(
      "error: /thinking: expected one of off, low, medium, high, collapse, show, hide, got 'loud'",
    );
    expect(r.stdout).toContain('Done.');
    expect(r.stdout).not.toContain('Let me weigh');
  });
});

describe('panto chat: /model, thinking, prompt caching', () => {
  it('/model switches from the next request, the log records it, and a resume goes on with it', async () => {
    server.reset();
    const before = server.requests.length;
    server.enqueue(
      { type: 'reply', text: 'from 4o' },
      { type: 'reply', text: 'from 4.1' },
      { type: 'reply', text: 'still 4.1' },
    );
    const file = path.join(tmp, 'model.jsonl');
    const r = await chat(
      ['hi', '/model', '/model gtp-4.1', '/model gpt-4.1', 'and now?', '/model claude-sonnet-4-5'],
      ['--session', file],
    );
    expect(r.stderr).toContain('model: gpt-4o via openai-chat\n');
    // A misspelt name is refused (it would lose the price and the image input), naming the close one.
    expect(r.stderr).toContain(
      "error: /model: 'gtp-4.1' is not a model the catalog or the config file knows (did you mean gpt-4.1",
    );
    expect(r.stderr).toContain('model: gpt-4.1 via openai-chat (was gpt-4o); recorded in the session');
    // A gateway base URL may serve any vendor's model: no vendor check with --base-url.
    expect(r.stderr).toContain('model: claude-sonnet-4-5 via openai-chat (was gpt-4.1)');
    expect(server.requests.slice(before).map((q) => q.model)).toEqual(['gpt-4o', 'gpt-4.1']);
    const entries = await runPanto(['session', file, '--entries']);
    expect(entries.stdout).toContain('model_change (gpt-4.1)');
    expect(entries.stdout).toMatch(/, model gpt-4o \(now claude-sonnet-4-5\)/);
    const resumed = await runPanto(
      ['chat', '--base-url', server.baseUrl('openai-chat'), '--no-context-files', '--resume', file],
      { cwd: tmp, stdin: 'again\n', env: noKeys },
    );
    expect(resumed.stderr).toContain('panto chat: claude-sonnet-4-5 via openai-chat');
    expect(server.requests.at(-1)?.model).toBe('claude-sonnet-4-5');
  });

  it('/model to another vendor on a default endpoint is refused, the chat goes on', async () => {
    server.reset();
    server.enqueue({ type: 'reply', text: 'ok', usage: { input: 10, output: 2 } });
    const r = await runPanto(
      [
        'chat',
        '--provider',
        'anthropic',
        '--base-url',
        server.baseUrl('anthropic-messages'),
        '--no-context-files',
      ],
      { cwd: tmp, stdin: '/model\n/session\nhi\n', env: noKeys },
    );
    expect(r.stderr).toContain('model: claude-sonnet-4-5 via anthropic-messages');
    expect(r.code).toBe(0);
  });

  it('--thinking sets the reasoning effort, /thinking LEVEL changes it; thinking is folded to one line', async () => {
    server.reset();
    const before = server.requests.length;
    server.enqueue(
      { type: 'reply', thinking: 'Considering.', text: 'first' },
      { type: 'reply', text: 'second' },
    );
    const r = await runPanto(
      [
        'chat',
        '--base-url',
        server.baseUrl('openai-chat'),
        '--model',
        'o4-mini',
        '--thinking',
        'high',
        '--no-context-files',
        '--session',
        path.join(tmp, 'effort.jsonl'),
      ],
      { cwd: tmp, stdin: 'one\n/thinking low\ntwo\n/session\n', env: noKeys },
    );
    const sent = server.requests.slice(before);
    expect(sent.map((q) => q.body.reasoning_effort)).toEqual(['high', 'low']);
    expect(r.stderr).toContain('[thought for 12 characters; /thinking shows it]');
    expect(r.stderr).toContain('thinking: low; shown: collapse');
    // A model the catalog does not know is taken to reason when a level is asked for.
    server.enqueue({ type: 'reply', text: 'ok' });
    await runPanto(
      ['chat', '--base-url', server.baseUrl('openai-chat'), '--model', 'my-reasoner', '--thinking', 'medium'],
      { cwd: tmp, stdin: 'hi\n', env: noKeys },
    );
    expect(server.requests.at(-1)?.body.reasoning_effort).toBe('medium');
    const bad = await runPanto(['chat', '--base-url', server.baseUrl('openai-chat'), '--thinking', 'max'], {
      cwd: tmp,
      stdin: '',
      env: noKeys,
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--thinking expects one of off, low, medium, high; got 'max'");
  });

  it('Anthropic: cache breakpoints by default (--no-prompt-cache: none); cache reads and writes shown and priced', async () => {
    server.reset();
    const before = server.requests.length;
    const sse = (events: Array<Record<string, unknown>>) =>
      events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('');
    const cached = sse([
      {
        type: 'message_start',
        message: {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: 'claude-sonnet-4-5',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: {
            input_tokens: 50,
            cache_read_input_tokens: 4000,
            cache_creation_input_tokens: 1000,
            output_tokens: 1,
          },
        },
      },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'cached answer' } },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { output_tokens: 100 },
      },
      { type: 'message_stop' },
    ]);
    server.enqueue({ type: 'raw', headers: { 'content-type': 'text/event-stream' }, body: cached });
    const args = ['chat', '--provider', 'anthropic', '--base-url', server.baseUrl('anthropic-messages')];
    const r = await runPanto(
      [...args, '--system', 'Be brief.', '--session', path.join(tmp, 'cache1.jsonl')],
      {
        cwd: tmp,
        stdin: 'hi\n',
        env: noKeys,
      },
    );
    expect(r.stdout).toContain('cached answer');
    // Sonnet 4.5: $3 in, $15 out, cache read $0.30, cache write $3.75 per million:
    // 50*3 + 4000*0.3 + 1000*3.75 + 100*15 = 150 + 1200 + 3750 + 1500 = 6600 micro-dollars.
    expect(r.stderr).toContain('[tokens: 50 in · 4,000 cache read · 1,000 cache write · 100 out · $0.0066');
    expect(JSON.stringify(server.requests[before]?.body)).toContain('"cache_control"');

    server.enqueue({ type: 'reply', text: 'plain' });
    await runPanto([...args, '--no-prompt-cache', '--session', path.join(tmp, 'cache2.jsonl')], {
      cwd: tmp,
      stdin: 'hi\n',
      env: noKeys,
    });
    expect(JSON.stringify(server.requests[before + 1]?.body)).not.toContain('cache_control');
  });
});

describe('panto chat: Ctrl-C from a pipe (SIGINT)', () => {
  it('stops the running turn, then a second SIGINT exits with 0', async () => {
    server.reset();
    server.enqueue({ type: 'stall', text: 'Once upon a time' });
    const before = server.requests.length;
    const disconnects = server.clientDisconnects;
    const child = spawn(
      process.execPath,
      [pantoBin, 'chat', ...fakeChatFlags(server), '--session', path.join(tmp, 'sigint.jsonl')],
      { cwd: tmp, env: { ...process.env, ...noKeys }, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const until = async (test: () => boolean, what: string) => {
      const deadline = Date.now() + 20_000;
      while (!test()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${stdout}\n${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    try {
      child.stdin.write('tell me a story\n');
      // Piped stdout gets an answer when it is complete (or stopped): wait for the request, then its first words.
      await until(() => server.requests.length > before, 'the request');
      await new Promise((r) => setTimeout(r, 500));
      child.kill('SIGINT');
      await until(() => stderr.includes('[stopped; the partial answer is kept'), 'the turn to stop');
      expect(stderr).toContain('[stopping the turn — Ctrl-C again exits]');
      expect(stdout).toBe('Once upon a time\n');
      await until(() => server.clientDisconnects > disconnects, 'the request to be closed');
      expect(child.exitCode).toBeNull();
      child.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(stderr).toContain('session saved:');
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('panto chat: a stream cut mid-answer', () => {
  it('is asked again; piped stdout gets only the whole answer, never the cut attempt', async () => {
    server.reset();
    const before = server.requests.length;
    server.enqueue(
      { type: 'reply', text: 'Half an answ', cut: 2 },
      { type: 'reply', text: 'The whole answer.' },
    );
    const r = await chat(['go'], ['--session', path.join(tmp, 'cut.jsonl')]);
    expect(server.requests.length - before).toBe(2);
    expect(r.stderr).toMatch(/\[the stream was cut \(.+\); asking again in \d\.\d s; the answer restarts\]/);
    expect(r.stdout).toBe('The whole answer.\n');
    expect(r.code).toBe(0);
  });
});

describe('panto chat: model choice', () => {
  it('a model of another vendor on a default endpoint is a usage error before any request', async () => {
    const before = server.requests.length;
    const r = await runPanto(['chat', '--provider', 'anthropic', '--model', 'gpt-4.1'], {
      cwd: tmp,
      stdin: 'hi\n',
      env: { ...noKeys, ANTHROPIC_API_KEY: 'sk-test' },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      "model 'gpt-4.1' is a openai model but the anthropic-messages endpoint serves anthropic models; use --provider openai",
    );
    expect(server.requests.length).toBe(before);
    const gateway = await runPanto(
      ['chat', '--provider', 'openai-chat', '--model', 'anthropic/claude-sonnet-4.5'],
      {
        cwd: tmp,
        stdin: '',
        env: { ...noKeys, OPENAI_API_KEY: 'sk-test' },
      },
    );
    expect(gateway.code).toBe(2);
    expect(gateway.stderr).toContain('is a gateway id');
  });

  it('--context-window sets the window of an unknown model, and compaction keeps the requests inside it', async () => {
    server.reset();
    const before = server.requests.length;
    server.enqueue(
      { type: 'reply', text: 'noted' },
      { type: 'reply', text: 'SUMMARY: a long paste came first.' },
      { type: 'reply', text: 'fits now' },
    );
    const file = path.join(tmp, 'window.jsonl');
    const r = await runPanto(
      [
        'chat',
        '--base-url',
        server.baseUrl('openai-chat'),
        '--model',
        'local-8k',
        '--context-window',
        '4096',
        '--no-context-files',
        '--session',
        file,
        '--max-turns',
        '1',
      ],
      // The seven standard tools' declarations take ~1,350 tokens of the window.
      { cwd: tmp, stdin: `${'alpha '.repeat(600)}\n${'word '.repeat(1200)}\n/session\n`, env: noKeys },
    );
    expect(r.stderr).toContain('4096-token window');
    const sent = server.requests.slice(before);
    expect(sent).toHaveLength(3);
    expect(JSON.stringify(sent[1]?.body)).toContain('Summarize this conversation');
    expect(JSON.stringify(sent[1]?.body)).toContain('alpha alpha');
    expect(JSON.stringify(sent[2]?.body)).toContain('SUMMARY: a long paste came first.');
    expect(JSON.stringify(sent[2]?.body)).not.toContain('alpha alpha');
    expect(r.stdout).toContain('fits now');
    // The answer's budget fits beside the prompt: a quarter of the window.
    server.enqueue({ type: 'reply', text: 'ok' });
    await runPanto(
      [
        'chat',
        '--provider',
        'anthropic',
        '--base-url',
        server.baseUrl('anthropic-messages'),
        '--model',
        'local-claude-like',
        '--context-window',
        '8192',
        '--no-context-files',
      ],
      { cwd: tmp, stdin: 'hi\n', env: noKeys },
    );
    expect(server.requests.at(-1)?.body.max_tokens).toBe(2048);
    const bad = await runPanto(
      ['chat', '--base-url', server.baseUrl('openai-chat'), '--context-window', '8k'],
      {
        cwd: tmp,
        stdin: '',
        env: noKeys,
      },
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--context-window expects a positive integer, got '8k'");
  });
});

describe('panto chat: context files', () => {
  it('AGENTS.md and CLAUDE.md from the repository root down to the workspace join the system prompt', async () => {
    const repo = path.join(tmp, 'repo');
    const sub = path.join(repo, 'packages', 'app');
    await mkdir(path.join(repo, '.git'), { recursive: true });
    await mkdir(sub, { recursive: true });
    await writeFile(path.join(repo, 'AGENTS.md'), 'ROOT RULE: use tabs.\n');
    await writeFile(path.join(sub, 'CLAUDE.md'), 'APP RULE: run the app tests.\n');
    await writeFile(path.join(path.dirname(repo), 'AGENTS.md'), 'OUTSIDE THE REPO\n');
    server.reset();
    const before = server.requests.length;
    server.enqueue({ type: 'reply', text: 'ok' }, { type: 'reply', text: 'ok' });
    const args = [
      'chat',
      '--base-url',
      server.baseUrl('openai-chat'),
      '--model',
      'gpt-4o',
      '--system',
      'Be brief.',
    ];
    const r = await runPanto([...args, '--workspace', sub, '--session', path.join(tmp, 'ctx1.jsonl')], {
      cwd: sub,
      stdin: 'hi\n',
      env: noKeys,
    });
    expect(r.stderr).toContain('context: ');
    const system = textOf(messagesOf(before)[0]);
    expect(system.startsWith('Be brief.')).toBe(true);
    expect(system.indexOf('ROOT RULE')).toBeGreaterThan(0);
    expect(system.indexOf('APP RULE')).toBeGreaterThan(system.indexOf('ROOT RULE'));
    expect(system).toContain(path.join(repo, 'AGENTS.md'));
    expect(system).not.toContain('OUTSIDE THE REPO');

    await runPanto(
      [...args, '--workspace', sub, '--no-context-files', '--session', path.join(tmp, 'ctx2.jsonl')],
      { cwd: sub, stdin: 'hi\n', env: noKeys },
    );
    // Without context files: the --system text, then where the agent runs and its tools, nothing else.
    const plain = textOf(messagesOf(before + 1)[0]);
    expect(plain.startsWith('Be brief.\n\n# Environment\n\nWorking directory: ')).toBe(true);
    // One line per tool: the first sentence of its description.
    expect(plain).toContain('\n# Tools\n\n- bash: ');
    expect(plain).toContain('\n- read: Read a file in the workspace.\n');
    expect(plain).not.toContain('RULE');
  });
});

describe('panto chat: resuming', () => {
  it('a note shown once is not repeated on every resume', async () => {
    server.reset();
    server.enqueue({ type: 'reply', text: 'one' }, { type: 'reply', text: 'two' });
    const file = path.join(tmp, 'notes.jsonl');
    const args = [
      'chat',
      '--base-url',
      server.baseUrl('openai-chat'),
      '--model',
      'my-llm',
      '--no-context-files',
    ];
    const first = await runPanto([...args, '--session', file], { cwd: tmp, stdin: 'hi\n', env: noKeys });
    expect(first.stderr).toContain("note: model 'my-llm' is not in the catalog");
    const again = await runPanto([...args, '--resume', file], { cwd: tmp, stdin: 'again\n', env: noKeys });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('two');
    expect(again.stderr).toContain('(resumed, 2 messages)');
    expect(again.stderr).not.toContain('is not in the catalog');
  });
});

describe('panto session', () => {
  it('marks aborted and failed answers and the tool calls that never ran', async () => {
    const file = path.join(tmp, 'aborted.jsonl');
    const log = await SessionLog.create(file, { model: 'gpt-4o' });
    log.appendMessage({ role: 'user', content: [{ type: 'text', text: 'look at a.png' }] });
    log.appendMessage({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Let me' },
        { type: 'tool_call', id: 'c1', name: 'read', input: { path: 'a.png' } },
      ],
      stopReason: 'aborted',
    });
    log.appendMessage({
      role: 'tool',
      results: [
        {
          type: 'tool_result',
          toolUseId: 'c1',
          toolName: 'read',
          isError: true,
          parts: [{ type: 'text', text: 'Tool call cancelled before it finished; no result is available.' }],
        },
      ],
    });
    log.appendMessage({ role: 'assistant', content: [], stopReason: 'error', errorMessage: 'overloaded' });
    log.close();
    const r = await runPanto(['session', file]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('[assistant — aborted by the user; not sent to the model again]\nLet me');
    expect(r.stdout).toContain('[tool aborted read(path="a.png")]');
    expect(r.stdout).toContain('[assistant — error: overloaded; not sent to the model again]');
  });

  it('a missing file names the file, with no stack trace', async () => {
    const r = await runPanto(['session', 'no-such-session.jsonl'], { cwd: tmp });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('panto: cannot open no-such-session.jsonl: no such file or directory\n');
  });
});

describe('output into a closed pipe', () => {
  it('panto session F | head -3 and panto tool … | head -1 end quietly', async () => {
    const file = path.join(tmp, 'long.jsonl');
    const log = await SessionLog.create(file, { model: 'gpt-4o' });
    for (let i = 0; i < 400; i++) {
      log.appendMessage({
        role: 'user',
        content: [{ type: 'text', text: `message ${i} ${'z'.repeat(200)}` }],
      });
      log.appendMessage({
        role: 'assistant',
        content: [{ type: 'text', text: `answer ${i}` }],
        stopReason: 'end',
      });
    }
    log.close();
    const node = JSON.stringify(process.execPath);
    const bin = JSON.stringify(pantoBin);
    const session = await runShell('bash', [
      '-o',
      'pipefail',
      '-c',
      `${node} ${bin} session ${JSON.stringify(file)} | head -3`,
    ]);
    expect(session.stderr).toBe('');
    expect(session.code).toBe(0);
    expect(session.stdout.split('\n')).toHaveLength(4);
    const workspace = path.join(repoRoot, 'examples', 'workspace');
    const tool = await runShell('bash', [
      '-o',
      'pipefail',
      '-c',
      `${node} ${bin} tool read '{"path":"photo.jpg"}' --workspace ${JSON.stringify(workspace)} --as anthropic --full | head -1`,
    ]);
    expect(tool.stderr).toBe('');
    expect(tool.code).toBe(0);
    expect(tool.stdout).toMatch(/^read: ok in [\d.]+ ms\n$/);
  });
});

describe('panto session: lazy transcript, eager --entries', () => {
  it('a damaged line off the current branch: the transcript prints; --entries fails on it, typed, with its line', async () => {
    const file = path.join(tmp, 'damaged-branch.jsonl');
    const say = (id: string, parentId: string | null, text: string) =>
      JSON.stringify({
        type: 'message',
        id,
        parentId,
        timestamp: 't',
        message: { role: 'user', content: [{ type: 'text', text }] },
      });
    await writeFile(
      file,
      [
        JSON.stringify({ type: 'session', version: 1, id: 'lazy', created: 't' }),
        say('a', null, 'hi'),
        say('b', 'a', 'old branch').slice(0, 90), // cut short, its leading fields intact
        say('c', 'a', 'again'),
        // The word "compaction" as a value: the probe takes the lazy index path (a file without it is parsed in one
        // pass, which reports the damaged line at once).
        JSON.stringify({
          type: 'custom',
          id: 'd',
          parentId: 'c',
          timestamp: 't',
          customType: 'note',
          data: 'compaction',
        }),
        '',
      ].join('\n'),
    );
    const transcript = await runPanto(['session', file]);
    expect(transcript.code).toBe(0);
    expect(transcript.stdout).toContain('2 messages');
    expect(transcript.stdout).toContain('again');
    const entries = await runPanto(['session', file, '--entries']);
    expect(entries.code).toBe(1);
    expect(entries.stderr).toContain(`${file}:3: not valid JSON`);
    expect(entries.stderr).toContain('ERR_SESSION_CORRUPT');
  });
});
