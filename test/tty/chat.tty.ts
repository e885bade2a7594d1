/**
 * `panto chat` in a real terminal (tmux, 120x40), against the loopback provider server: what a day's work looks like.
 * A tool call on an image after a stream cut, the answer as Markdown, steering and Esc (the queued message comes back
 * to the editor), Ctrl-C, /model, --continue going back to the same server and model; the input editor (a pasted block
 * is one message, a long one a placeholder; Alt+Enter and \ + Enter newlines; history kept between runs; Tab); inline
 * images as kitty escapes on a terminal that says it is kitty (read from the raw output) and a summary line in tmux;
 * -p with --output json; a hostile answer.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pantoBin, repoRoot } from '../cli/run-cli.js';
import { type FakeProviderServer, startFakeProviderServer } from '../helpers/fake-provider-server.js';
import { haveTmux, stopTmuxServer, TmuxPane } from './tmux.js';

const examples = path.join(repoRoot, 'examples', 'workspace');
let server: FakeProviderServer;
let tmp: string;
/** A workspace of our own (sessions are written under it). */
let ws: string;
/** HOME of the chats: the input history lives under it. */
let home: string;

beforeAll(async () => {
  if (!haveTmux()) throw new Error('tmux is required for the terminal tests (apt-get install tmux)');
  if (!existsSync(pantoBin)) throw new Error(`${pantoBin} is missing: run 'npm run build:ts' first`);
  server = await startFakeProviderServer();
  tmp = await mkdtemp(path.join(os.tmpdir(), 'panto-tty-'));
  ws = path.join(tmp, 'ws');
  home = path.join(tmp, 'home');
  await mkdir(ws);
  await mkdir(home);
  for (const f of ['photo.jpg', 'chart.png']) await copyFile(path.join(examples, f), path.join(ws, f));
});
afterAll(async () => {
  stopTmuxServer();
  await server?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

const q = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;

interface PantoRun {
  /** Variables set (a value) or removed (undefined) for the run. */
  env?: Record<string, string | undefined>;
  /** Leave out --base-url (a resumed session knows its server). */
  noBaseUrl?: boolean;
}

/** `panto chat …` in a pane; its exit code lands in `codeFile`. */
function startChat(name: string, args: string[], codeFile: string, run: PantoRun = {}): TmuxPane {
  const env: Record<string, string | undefined> = {
    ANTHROPIC_API_KEY: undefined,
    OPENAI_API_KEY: undefined,
    GEMINI_API_KEY: undefined,
    GOOGLE_API_KEY: undefined,
    PANTO_CONFIG: undefined,
    XDG_STATE_HOME: undefined,
    HOME: home,
    ...run.env,
  };
  // env takes its -u options before the assignments.
  const entries = Object.entries(env);
  const envArgs = [
    ...entries.filter(([, v]) => v === undefined).map(([k]) => `-u ${k}`),
    ...entries.filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${q(v as string)}`),
  ].join(' ');
  const base = run.noBaseUrl ? [] : ['--base-url', server.baseUrl('openai-chat')];
  const command =
    `cd ${q(ws)} && env ${envArgs} ${q(process.execPath)} ${q(pantoBin)} chat ${[...base, '--no-context-files', ...args].map(q).join(' ')}; ` +
    `echo $? > ${q(codeFile)}`;
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
  const deadline = Date.now() + 15_000;
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
/** The text of the last user message of the last request. */
const lastUser = () =>
  text(
    ((server.requests.at(-1)?.body.messages ?? []) as ChatMessage[]).filter((m) => m.role === 'user').at(-1),
  );

describe('panto chat in a terminal', () => {
  it('a day of work: image tool call after a cut, Markdown, Esc with a queued message, Ctrl-C, /model, --continue', async () => {
    const codeFile = path.join(tmp, 'code1');
    const raw = path.join(tmp, 'raw1');
    const before = server.requests.length;
    server.enqueue(
      { type: 'reply', text: 'Half an answ', cut: 2 },
      {
        type: 'reply',
        text: 'Reading it.',
        toolCalls: [{ id: 'call_1', name: 'read', args: { path: 'photo.jpg' } }],
      },
      { type: 'reply', text: '**Green hills** under a blue sky.\n\n- one\n- two' },
      { type: 'stall', text: 'Once upon a time' },
      { type: 'reply', text: 'Here is the cat version.' },
    );
    const pane = startChat('chat1', ['--model', 'gpt-4o'], codeFile);
    pane.recordRaw(raw);
    try {
      await pane.waitFor('type /help for help');
      await pane.waitFor(/^> $/m);
      // The footer under the editor: model, context use, cost.
      await pane.waitFor(/gpt-4o · context ~\d+\/128,000 \(\d+%\)/);

      // 1. A tool call on an image: the call, the upright sizes of what the model got, the answer as Markdown.
      pane.type('What is in photo.jpg?');
      pane.keys('Enter');
      await pane.waitFor('Green hills under a blue sky.');
      let screen = pane.screen();
      expect(screen).toContain('> What is in photo.jpg?');
      // The first stream was cut after some text: that text is erased and the answer restarts.
      expect(screen).toMatch(/\[the stream was cut \(.+\); asking again in \d\.\d s; the answer restarts\]/);
      expect(screen).not.toContain('Half an answ');
      expect(screen).toContain('[tool] read(path="photo.jpg")');
      expect(screen).toContain('image/jpeg 2000x1500');
      expect(screen).toContain('2400x1800 upright');
      expect(screen).not.toContain('**Green');
      expect(screen).toMatch(/^• one$/m);
      // gpt-4o list price: 100 in + 20 out = $0.00045 per answer.
      expect(screen).toContain('[tokens: 100 in · 20 out · $0.0004 | session: 200 in · 40 out · $0.0009]');
      // In tmux the picture is a summary line: no graphics escapes were written.
      expect(await readFile(raw, 'latin1')).not.toContain('\x1b_G');

      // 2. Typing while an answer streams: the editor stays, the message is queued, never mixed into the answer.
      pane.type('Tell me a story.');
      pane.keys('Enter');
      await pane.waitFor('Once upon a time');
      pane.type('make it about a cat');
      screen = pane.screen();
      expect(screen).not.toContain('Once upon a timemake');
      expect(screen).toMatch(/^> make it about a cat$/m);
      pane.keys('Enter');
      await pane.waitFor('[queued] make it about a cat');
      // /session runs at once while the turn streams.
      pane.type('/session');
      pane.keys('Enter');
      await pane.waitFor('session:  ');

      // 3. Esc stops the turn; the queued message was not delivered: it comes back to the editor, and Enter sends it.
      const disconnects = server.clientDisconnects;
      pane.keys('Escape');
      await pane.waitFor('[stopping the turn — Ctrl-C again exits]');
      await pane.waitFor('[1 queued message was not sent; it is back in the editor]');
      await until(() => server.clientDisconnects > disconnects, 'the server to see the request closed');
      await pane.waitFor(/^> make it about a cat$/m);
      pane.keys('Enter');
      await pane.waitFor('Here is the cat version.');
      expect(lastUser()).toBe('make it about a cat');

      // 4. An unknown command is an error, not a prompt; Ctrl-C clears a half-typed line; /model switches.
      const sent = server.requests.length;
      pane.type('/modle');
      pane.keys('Enter');
      await pane.waitFor("unknown command '/modle' (did you mean /model?)");
      expect(server.requests.length).toBe(sent);
      pane.type('draft that I drop');
      pane.keys('C-c');
      pane.type('/model gpt-4.1');
      pane.keys('Enter');
      await pane.waitFor('model: gpt-4.1 via openai-chat (was gpt-4o); recorded in the session');

      // 5. Ctrl-C at an empty prompt exits with 0.
      pane.keys('C-c');
      expect(await exitCode(codeFile)).toBe(0);
      await pane.waitFor('session saved: ');
    } finally {
      pane.kill();
    }
    expect(server.requests.length - before).toBe(5);

    // 6. --continue, no --base-url, no --model: the same server and the model /model chose; the transcript is shown.
    server.enqueue({ type: 'reply', thinking: 'Pondering the hills.', text: 'Still green hills.' });
    const codeFile2 = path.join(tmp, 'code2');
    const resumed = startChat('chat2', ['--continue'], codeFile2, { noBaseUrl: true });
    try {
      await resumed.waitFor(
        /panto chat: gpt-4\.1 via openai-chat at http:\/\/127\.0\.0\.1:\d+\/v1; session .*\(resumed, \d+ messages\)/,
      );
      await resumed.waitFor('── the conversation so far (last messages) ──');
      expect(resumed.screen()).toContain('you: make it about a cat');
      await resumed.waitFor(/^> $/m);
      resumed.type('And the photo again?');
      resumed.keys('Enter');
      await resumed.waitFor('Still green hills.');
      expect(server.requests.at(-1)?.model).toBe('gpt-4.1');
      const last = server.requests.at(-1)?.body.messages as ChatMessage[];
      expect(last.some((m) => text(m).includes('What is in photo.jpg?'))).toBe(true);
      expect(last.some((m) => text(m).includes('Here is the cat version.'))).toBe(true);
      // Thinking streamed dimmed, then folded to one line once the answer started; /thinking prints it.
      const screen = resumed.screen();
      expect(screen).toContain('[thought for 20 characters; /thinking shows it]');
      expect(screen).not.toContain('Pondering the hills.');
      resumed.type('/thinking');
      resumed.keys('Enter');
      await resumed.waitFor('Pondering the hills.');
      resumed.keys('C-d');
      expect(await exitCode(codeFile2)).toBe(0);
    } finally {
      resumed.kill();
    }
  });

  it('the input editor: a paste is one message (a long one a placeholder), Alt+Enter and \\ + Enter, history, Tab', async () => {
    const codeFile = path.join(tmp, 'code-input');
    server.enqueue(
      { type: 'reply', text: 'got the paste' },
      { type: 'reply', text: 'got the long paste' },
      { type: 'reply', text: 'got two lines' },
      { type: 'reply', text: 'got the backslash' },
    );
    const pane = startChat('input', ['--model', 'gpt-4o'], codeFile);
    try {
      await pane.waitFor(/^> $/m);
      // A pasted block of three lines is shown in the editor and sent as one message on Enter.
      pane.paste('first pasted line\nsecond pasted line\nthird pasted line');
      await pane.waitFor(/^ {2}third pasted line$/m);
      expect(server.pending).toBe(4);
      pane.keys('Enter');
      await pane.waitFor('got the paste');
      expect(lastUser()).toBe('first pasted line\nsecond pasted line\nthird pasted line');

      // A long paste is a placeholder in the editor; the whole text is sent.
      const long = Array.from({ length: 30 }, (_, i) => `row ${i}`).join('\n');
      pane.type('look: ');
      pane.paste(long);
      await pane.waitFor(/^> look: \[paste #1: 30 lines, \d+ chars\]$/m);
      pane.keys('Enter');
      await pane.waitFor('got the long paste');
      expect(lastUser()).toBe(`look: ${long}`);

      // Alt+Enter and \ + Enter start a new line instead of sending.
      pane.type('line one');
      pane.keys('M-Enter');
      pane.type('line two');
      await pane.waitFor(/^ {2}line two$/m);
      pane.keys('Enter');
      await pane.waitFor('got two lines');
      expect(lastUser()).toBe('line one\nline two');
      pane.type('first\\');
      pane.keys('Enter');
      pane.type('second');
      pane.keys('Enter');
      await pane.waitFor('got the backslash');
      expect(lastUser()).toBe('first\nsecond');

      // Up recalls the last message; Tab completes @paths and commands.
      pane.keys('Up');
      await pane.waitFor(/^> first\n {2}second$/m);
      pane.keys('C-c');
      pane.type('see @pho');
      pane.keys('Tab');
      await pane.waitFor(/^> see @photo\.jpg$/m);
      pane.keys('C-u');
      pane.type('/mod');
      pane.keys('Tab');
      await pane.waitFor(/^> \/model $/m);
      pane.keys('C-u', 'C-d');
      expect(await exitCode(codeFile)).toBe(0);
    } finally {
      pane.kill();
    }

    // The history is kept between runs: a new chat recalls the last message with Up.
    const codeFile2 = path.join(tmp, 'code-input2');
    const again = startChat('input2', ['--model', 'gpt-4o'], codeFile2);
    try {
      await again.waitFor(/^> $/m);
      again.keys('Up');
      await again.waitFor(/^> first\n {2}second$/m);
      again.keys('C-c', 'C-d');
      expect(await exitCode(codeFile2)).toBe(0);
    } finally {
      again.kill();
    }
  });

  it('/model without a name: a picker of the config file models; the choice is the next model', async () => {
    const config = path.join(tmp, 'config.json');
    await writeFile(
      config,
      JSON.stringify({ models: { 'local-a': { contextWindow: 8192 }, 'local-b': { contextWindow: 32768 } } }),
    );
    server.enqueue({ type: 'reply', text: 'answered by b' });
    const codeFile = path.join(tmp, 'code-model');
    const pane = startChat('model', ['--model', 'local-a'], codeFile, { env: { PANTO_CONFIG: config } });
    try {
      await pane.waitFor(/^> $/m);
      pane.type('/model');
      pane.keys('Enter');
      await pane.waitFor('model: local-a via openai-chat; switch to:');
      await pane.waitFor(/> +1\. local-a \(current\)/);
      pane.keys('Down', 'Enter');
      await pane.waitFor('model: local-b via openai-chat (was local-a); recorded in the session');
      pane.type('hi');
      pane.keys('Enter');
      await pane.waitFor('answered by b');
      expect(server.requests.at(-1)?.model).toBe('local-b');
      await pane.waitFor(/local-b · context ~\d+\/32,768/);
      pane.keys('C-d');
      expect(await exitCode(codeFile)).toBe(0);
    } finally {
      pane.kill();
    }
  });

  it('inline images: kitty graphics escapes on a terminal that says it is kitty (the raw output holds the PNG)', async () => {
    const codeFile = path.join(tmp, 'code-kitty');
    const raw = path.join(tmp, 'raw-kitty');
    server.enqueue(
      { type: 'reply', toolCalls: [{ id: 'c1', name: 'read', args: { path: 'chart.png' } }] },
      { type: 'reply', text: 'A bar chart.' },
    );
    // Outside tmux as far as panto can tell (TMUX unset), in a kitty terminal (TERM and KITTY_WINDOW_ID as kitty sets them).
    const pane = startChat('kitty', ['--model', 'gpt-4o'], codeFile, {
      env: { TMUX: undefined, TERM: 'xterm-kitty', KITTY_WINDOW_ID: '1' },
    });
    pane.recordRaw(raw);
    try {
      await pane.waitFor(/^> $/m);
      pane.type('show me @chart.png');
      pane.keys('Enter');
      await pane.waitFor('A bar chart.');
      pane.keys('C-d');
      expect(await exitCode(codeFile)).toBe(0);
    } finally {
      pane.kill();
    }
    const out = await readFile(raw, 'latin1');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: parsing terminal escapes is the point
    const images = [...out.matchAll(/\x1b_Ga=T,f=100,q=2,c=(\d+),m=[01];/g)];
    // The attached picture (the user's) and the tool's: each drawn once.
    expect(images.length).toBe(2);
    const first = out.slice(out.indexOf('\x1b_Ga=T'));
    // biome-ignore lint/suspicious/noControlCharactersInRegex: parsing terminal escapes is the point
    const payload = [...first.matchAll(/\x1b_G[^;]*;([A-Za-z0-9+/=]*)\x1b\\/g)];
    const ends = payload.findIndex((m) => m[0].includes('m=0'));
    const png = Buffer.from(
      payload
        .slice(0, ends + 1)
        .map((m) => m[1])
        .join(''),
      'base64',
    );
    expect(png.subarray(1, 4).toString()).toBe('PNG');

    // panto image draws its result the same way (a JPEG converted to PNG for kitty); in tmux it prints the summary only.
    for (const [name, env, drawn] of [
      ['image-kitty', { TMUX: undefined, TERM: 'xterm-kitty', KITTY_WINDOW_ID: '1' }, true],
      ['image-tmux', {}, false],
    ] as const) {
      const file = path.join(tmp, `raw-${name}`);
      const code = path.join(tmp, `code-${name}`);
      const entries = Object.entries(env) as Array<[string, string | undefined]>;
      const envArgs = [
        ...entries.filter(([, v]) => v === undefined).map(([k]) => `-u ${k}`),
        ...entries.filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${q(String(v))}`),
      ].join(' ');
      // It starts once the raw output is being recorded (the test creates the go file after pipe-pane).
      const go = path.join(tmp, `go-${name}`);
      const command = `while [ ! -e ${q(go)} ]; do sleep 0.05; done; cd ${q(ws)} && env ${envArgs} ${q(process.execPath)} ${q(pantoBin)} image photo.jpg --max-dimension 400; echo $? > ${q(code)}`;
      const img = TmuxPane.start(name, `sh -c ${q(command)}`, { TERM: 'xterm-256color' });
      img.recordRaw(file);
      await writeFile(go, '');
      try {
        expect(await exitCode(code)).toBe(0);
        await img.waitFor('changes: ');
        expect((await readFile(file, 'latin1')).includes('\x1b_Ga=T,f=100')).toBe(drawn);
      } finally {
        img.kill();
      }
    }
  });

  it('--resume without a file: a picker of the workspace sessions, newest first', async () => {
    const codeFile = path.join(tmp, 'code-picker');
    server.enqueue({ type: 'reply', text: 'picked and answered' });
    const pane = startChat('picker', ['--resume'], codeFile, { noBaseUrl: true });
    try {
      await pane.waitFor('Resume which session? (newest first)');
      // The newest is the kitty chat (its first message), then earlier ones.
      await pane.waitFor(/> +1\. .*show me @chart\.png/);
      pane.keys('Down', 'Up', 'Enter');
      await pane.waitFor(/\(resumed, \d+ messages\)/);
      await pane.waitFor(/^> $/m);
      pane.type('and now?');
      pane.keys('Enter');
      await pane.waitFor('picked and answered');
      const sent = server.requests.at(-1)?.body.messages as ChatMessage[];
      expect(sent.some((m) => text(m).includes('show me @chart.png'))).toBe(true);
      pane.keys('C-d');
      expect(await exitCode(codeFile)).toBe(0);
    } finally {
      pane.kill();
    }
  });

  it('Ctrl-D and /exit while an answer streams: the turn stops, the chat exits, nothing is printed after', async () => {
    for (const [name, leave] of [
      ['ctrl-d', (p: TmuxPane) => p.keys('C-d')],
      [
        'exit',
        (p: TmuxPane) => {
          p.type('/exit');
          p.keys('Enter');
        },
      ],
    ] as const) {
      server.enqueue({ type: 'stall', text: `The answer that ${name} stops` });
      const codeFile = path.join(tmp, `code-${name}`);
      const pane = startChat(name, ['--model', 'gpt-4o'], codeFile);
      try {
        await pane.waitFor(/^> $/m);
        pane.type('go');
        pane.keys('Enter');
        await pane.waitFor(`The answer that ${name} stops`);
        leave(pane);
        expect(await exitCode(codeFile)).toBe(0);
        const screen = await pane.waitFor('session saved: ');
        // The answer line ends before the last lines, which are the chat's own, in order.
        const lines = screen.split('\n').filter((l) => l.trim() !== '');
        const answer = lines.findIndex((l) => l.includes(`The answer that ${name} stops`));
        const saved = lines.findIndex((l) => l.startsWith('session saved: '));
        expect(answer).toBeGreaterThanOrEqual(0);
        expect(saved).toBeGreaterThan(answer);
        expect(lines[answer]).toBe(`The answer that ${name} stops`);
      } finally {
        pane.kill();
      }
    }
  });

  it('-p with --output json in a terminal: one result object', async () => {
    server.enqueue({ type: 'reply', text: 'one-shot answer' });
    const codeFile = path.join(tmp, 'code-p');
    const pane = startChat('oneshot', ['--model', 'gpt-4o', '-p', 'just once', '--output', 'json'], codeFile);
    try {
      expect(await exitCode(codeFile)).toBe(0);
      const screen = await pane.waitFor('"type":"result"');
      const line = screen.split('\n').find((l) => l.startsWith('{"type":"result"')) ?? '';
      expect(JSON.parse(line)).toMatchObject({
        type: 'result',
        ok: true,
        text: 'one-shot answer',
        model: 'gpt-4o',
      });
      expect(lastUser()).toBe('just once');
    } finally {
      pane.kill();
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
      await pane.waitFor('approval needed: run (may exec)', { count: 2 });
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

  it('an edit then a bash on a scratch repo: each asked with what it does (the change, the command line)', async () => {
    const repo = path.join(tmp, 'scratch-repo');
    await mkdir(repo, { recursive: true });
    await writeFile(path.join(repo, 'app.txt'), 'line one\nsay hello\nline three\n');
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: repo });
    git('init', '-q');
    git('add', '.');
    git('commit', '-qm', 'start');
    server.enqueue(
      {
        type: 'reply',
        toolCalls: [
          {
            id: 'e1',
            name: 'edit',
            args: { path: 'app.txt', old_text: 'say hello', new_text: 'say goodbye' },
          },
        ],
      },
      { type: 'reply', toolCalls: [{ id: 'b1', name: 'bash', args: { command: 'git diff --stat' } }] },
      { type: 'reply', text: 'Edited and checked.' },
    );
    const codeFile = path.join(tmp, 'code-scratch');
    const before = server.requests.length;
    const pane = startChat('scratch', ['--model', 'gpt-4o', '--workspace', repo], codeFile);
    try {
      await pane.waitFor(/^> $/m);
      pane.type('change the greeting');
      pane.keys('Enter');
      const asked = await pane.waitFor("[a]lways for 'edit':");
      expect(asked).toContain('approval needed: edit (may write_file)');
      expect(asked).not.toContain('running edit…');
      expect(asked).toContain('  edit app.txt: 1 replacement(s), +1 -1 line(s)');
      expect(asked).toMatch(/ {2}@@ line 2 @@\n {2}-say hello\n {2}\+say goodbye/);
      pane.type('y');
      pane.keys('Enter');
      const bash = await pane.waitFor("[a]lways for 'bash':");
      expect(bash).toContain('approval needed: bash (may exec)');
      expect(bash).toContain('  $ git diff --stat');
      expect(await readFile(path.join(repo, 'app.txt'), 'utf8')).toBe('line one\nsay goodbye\nline three\n');
      pane.type('y');
      pane.keys('Enter');
      await pane.waitFor('Edited and checked.');
      const last = JSON.stringify(server.requests[before + 2]?.body.messages);
      expect(last).toContain('1 file changed, 1 insertion(+), 1 deletion(-)');
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
