/**
 * `panto chat` in a real terminal (tmux), against the loopback provider server: a tool call on an image, text typed
 * while an answer streams (queued, not echoed into it), Ctrl-C stopping a turn, /retry, an unknown command, /model,
 * Ctrl-C at the prompt exiting with 0, and resuming the saved session with the model /model chose.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pantoBin, repoRoot } from '../cli/run-cli.js';
import { type FakeProviderServer, startFakeProviderServer } from '../helpers/fake-provider-server.js';
import { haveTmux, stopTmuxServer, TmuxPane } from './tmux.js';

const workspace = path.join(repoRoot, 'examples', 'workspace');
let server: FakeProviderServer;
let tmp: string;

beforeAll(async () => {
  if (!haveTmux()) throw new Error('tmux is required for the terminal tests (apt-get install tmux)');
  if (!existsSync(pantoBin)) throw new Error(`${pantoBin} is missing: run 'npm run build:ts' first`);
  server = await startFakeProviderServer();
  tmp = await mkdtemp(path.join(os.tmpdir(), 'panto-tty-'));
});
afterAll(async () => {
  stopTmuxServer();
  await server?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

const q = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;

/** `panto chat …` in a pane; its exit code lands in `codeFile`. */
function startChat(name: string, args: string[], codeFile: string): TmuxPane {
  const command =
    `cd ${q(workspace)} && env -u ANTHROPIC_API_KEY -u OPENAI_API_KEY -u GEMINI_API_KEY -u GOOGLE_API_KEY ` +
    `${q(process.execPath)} ${q(pantoBin)} chat --base-url ${q(server.baseUrl('openai-chat'))} ` +
    `--workspace ${q(workspace)} --no-context-files ${args.map(q).join(' ')}; echo $? > ${q(codeFile)}`;
  return TmuxPane.start(name, `sh -c ${q(command)}`, { TERM: 'xterm-256color' });
}

async function exitCode(codeFile: string): Promise<number> {
  const deadline = Date.now() + 20_000;
  while (!existsSync(codeFile)) {
    if (Date.now() > deadline) throw new Error(`the chat did not exit (no ${codeFile})`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return Number((await readFile(codeFile, 'utf8')).trim());
}

async function until(test: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

type ChatMessage = { role: string; content: unknown };
const text = (m: ChatMessage | undefined) =>
  typeof m?.content === 'string'
    ? m.content
    : ((m?.content ?? []) as Array<{ text?: string }>).map((p) => p.text ?? '').join('');

describe('panto chat in a terminal', () => {
  it('a tool call on an image, queued typing, Ctrl-C, /retry, /model, exit 0, resume', async () => {
    const sessionFile = path.join(tmp, 'tty.jsonl');
    const codeFile = path.join(tmp, 'code1');
    const before = server.requests.length;
    server.enqueue(
      { type: 'reply', text: 'Half an answ', cut: 2 },
      {
        type: 'reply',
        text: 'Reading it.',
        toolCalls: [{ id: 'call_1', name: 'read', args: { path: 'photo.jpg' } }],
      },
      { type: 'reply', text: 'Green hills under a blue sky.' },
      { type: 'stall', text: 'Once upon a time' },
      { type: 'reply', text: 'Here is the cat version.' },
    );
    const pane = startChat('chat1', ['--model', 'gpt-4o', '--session', sessionFile], codeFile);
    try {
      await pane.waitFor('type /help for help');
      await pane.waitFor(/^> $/m);

      // 1. A tool call on an image: the call, the upright sizes of what the model got, the answer.
      pane.type('What is in photo.jpg?');
      pane.keys('Enter');
      await pane.waitFor('Green hills under a blue sky.');
      let screen = pane.screen();
      // The first stream was cut after some text: that text is erased and the answer restarts.
      expect(screen).toMatch(/\[the stream was cut \(.+\); asking again in \d\.\d s; the answer restarts\]/);
      expect(screen).not.toContain('Half an answ');
      expect(screen).toContain('[tool] read(path="photo.jpg")');
      expect(screen).toContain('image/jpeg 2000x1500');
      expect(screen).toContain('2400x1800 upright');
      // gpt-4o list price: 100 in + 20 out = $0.00045 per answer.
      expect(screen).toContain('[tokens: 100 in · 20 out · $0.0004 | session: 200 in · 40 out · $0.0009]');
      expect(screen).toContain('[tokens: 100 in · 20 out · $0.0004 | session: 100 in · 20 out · $0.0004]');

      // 2. Typing while an answer streams: queued, and its echo is not mixed into the answer.
      pane.type('Tell me a story.');
      pane.keys('Enter');
      await pane.waitFor('Once upon a time');
      pane.type('make it about a cat');
      screen = pane.screen();
      expect(screen).not.toContain('Once upon a timemake');
      pane.keys('Enter');
      await pane.waitFor('[queued] make it about a cat');
      // /session runs at once while the turn streams.
      pane.type('/session');
      pane.keys('Enter');
      await pane.waitFor(`session:  ${sessionFile}`);

      // 3. Ctrl-C stops the turn and returns to the prompt; the server saw the connection close.
      const disconnects = server.clientDisconnects;
      pane.keys('C-c');
      await pane.waitFor('[stopping the turn — Ctrl-C again exits]');
      await pane.waitFor('[stopped; the partial answer is kept');
      await until(() => server.clientDisconnects > disconnects, 'the server to see the request closed');

      // 4. /retry asks again; the queued message is delivered before that request.
      pane.type('/retry');
      pane.keys('Enter');
      await pane.waitFor('Here is the cat version.');
      const retried = server.requests.at(-1)?.body.messages as ChatMessage[];
      expect(text(retried.filter((m) => m.role === 'user').at(-1))).toBe('make it about a cat');

      // 5. An unknown command is an error, not a prompt; /model switches (and is what a resume goes on with).
      const sent = server.requests.length;
      pane.type('/modle');
      pane.keys('Enter');
      await pane.waitFor("unknown command '/modle' (did you mean /model?)");
      expect(server.requests.length).toBe(sent);
      // Ctrl-C on a half-typed line clears it (and does not exit): the next command is not glued to it.
      pane.type('draft that I drop');
      pane.keys('C-c');
      pane.type('/model gpt-4.1');
      pane.keys('Enter');
      await pane.waitFor('model: gpt-4.1 via openai-chat (was gpt-4o); recorded in the session');

      // 6. Ctrl-C at an empty prompt exits with 0.
      pane.keys('C-c');
      expect(await exitCode(codeFile)).toBe(0);
      await pane.waitFor(`session saved: ${sessionFile}`);
    } finally {
      pane.kill();
    }
    expect(server.requests.length - before).toBe(5);

    // 7. Resume (no --model): the conversation goes back to the provider through the model /model chose.
    server.enqueue({ type: 'reply', thinking: 'Pondering the hills.', text: 'Still green hills.' });
    const codeFile2 = path.join(tmp, 'code2');
    const resumed = startChat('chat2', ['--resume', sessionFile], codeFile2);
    try {
      await resumed.waitFor(/panto chat: gpt-4\.1 via openai-chat; session .*\(resumed, \d+ messages\)/);
      await resumed.waitFor(/^> $/m);
      resumed.type('And the photo again?');
      resumed.keys('Enter');
      await resumed.waitFor('Still green hills.');
      expect(server.requests.at(-1)?.model).toBe('gpt-4.1');
      const last = server.requests.at(-1)?.body.messages as ChatMessage[];
      expect(last.some((m) => text(m).includes('What is in photo.jpg?'))).toBe(true);
      expect(last.some((m) => text(m).includes('Here is the cat version.'))).toBe(true);
      // Thinking streamed dimmed, then folded to one line once the answer started; /thinking prints it.
      let screen = resumed.screen();
      expect(screen).toContain('[thought for 20 characters; /thinking shows it]');
      expect(screen).not.toContain('Pondering the hills.');
      resumed.type('/thinking');
      resumed.keys('Enter');
      screen = await resumed.waitFor('Pondering the hills.');
      resumed.keys('C-d');
      expect(await exitCode(codeFile2)).toBe(0);
    } finally {
      resumed.kill();
    }
  });

  it('a call that needs approval: asked on the terminal; n with a reason declines, a runs it and later calls', async () => {
    const tools = path.join(tmp, 'approval-tools');
    await mkdir(tools, { recursive: true });
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
    const script = (id: string) => ({
      type: 'reply' as const,
      toolCalls: [{ id, name: 'run', args: { code: `process.stdout.write("${id}")` } }],
    });
    server.enqueue(
      script('c1'),
      { type: 'reply', text: 'Fine, I left it.' },
      script('c2'),
      { type: 'reply', text: 'It ran.' },
      script('c3'),
      { type: 'reply', text: 'Ran again without asking.' },
    );
    const codeFile = path.join(tmp, 'code-approval');
    const before = server.requests.length;
    const pane = startChat(
      'approval',
      ['--model', 'gpt-4o', '--tools', tools, '--session', path.join(tmp, 'approval.jsonl')],
      codeFile,
    );
    try {
      await pane.waitFor(/^> $/m);
      pane.type('run c1');
      pane.keys('Enter');
      await pane.waitFor("allow? [y]es / [n]o (a reason may follow) / [a]lways for 'run':");
      expect(pane.screen()).toContain('approval needed: run (may exec)');
      pane.type('n: not on a Friday');
      pane.keys('Enter');
      await pane.waitFor('Fine, I left it.');
      const declined = server.requests[before + 1]?.body.messages as ChatMessage[];
      expect(JSON.stringify(declined)).toContain('declined by the user: not on a Friday');

      pane.type('run c2');
      pane.keys('Enter');
      await pane.waitFor(/for 'run': $/m);
      pane.type('a');
      pane.keys('Enter');
      await pane.waitFor('It ran.');
      expect(JSON.stringify(server.requests[before + 3]?.body.messages)).toContain('ran: c2');

      pane.type('run c3');
      pane.keys('Enter');
      await pane.waitFor('Ran again without asking.');
      expect(JSON.stringify(server.requests[before + 5]?.body.messages)).toContain('ran: c3');
      pane.keys('C-d');
      expect(await exitCode(codeFile)).toBe(0);
    } finally {
      pane.kill();
    }
  });

  it('a hostile answer cannot retitle the window, clear the screen, or fold away rows above its thinking', async () => {
    // The thinking is one visible character with 2000 combining marks (17 rows if each counted a column); the answer
    // sets the window title (OSC 2), clears the screen and homes the cursor (CSI 2J, CSI H).
    server.enqueue({
      type: 'reply',
      thinking: `a${'\u0301'.repeat(2000)}`,
      text: 'SAFE \x1b]2;pwned\x07\x1b[2J\x1b[HOWNED',
    });
    const codeFile = path.join(tmp, 'code-hostile');
    const pane = startChat(
      'hostile',
      ['--model', 'o4-mini', '--thinking', 'high', '--session', path.join(tmp, 'hostile.jsonl')],
      codeFile,
    );
    try {
      await pane.waitFor(/^> $/m);
      const titleBefore = pane.title();
      pane.type('hello there');
      pane.keys('Enter');
      const screen = await pane.waitFor('OWNED');
      expect(screen).toContain('SAFE ^[]2;pwned^G^[[2J^[[HOWNED');
      expect(screen).toMatch(/panto chat: o4-mini via openai-chat/);
      expect(screen).toContain('> hello there');
      expect(screen).toContain('[thought for 2001 characters; /thinking shows it]');
      expect(pane.title()).toBe(titleBefore);
      pane.keys('C-d');
      expect(await exitCode(codeFile)).toBe(0);
    } finally {
      pane.kill();
    }
  });
});
