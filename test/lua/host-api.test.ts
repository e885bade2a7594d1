import { mkdir, mkdtemp, readFile, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DENYLIST } from '../../src/lua/index.js';
import { ctx, type Loaded, loadTools, tool } from './lua-test-helpers.js';

const FIXTURES = path.resolve(import.meta.dirname, '..', 'fixtures', 'media');

const TOOLS: Record<string, string> = {
  'read.lua': tool(
    'read_raw',
    `
  local data, err = panto.read_file(args.path)
  if not data then return nil, err end
  return { text = tostring(#data), meta = { first = data:sub(1, 16) } }`,
  ),
  'stat.lua': tool(
    'stat',
    `
  local st, err = panto.stat(args.path)
  if not st then return nil, err end
  return { text = st.type .. " " .. st.size, meta = st }`,
  ),
  'list.lua': tool(
    'list',
    `
  local entries, err = panto.list_dir(args.path)
  if not entries then return nil, err end
  local out = {}
  for _, e in ipairs(entries) do out[#out + 1] = e.name .. ":" .. e.type end
  return table.concat(out, " ")`,
  ),
  'sniff.lua': tool(
    'sniff',
    `
  local data = assert(panto.read_file(args.path))
  return tostring(panto.sniff(data))`,
  ),
  'json.lua': tool(
    'json',
    `
  local v, err = panto.json_decode(args.text)
  if err then return nil, err end
  local bad, berr = panto.json_encode({ f = print })
  return { text = panto.json_encode(v), meta = { decoded_is_table = type(v) == "table", bad = tostring(bad), berr = berr } }`,
  ),
  'log.lua': tool('log', 'panto.log("hello", 42, true); return "logged"'),
  'badarg.lua': tool('badarg', 'return panto.read_file(42)'),
};

let env: Loaded;
let outside: string;
beforeAll(async () => {
  env = await loadTools(TOOLS);
  expect(env.source.loadErrors).toEqual([]);
  const ws = env.workspace;
  outside = await mkdtemp(path.join(tmpdir(), 'panto-lua-outside-'));
  await writeFile(path.join(outside, 'secret.txt'), 'outside secret');
  await mkdir(path.join(ws, 'sub', 'deeper'), { recursive: true });
  await writeFile(path.join(ws, 'sub', 'a.txt'), 'hello');
  await writeFile(path.join(ws, 'sub', 'b.txt'), 'world!');
  await writeFile(path.join(ws, '..panto-dots'), 'dots');
  await symlink(path.join(outside, 'secret.txt'), path.join(ws, 'escape.txt'));
  await symlink(outside, path.join(ws, 'escape-dir'));
  await symlink(path.join(ws, 'sub', 'a.txt'), path.join(ws, 'inside-link.txt'));
  for (const f of ['.env', '.env.local', 'server.pem', 'id_rsa', 'id_ed25519.pub', 'tls.key', 'sub/.env']) {
    await writeFile(path.join(ws, f), 'SECRET=1');
  }
  await mkdir(path.join(ws, '.ssh'));
  await writeFile(path.join(ws, '.ssh', 'config'), 'Host x');
  await symlink(path.join(ws, '.env'), path.join(ws, 'innocent.txt'));
});

const call = (name: string, args: Record<string, unknown>) => env.source.call(name, args, ctx(env.workspace));

describe('workspace confinement', () => {
  it('reads a relative path inside the root', async () => {
    expect(await call('read_raw', { path: 'sub/a.txt' })).toEqual({
      ok: true,
      parts: [{ type: 'text', text: '5' }],
      meta: { first: 'hello' },
    });
    expect(await call('read_raw', { path: './sub/../sub/b.txt' })).toMatchObject({ ok: true });
    expect(await call('read_raw', { path: path.join(env.workspace, 'sub', 'a.txt') })).toMatchObject({
      ok: true,
    });
    expect(await call('read_raw', { path: '..panto-dots' })).toMatchObject({ ok: true });
    expect(await call('read_raw', { path: 'inside-link.txt' })).toMatchObject({ ok: true });
  });

  it('refuses .. and absolute paths outside the root', async () => {
    expect(await call('read_raw', { path: '../x' })).toEqual({
      ok: false,
      error: '../x: outside the workspace',
    });
    expect(await call('read_raw', { path: 'sub/../../x' })).toEqual({
      ok: false,
      error: 'sub/../../x: outside the workspace',
    });
    expect(await call('read_raw', { path: '/etc/passwd' })).toEqual({
      ok: false,
      error: '/etc/passwd: outside the workspace',
    });
    expect(await call('stat', { path: path.join(outside, 'secret.txt') })).toMatchObject({ ok: false });
  });

  it('refuses symlinks that resolve outside the root', async () => {
    const escaped = {
      ok: false,
      error: 'escape.txt: resolves outside the workspace (through a symbolic link)',
    };
    expect(await call('read_raw', { path: 'escape.txt' })).toEqual(escaped);
    expect(await call('read_raw', { path: 'escape-dir/secret.txt' })).toEqual({
      ok: false,
      error: 'escape-dir/secret.txt: resolves outside the workspace (through a symbolic link)',
    });
    expect(await call('list', { path: 'escape-dir' })).toMatchObject({ ok: false });
  });

  it('refuses denylisted secrets even inside the root', async () => {
    const denied = async (p: string, pattern: string) =>
      expect(await call('read_raw', { path: p })).toEqual({
        ok: false,
        error: `${p}: access denied (matches the secrets denylist: ${pattern})`,
      });
    await denied('.env', '.env');
    await denied('.env.local', '.env.local');
    await denied('sub/.env', '.env');
    await denied('server.pem', 'server.pem');
    await denied('id_rsa', 'id_rsa');
    await denied('id_ed25519.pub', 'id_ed25519.pub');
    await denied('tls.key', 'tls.key');
    await denied('.ssh/config', '.ssh/');
    await denied('innocent.txt', '.env');
    expect(await call('list', { path: '.ssh' })).toMatchObject({ ok: false });
  });

  it('uses a configured denylist', async () => {
    const custom = await loadTools(TOOLS, { denylist: [...DEFAULT_DENYLIST, 'private/', '*.sqlite'] });
    await mkdir(path.join(custom.workspace, 'private'));
    await writeFile(path.join(custom.workspace, 'private', 'notes.txt'), 'x');
    await writeFile(path.join(custom.workspace, 'data.SQLITE'), 'x');
    await writeFile(path.join(custom.workspace, 'ok.txt'), 'x');
    const c = (p: string) => custom.source.call('read_raw', { path: p }, ctx(custom.workspace));
    expect(await c('private/notes.txt')).toMatchObject({
      ok: false,
      error: expect.stringContaining('private/'),
    });
    expect(await c('data.SQLITE')).toMatchObject({ ok: false, error: expect.stringContaining('denylist') });
    expect(await c('ok.txt')).toMatchObject({ ok: true });
  });

  it('reports missing files and wrong types', async () => {
    expect(await call('read_raw', { path: 'nope.txt' })).toEqual({
      ok: false,
      error: 'nope.txt: no such file or directory',
    });
    expect(await call('read_raw', { path: 'sub' })).toEqual({ ok: false, error: 'sub: is a directory' });
    expect(await call('list', { path: 'sub/a.txt' })).toEqual({
      ok: false,
      error: 'sub/a.txt: not a directory',
    });
    expect(await call('badarg', {})).toEqual({
      ok: false,
      error: expect.stringContaining('panto.read_file: path must be a string'),
    });
  });

  it('uses ctx.workspaceRoot when the source has no fixed root', async () => {
    const { LuaToolSource } = await import('../../src/lua/index.js');
    const src = await LuaToolSource.fromDir(env.dir);
    expect(await src.call('read_raw', { path: 'sub/b.txt' }, ctx(env.workspace))).toMatchObject({
      ok: true,
      parts: [{ type: 'text', text: '6' }],
    });
  });
});

describe('stat, list_dir, sniff, json, log', () => {
  it('stat reports type, size and mtime', async () => {
    const r = await call('stat', { path: 'sub/b.txt' });
    expect(r).toMatchObject({ ok: true, parts: [{ type: 'text', text: 'file 6' }] });
    expect(r.ok && typeof r.meta?.mtime).toBe('number');
    expect(await call('stat', { path: 'sub' })).toMatchObject({
      parts: [{ text: expect.stringMatching(/^directory /) }],
    });
  });

  it('list_dir lists sorted entries with types, leaving out denylisted secrets', async () => {
    expect(await call('list', { path: 'sub' })).toEqual({
      ok: true,
      parts: [{ type: 'text', text: 'a.txt:file b.txt:file deeper:directory' }],
    });
    const root = await call('list', {});
    expect(root.ok && root.parts[0]?.type === 'text' && root.parts[0].text).not.toMatch(
      /(^| )(\.env|\.ssh)[:]/,
    );
  });

  it('sniff names media types from bytes (native sniffMedia)', async () => {
    for (const [file, type] of [
      ['png-rgb.png', 'image/png'],
      ['pdf-2page.pdf', 'application/pdf'],
      ['jpeg-baseline.jpg', 'image/jpeg'],
    ]) {
      await writeFile(path.join(env.workspace, file ?? ''), await readFile(path.join(FIXTURES, file ?? '')));
      expect(await call('sniff', { path: file })).toEqual({
        ok: true,
        parts: [{ type: 'text', text: type }],
      });
    }
    expect(await call('sniff', { path: 'sub/a.txt' })).toEqual({
      ok: true,
      parts: [{ type: 'text', text: 'nil' }],
    });
  });

  it('json_decode / json_encode round-trip; unencodable values give nil, err', async () => {
    const r = await call('json', { text: '{"a":[1,2,{"b":"é"}],"n":1.5,"t":true}' });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const part = r.parts[0];
    expect(JSON.parse(part?.type === 'text' ? part.text : '')).toEqual({
      a: [1, 2, { b: 'é' }],
      n: 1.5,
      t: true,
    });
    expect(r.meta).toEqual({
      decoded_is_table: true,
      bad: 'nil',
      berr: 'panto.json_encode: value.f is a function, which has no JSON form',
    });
    expect(await call('json', { text: `${'['.repeat(100)}${']'.repeat(100)}` })).toEqual({
      ok: false,
      error: 'panto.json_decode: value nested deeper than 64 levels',
    });
    expect(await call('json', { text: '{oops' })).toEqual({
      ok: false,
      error: expect.stringContaining('panto.json_decode:'),
    });
  });

  it('log goes to the host log with the call attribution', async () => {
    expect(await call('log', {})).toMatchObject({ ok: true });
    expect(env.logs).toContainEqual(
      expect.objectContaining({
        level: 'info',
        message: 'hello\t42\ttrue',
        tool: 'log',
        toolCallId: 'call-1',
      }),
    );
  });
});
