import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FakeProviderServer } from '../helpers/fake-provider-server.js';
import { fakeChatFlags, NO_USER_CONFIG, repoRoot, runPanto, withFakeServer } from './run-cli.js';

const workspace = path.join(repoRoot, 'examples', 'workspace');
let server: FakeProviderServer;
let tmp: string;

withFakeServer('panto-oneshot-', (s, t) => {
  server = s;
  tmp = t;
});

const noKeys = NO_USER_CONFIG;

function oneShot(args: string[], stdin = '') {
  return runPanto(['chat', ...fakeChatFlags(server), '--workspace', workspace, ...args], {
    cwd: tmp,
    stdin,
    env: noKeys,
  });
}

describe('one prompt: panto chat -p / panto run', () => {
  it('-p: only the final answer on stdout, after a tool call; the rest of the chat is silent; exit 0', async () => {
    server.reset();
    server.enqueue(
      {
        type: 'reply',
        text: 'Let me look.',
        toolCalls: [{ id: 'c1', name: 'read', args: { path: 'README.txt' } }],
      },
      { type: 'reply', text: 'The README describes the **example** files.' },
    );
    const r = await runPanto(
      [
        'chat',
        '-p',
        'What is in the README?',
        ...fakeChatFlags(server),
        '--workspace',
        workspace,
        '--session',
        path.join(tmp, 'p.jsonl'),
      ],
      { cwd: tmp, env: noKeys },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('The README describes the **example** files.\n');
    expect(r.stderr).toBe('');
  });

  it('--output json: one object with the answer, the tool calls, usage and cost', async () => {
    server.reset();
    server.enqueue(
      { type: 'reply', toolCalls: [{ id: 'c1', name: 'read', args: { path: 'missing.txt' } }] },
      { type: 'reply', text: 'There is no such file.' },
    );
    const r = await runPanto(
      [
        'run',
        '--output',
        'json',
        ...fakeChatFlags(server),
        '--workspace',
        workspace,
        '--session',
        path.join(tmp, 'j.jsonl'),
        'read',
        'missing.txt',
      ],
      { cwd: tmp, env: noKeys },
    );
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(out).toMatchObject({
      type: 'result',
      ok: true,
      stopReason: 'end',
      text: 'There is no such file.',
      turns: 2,
      model: 'gpt-4o',
      session: path.join(tmp, 'j.jsonl'),
      toolCalls: [{ id: 'c1', name: 'read', input: { path: 'missing.txt' }, isError: true }],
      usage: { inputTokens: 200, outputTokens: 40, requests: 2 },
    });
    expect(out.cost).toBeCloseTo(0.0009, 6);
    expect(server.requests.at(-2)?.body.messages).toEqual(
      expect.arrayContaining([expect.objectContaining({ role: 'user', content: 'read missing.txt' })]),
    );
  });

  it('--output stream-json: one event per line, the result last', async () => {
    server.reset();
    server.enqueue(
      {
        type: 'reply',
        text: 'Reading.',
        toolCalls: [{ id: 'c1', name: 'read', args: { path: 'README.txt' } }],
      },
      { type: 'reply', text: 'Done reading.' },
    );
    const r = await oneShot(['-p', 'go', '--output', 'stream-json', '--session', path.join(tmp, 's.jsonl')]);
    expect(r.code).toBe(0);
    const events = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; [k: string]: unknown });
    expect(events[0]).toMatchObject({ type: 'start', model: 'gpt-4o', api: 'openai-chat' });
    const types = events.map((e) => e.type);
    expect(types).toContain('text_delta');
    expect(types.indexOf('tool_call')).toBeLessThan(types.indexOf('tool_result'));
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ name: 'read', isError: false });
    expect(types.filter((t) => t === 'turn_end')).toHaveLength(2);
    expect(events.at(-1)).toMatchObject({ type: 'result', ok: true, text: 'Done reading.' });
    expect(
      events
        .filter((e) => e.type === 'text_delta')
        .map((e) => e.text)
        .join(''),
    ).toBe('Reading.Done reading.');
  });

  it('stream-json carries tool progress and a cut stream asked again; --verbose shows the chat on stderr', async () => {
    const tools = path.join(tmp, 'tools');
    await mkdir(tools, { recursive: true });
    await writeFile(
      path.join(tools, 'steps.lua'),
      'return { name = "steps", description = "steps", handler = function() panto.progress("half way", 0.5) return "stepped" end }\n',
    );
    server.reset();
    server.enqueue(
      { type: 'reply', text: 'Half an answ', cut: 2 },
      { type: 'reply', toolCalls: [{ id: 'c1', name: 'steps', args: {} }] },
      { type: 'reply', text: 'all done' },
    );
    const r = await oneShot([
      '-p',
      'go',
      '--output',
      'stream-json',
      '--tools',
      tools,
      '--verbose',
      '--session',
      path.join(tmp, 'sp.jsonl'),
    ]);
    expect(r.code).toBe(0);
    const events = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; [k: string]: unknown });
    expect(events.find((e) => e.type === 'message_reset')).toMatchObject({ attempt: 1 });
    expect(events.find((e) => e.type === 'tool_progress')).toMatchObject({
      name: 'steps',
      update: { message: 'half way', progress: 0.5 },
    });
    expect(events.at(-1)).toMatchObject({ type: 'result', ok: true, text: 'all done' });
    // --verbose: the chat's own view on stderr; stdout stays JSON lines only.
    expect(r.stderr).toContain('[tool] steps()');
    expect(r.stderr).toMatch(/\[the stream was cut .*; the answer restarts\]/);
  });

  it('a failed run: nothing on stdout in text mode, the error on stderr, exit 1; json says ok: false', async () => {
    server.reset();
    server.enqueue({ type: 'http-error', status: 400, message: 'bad request: no such model' });
    const r = await oneShot(['-p', 'hi', '--session', path.join(tmp, 'f.jsonl')]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('no such model');
    server.enqueue({ type: 'http-error', status: 400, message: 'bad request: no such model' });
    const j = await oneShot(['-p', 'hi', '--output', 'json', '--session', path.join(tmp, 'f2.jsonl')]);
    expect(j.code).toBe(1);
    expect(JSON.parse(j.stdout)).toMatchObject({ type: 'result', ok: false, stopReason: 'error' });
  });

  it('the prompt from stdin (panto run with no words, or -p -)', async () => {
    server.reset();
    server.enqueue({ type: 'reply', text: 'from stdin' }, { type: 'reply', text: 'again' });
    const r = await runPanto(['run', ...fakeChatFlags(server), '--session', path.join(tmp, 'in.jsonl')], {
      cwd: tmp,
      stdin: 'a prompt\nover two lines\n',
      env: noKeys,
    });
    expect(r.stdout).toBe('from stdin\n');
    const sent = server.requests.at(-1)?.body.messages as Array<{ role: string; content: unknown }>;
    expect(sent.at(-1)?.content).toBe('a prompt\nover two lines\n');
    const dash = await oneShot(['-p', '-', '--session', path.join(tmp, 'in2.jsonl')], 'dash prompt');
    expect(dash.stdout).toBe('again\n');
  });

  it('usage errors: --output without a prompt, an unknown format, an empty prompt', async () => {
    const a = await oneShot(['--output', 'json'], '');
    expect(a.code).toBe(2);
    expect(a.stderr).toContain('--output applies to one prompt');
    const b = await oneShot(['-p', 'x', '--output', 'xml']);
    expect(b.code).toBe(2);
    expect(b.stderr).toContain("--output expects one of text, json, stream-json; got 'xml'");
    const c = await oneShot(['-p', '  ']);
    expect(c.code).toBe(2);
  });
});
