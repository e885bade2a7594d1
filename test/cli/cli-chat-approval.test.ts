// `panto chat` and calls that need approval: the decision logic (--yes, --allow, always), how a call is shown, and
// end to end without a terminal (declined unless a flag allows it; the model reads why). The interactive prompt is
// driven in a real terminal by test/tty/chat.tty.ts.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  allowedByFlag,
  ChatApprover,
  changeSummary,
  describeCall,
  parseAnswer,
} from '../../src/cli/chat/approval-prompt.js';
import type { ToolCallBlock } from '../../src/conversation.js';
import type { ToolDecl } from '../../src/tool.js';
import type { ApprovalInfo } from '../../src/tools/approval.js';
import { type FakeProviderServer, startFakeProviderServer } from '../helpers/fake-provider-server.js';
import { runPanto } from './run-cli.js';

const decl = (name: string, capabilities?: string[]): ToolDecl => ({
  name,
  description: 'd',
  inputSchema: { type: 'object' },
  needsApproval: true,
  ...(capabilities ? { capabilities } : {}),
});
const call = (name: string, input: Record<string, unknown>): ToolCallBlock => ({
  type: 'tool_call',
  id: `c-${name}`,
  name,
  input,
});
const info = (tool: ToolDecl): ApprovalInfo => ({
  tool,
  index: 0,
  count: 1,
  signal: new AbortController().signal,
});

describe('deciding on a call', () => {
  it('--allow covers a tool by name, or by every capability it declares', () => {
    const allow = new Set(['exec', 'write_file', 'deploy']);
    expect(allowedByFlag(decl('bash', ['exec']), allow)).toBe(true);
    expect(allowedByFlag(decl('sync', ['exec', 'fetch']), allow)).toBe(false);
    expect(allowedByFlag(decl('deploy'), allow)).toBe(true);
    expect(allowedByFlag(decl('other'), allow)).toBe(false);
  });

  it('reads y / a / n with a reason; anything else, or nothing, declines', () => {
    expect(parseAnswer('y')).toEqual({ kind: 'yes' });
    expect(parseAnswer(' YES ')).toEqual({ kind: 'yes' });
    expect(parseAnswer('a')).toEqual({ kind: 'always' });
    expect(parseAnswer('n')).toEqual({ kind: 'no' });
    expect(parseAnswer('')).toEqual({ kind: 'no' });
    expect(parseAnswer('n: use the staging branch')).toEqual({
      kind: 'no',
      reason: 'use the staging branch',
    });
    expect(parseAnswer('no, not now')).toEqual({ kind: 'no', reason: 'not now' });
    expect(parseAnswer('please do not')).toEqual({ kind: 'no', reason: 'please do not' });
  });

  it('asks on a terminal, remembers "always" for the tool, declines without a terminal', async () => {
    const shown: string[] = [];
    const answers = ['n: too wide', 'a'];
    const asked: string[] = [];
    const approver = new ChatApprover({
      allow: new Set(),
      yes: false,
      interactive: true,
      ask: async (q) => {
        asked.push(q);
        return answers.shift() ?? null;
      },
      say: (t) => shown.push(t),
      workspaceRoot: os.tmpdir(),
    });
    const bash = decl('bash', ['exec']);
    expect(await approver.approve(call('bash', { command: 'rm -rf build' }), info(bash))).toEqual({
      approved: false,
      reason: 'too wide',
    });
    expect(await approver.approve(call('bash', { command: 'make' }), info(bash))).toBe(true);
    expect(await approver.approve(call('bash', { command: 'make test' }), info(bash))).toBe(true);
    expect(asked).toHaveLength(2);
    expect(shown).toContain('approval needed: bash (may exec)');
    expect(shown).toContain('  $ rm -rf build');

    const piped = new ChatApprover({
      allow: new Set(),
      yes: false,
      interactive: false,
      ask: async () => 'y',
      say: () => {},
      workspaceRoot: os.tmpdir(),
    });
    expect(await piped.approve(call('bash', { command: 'x' }), info(bash))).toEqual({
      approved: false,
      reason:
        "'bash' needs approval and there is no terminal to ask (allow it with --allow bash or --allow exec, or --yes)",
    });
  });

  it('shows a command line, an argv, a write with a change summary, an edit, or the arguments (controls visible)', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'panto-approval-cli-'));
    await writeFile(path.join(dir, 'notes.txt'), 'a\nb\nc\n');
    const w = decl('write', ['write_file']);
    expect(
      await describeCall(call('run', { argv: ['git', 'commit', '-m', "it's done"] }), decl('run'), dir),
    ).toEqual(['approval needed: run', `  $ git commit -m 'it'\\''s done'`]);
    expect(await describeCall(call('write', { path: 'notes.txt', content: 'a\nB\nc\nd\n' }), w, dir)).toEqual(
      ['approval needed: write (may write_file)', '  write notes.txt: +2 -1 line(s) (3 -> 4)'],
    );
    expect(await describeCall(call('write', { path: 'new.txt', content: 'x\ny' }), w, dir)).toEqual([
      'approval needed: write (may write_file)',
      '  write new.txt: new file, 2 line(s), 3 bytes',
    ]);
    expect(
      await describeCall(
        call('edit', { path: 'notes.txt', old_string: 'a\nb', new_string: 'z' }),
        decl('edit'),
        dir,
      ),
    ).toEqual(['approval needed: edit', '  edit notes.txt: replaces 2 line(s) with 1']);
    expect(
      await describeCall(call('bash', { command: 'echo \u001b]52;c;x\u0007' }), decl('bash'), dir),
    ).toEqual(['approval needed: bash', '  $ echo ^[]52;c;x^G']);
    expect(await changeSummary(path.join(dir, 'notes.txt'), 'd\n', true)).toBe('appends 1 line(s) to 3');
    await rm(dir, { recursive: true, force: true });
  });
});

describe('panto chat without a terminal: calls that need approval', () => {
  let server: FakeProviderServer;
  let tmp: string;
  let tools: string;
  beforeAll(async () => {
    server = await startFakeProviderServer();
    tmp = await mkdtemp(path.join(os.tmpdir(), 'panto-chat-approval-'));
    tools = path.join(tmp, 'tools');
    await import('node:fs/promises').then((f) => f.mkdir(tools));
    await writeFile(
      path.join(tools, 'run.lua'),
      `return { name = "run", description = "run a node script", capabilities = { "exec" },
        parameters = { type = "object", properties = { code = { type = "string" } }, required = { "code" } },
        handler = function(args)
          local r, err = panto.exec({ ${JSON.stringify(process.execPath)}, "-e", args.code })
          if not r then return nil, err end
          return "ran: " .. r.stdout
        end }`,
    );
  });
  afterAll(async () => {
    await server.close();
    await rm(tmp, { recursive: true, force: true });
  });

  const chat = async (flags: string[], name: string) => {
    server.enqueue(
      {
        type: 'reply',
        toolCalls: [{ id: 'call_r', name: 'run', args: { code: 'process.stdout.write("hi")' } }],
      },
      { type: 'reply', text: 'done' },
    );
    const before = server.requests.length;
    const sessionFile = path.join(tmp, `${name}.jsonl`);
    const r = await runPanto(
      [
        'chat',
        '--base-url',
        server.baseUrl('openai-chat'),
        '--model',
        'gpt-4o',
        '--workspace',
        tmp,
        '--no-context-files',
        '--tools',
        tools,
        '--session',
        sessionFile,
        ...flags,
      ],
      {
        cwd: tmp,
        stdin: 'run it\n',
        env: { ANTHROPIC_API_KEY: undefined, OPENAI_API_KEY: undefined, GEMINI_API_KEY: undefined },
      },
    );
    expect(r.code).toBe(0);
    const second = server.requests[before + 1]?.body.messages as Array<{ role: string; content: unknown }>;
    const toolMsg = second.find((m) => m.role === 'tool');
    return { toolText: String(toolMsg?.content), log: await readFile(sessionFile, 'utf8') };
  };

  it('is declined, saying how to allow it; the decision is in the session', async () => {
    const r = await chat([], 'declined');
    expect(r.toolText).toContain(
      "declined by the user: 'run' needs approval and there is no terminal to ask (allow it with --allow run or --allow exec, or --yes)",
    );
    expect(r.log).toContain('"approval":{"approved":false');
  });

  it('runs with --allow exec, --allow run, or --yes', async () => {
    for (const [flags, name] of [
      [['--allow', 'exec'], 'allow-cap'],
      [['--allow', 'fetch,run'], 'allow-name'],
      [['--yes'], 'yes'],
    ] as const) {
      const r = await chat([...flags], name);
      expect([name, r.toolText]).toEqual([name, 'ran: hi']);
      expect(r.log).toContain('"approval":{"approved":true}');
    }
  });
});
