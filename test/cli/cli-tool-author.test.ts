/** The tool author's loop: panto tool --check, --watch, progress, -v, load errors, ARGS from a file or stdin. */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LuaToolSource } from '../../src/lua/index.js';
import { pantoBin, repoRoot, runPanto } from './run-cli.js';

let tmp: string;
let tools: string;

const TOOL = (name: string, body: string, params = '{ type = "object", properties = {} }') =>
  `return {\n  name = "${name}",\n  description = "${name} tool",\n  parameters = ${params},\n  handler = function(args)\n${body}\n  end,\n}\n`;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'panto-author-'));
  tools = path.join(tmp, 'tools');
  await mkdir(tools);
  await writeFile(
    path.join(tools, 'syntax.lua'),
    'return {\n  name = "syn",\n  handler = function() return "a" +\n  end,\n}\n',
  );
  await writeFile(
    path.join(tools, 'schema.lua'),
    TOOL(
      'typo',
      '    return "ok"',
      '{\n    type = "object",\n    properties = { n = { type = "integr" } },\n  }',
    ),
  );
  await writeFile(
    path.join(tools, 'steps.lua'),
    TOOL(
      'steps',
      '    panto.progress("half way", 0.5)\n    return "done " .. tostring(args.n)',
      '{ type = "object", properties = { n = { type = "integer" } } }',
    ),
  );
  await writeFile(
    path.join(tools, 'boom.lua'),
    `local function inner() error("kaboom") end\n${TOOL('boom', '    inner()')}`,
  );
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('panto tool --check DIR', () => {
  it('a load error of any kind is exit 1, each printed once with one position; a bad JSON Schema names the field and line', async () => {
    const r = await runPanto(['tool', '--check', tools]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`error: ${path.join(tools, 'syntax.lua')}:4: unexpected symbol near 'end'`);
    expect(r.stdout).toContain(
      `error: ${path.join(tools, 'schema.lua')}:6: tool 'typo': 'parameters' is not a valid JSON Schema: parameters.properties.n.type: must be one of "array", "boolean", "integer", "null", "number", "object", "string" (got "integr")`,
    );
    expect(r.stdout.split('unexpected symbol').length - 1).toBe(1);
    expect(r.stdout).not.toContain('syntax.lua:4: syntax.lua:4');
    expect(r.stdout).toContain('2 tools loaded from');
  });

  it('a good directory: exit 0 and each declaration as each provider receives it (--json)', async () => {
    const good = path.join(tmp, 'good');
    await mkdir(good);
    await writeFile(
      path.join(good, 'steps.lua'),
      TOOL('steps', '    return "x"', '{ type = "object", properties = { n = { type = "integer" } } }'),
    );
    const r = await runPanto(['tool', '--check', good, '--json']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.ok).toBe(true);
    expect(out.declarations.anthropic[0]).toMatchObject({
      name: 'steps',
      input_schema: { properties: { n: { type: 'integer' } } },
    });
    expect(out.declarations['openai-chat'][0]).toMatchObject({
      type: 'function',
      function: { name: 'steps' },
    });
    expect(out.declarations['openai-responses'][0]).toMatchObject({ type: 'function', name: 'steps' });
    expect(out.declarations.gemini[0].functionDeclarations[0]).toMatchObject({ name: 'steps' });
  });

  it('the schema error is a load error for hosts too: LuaToolSource refuses the tool', async () => {
    const source = await LuaToolSource.fromDir(tools);
    try {
      expect(source.list().map((d) => d.name)).not.toContain('typo');
      expect(source.loadErrors.find((e) => e.file.endsWith('schema.lua'))).toMatchObject({ line: 6 });
    } finally {
      await source.close();
    }
  });
});

describe('panto tool NAME', () => {
  it('load errors are warned once each (also with -v); a tool whose file did not load says so', async () => {
    for (const verbose of [[], ['-v']]) {
      const r = await runPanto(['tool', 'typo', '{}', '--tools', tools, ...verbose]);
      expect(r.code).toBe(1);
      expect(r.stderr.split("tool 'typo'").length - 1).toBe(1);
      expect(r.stderr.split('unexpected symbol').length - 1).toBe(1);
      expect(r.stdout).toContain('typo: ERROR: its file did not load');
      expect(r.stdout).not.toContain('Unknown tool');
    }
    const syn = await runPanto(['tool', 'syn', '--tools', tools]);
    expect(syn.stdout).toContain(
      'syn: ERROR: no tool of that name loaded; 2 tool files did not load and may define it:',
    );
  });

  it('progress is shown; -v shows the traceback of a failure', async () => {
    const r = await runPanto(['tool', 'steps', '{"n": 3}', '--tools', tools]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('[progress] 50% half way');
    expect(r.stdout).toContain('done 3');
    const v = await runPanto(['tool', 'boom', '--tools', tools, '-v']);
    expect(v.code).toBe(1);
    expect(v.stderr).toContain('stack traceback:');
    expect(v.stderr).toMatch(/boom\.lua:1: in (upvalue|local|function) 'inner'/);
  });

  it('ARGS from a file (@FILE) or stdin (-)', async () => {
    const args = path.join(tmp, 'args.json');
    await writeFile(args, '{"n": 7}');
    const f = await runPanto(['tool', 'steps', `@${args}`, '--tools', tools]);
    expect(f.stdout).toContain('done 7');
    const s = await runPanto(['tool', 'steps', '-', '--tools', tools], { stdin: '{"n": 8}' });
    expect(s.stdout).toContain('done 8');
    const bad = await runPanto(['tool', 'steps', `@${path.join(tmp, 'missing.json')}`, '--tools', tools]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('no such file or directory');
  });

  it("--help's example runs as printed", async () => {
    const help = await runPanto(['tool', '--help']);
    const example = /^ {2}panto tool (read .* --as anthropic)$/m.exec(help.stdout)?.[1];
    expect(example).toBeDefined();
    const argv = (example as string).match(/'[^']*'|\S+/g)?.map((a) => a.replace(/^'|'$/g, '')) ?? [];
    const r = await runPanto(['tool', ...argv], { cwd: repoRoot });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('--- request fragment for anthropic');
  });

  it('--image-input previews what a local vision model would get (the picture, not a placeholder)', async () => {
    const ws = path.join(repoRoot, 'examples', 'workspace');
    const base = [
      'tool',
      'read',
      '{"path":"chart.png"}',
      '--workspace',
      ws,
      '--as',
      'openai-chat',
      '--model',
      'llava-local',
    ];
    const text = await runPanto(base);
    expect(text.stdout).not.toContain('image_url');
    expect(text.stdout).toContain('does not accept image input');
    const vision = await runPanto([...base, '--image-input']);
    expect(vision.stdout).toContain('"image_url"');
  });

  it('a budget error names the line the tool was on', async () => {
    await writeFile(
      path.join(tmp, 'loop.lua'),
      TOOL('loop', '    local x = 0\n    while true do\n      x = x + 1\n    end'),
    );
    const source = await LuaToolSource.fromDir(tmp, { budgets: { instructions: 200_000 } });
    try {
      const r = await source.run('loop');
      expect(r.ok).toBe(false);
      expect(r.ok ? '' : r.error).toMatch(
        /instruction budget exceeded \(200000 Lua instructions\) at loop\.lua:[789]\b/,
      );
    } finally {
      await source.close();
    }
  });
});

describe('reloading tools', () => {
  it('LuaToolSource.reload() picks up an edit, a new file and a fixed error; listeners are told', async () => {
    const dir = path.join(tmp, 'reload');
    await mkdir(dir);
    await writeFile(path.join(dir, 'a.lua'), TOOL('a', '    return "version 1"'));
    for (const isolation of ['thread', 'worker'] as const) {
      await writeFile(path.join(dir, 'a.lua'), TOOL('a', '    return "version 1"'));
      await rm(path.join(dir, 'b.lua'), { force: true });
      const source = await LuaToolSource.fromDir(dir, { isolation });
      let told = 0;
      const off = source.onListChanged(() => told++);
      try {
        expect(await source.run('a')).toMatchObject({
          ok: true,
          parts: [{ type: 'text', text: 'version 1' }],
        });
        await writeFile(path.join(dir, 'a.lua'), TOOL('a', '    return "version 2"'));
        await writeFile(path.join(dir, 'b.lua'), TOOL('b', '    return "new"'));
        await source.reload();
        expect(told).toBe(1);
        expect(
          source
            .list()
            .map((d) => d.name)
            .sort(),
        ).toEqual(['a', 'b']);
        expect(await source.run('a')).toMatchObject({
          ok: true,
          parts: [{ type: 'text', text: 'version 2' }],
        });
        await writeFile(path.join(dir, 'b.lua'), 'return {');
        await source.reload();
        expect(source.loadErrors).toHaveLength(1);
        expect(source.list().map((d) => d.name)).toEqual(['a']);
        off();
        await source.reload();
        expect(told).toBe(2);
      } finally {
        await source.close();
      }
    }
  });

  it('panto tool NAME --watch runs again when the tool file changes', async () => {
    const dir = path.join(tmp, 'watch');
    await mkdir(dir);
    await writeFile(path.join(dir, 'w.lua'), TOOL('w', '    return "first text"'));
    const child = spawn(process.execPath, [pantoBin, 'tool', 'w', '--tools', dir, '--watch'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const until = async (test: () => boolean, what: string) => {
      const deadline = Date.now() + 30_000;
      while (!test()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${out}\n${err}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    try {
      await until(() => err.includes('[watching'), 'the watch to start');
      expect(out).toContain('first text');
      await writeFile(path.join(dir, 'w.lua'), TOOL('w', '    return "second text"'));
      await until(() => out.includes('second text'), 'the run after the edit');
      expect(err).toContain('w.lua changed: reloading');
      const closed = new Promise((r) => child.on('close', r));
      child.kill('SIGINT');
      await closed;
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('panto mcp serve --watch: a new tool file reaches the client through notifications/tools/list_changed', async () => {
    const dir = path.join(tmp, 'mcp');
    await mkdir(dir);
    await writeFile(path.join(dir, 'one.lua'), TOOL('one', '    return "1"'));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [pantoBin, 'mcp', 'serve', '--tools', dir, '--watch', '--workspace', tmp],
      stderr: 'ignore',
    });
    const client = new Client({ name: 'watch-test', version: '1.0.0' });
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed++;
    });
    await client.connect(transport);
    try {
      expect(client.getServerCapabilities()?.tools?.listChanged).toBe(true);
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('one');
      await writeFile(path.join(dir, 'two.lua'), TOOL('two', '    return "2"'));
      const deadline = Date.now() + 30_000;
      while (changed === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(changed).toBeGreaterThan(0);
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(
        expect.arrayContaining(['one', 'two']),
      );
      expect(await client.callTool({ name: 'two', arguments: {} })).toMatchObject({
        content: [{ type: 'text', text: '2' }],
      });
    } finally {
      await client.close();
    }
  });
});
