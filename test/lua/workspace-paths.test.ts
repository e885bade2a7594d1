// Path rules of the Lua host: the secrets denylist and the Windows aliases of one file, judged with path.win32
// semantics on every platform (the Windows job of the hosted workflow also runs the real-filesystem tests).
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_DENYLIST,
  Denylist,
  judgeReal,
  resolveLexical,
  windowsPathProblem,
} from '../../src/lua/workspace-paths.js';

const deny = new Denylist(DEFAULT_DENYLIST);

describe('the default denylist', () => {
  it('refuses credential files of common tools, at any depth, in any case', () => {
    for (const p of [
      '.env',
      'app/.env.production',
      '.config/gh/hosts.yml',
      'home/me/.config/gh/hosts.yml',
      '.kube/config',
      '.kube/cache/x',
      '.config/gcloud/application_default_credentials.json',
      '.azure/accessTokens.json',
      '.bash_history',
      '.zsh_history',
      '.local/share/fish/fish_history',
      '.python_history',
      '.vault-token',
      '.git/config',
      'vendor/lib/.git/config',
      '.docker/config.json',
      '.ssh/id_ed25519',
      'certs/server.PEM',
      '.aws/credentials',
      '.cargo/credentials.toml',
      '.password-store/x.gpg',
      'ID_RSA',
    ]) {
      expect([p, deny.match(p)]).toEqual([p, expect.any(String)]);
    }
  });

  it('allows ordinary files, including ones whose names only look alike', () => {
    for (const p of [
      'src/env.ts',
      '.envrc',
      'docs/.config/gh/README.md',
      '.git/HEAD',
      '.git/configs/x',
      'notes/history.md',
      'kube/config',
      '.config/other/hosts.yml',
    ]) {
      expect([p, deny.match(p)]).toEqual([p, null]);
    }
  });

  it('names the pattern that matched', () => {
    expect(deny.match('a/.ssh/config')).toBe('.ssh/');
    expect(deny.match('x/.config/gh/hosts.yml')).toBe('.config/gh/hosts.yml');
    expect(deny.match('prod.env/.env.local')).toBe('.env.local');
  });
});

describe('Windows path rules (path.win32)', () => {
  const root = 'C:\\work\\ws';
  const lex = (p: string) => resolveLexical(root, p, deny, path.win32);

  it('refuses trailing dots and spaces, alternate data streams, device names and device paths', () => {
    expect(lex('.env.')).toEqual({
      ok: false,
      error: ".env.: '.env.' ends in a dot or a space (Windows drops it: another name for the same file)",
    });
    expect(lex('.env ')).toMatchObject({
      ok: false,
      error: expect.stringContaining('ends in a dot or a space'),
    });
    expect(lex('sub\\notes.txt.')).toMatchObject({ ok: false });
    expect(lex('.env::$DATA')).toEqual({
      ok: false,
      error: ".env::$DATA: '.env::$DATA' has a ':' (a drive or an alternate data stream inside a path)",
    });
    expect(lex('.env:x')).toMatchObject({ ok: false, error: expect.stringContaining("has a ':'") });
    expect(lex('notes.txt:hidden')).toMatchObject({ ok: false });
    expect(lex('C:notes.txt')).toMatchObject({ ok: false });
    expect(lex('nul')).toMatchObject({ ok: false, error: "nul: 'nul' is a Windows device name" });
    expect(lex('sub\\CON.txt')).toMatchObject({ ok: false, error: expect.stringContaining('device name') });
    expect(lex('com1')).toMatchObject({ ok: false });
    expect(lex('\\\\?\\C:\\work\\ws\\.env')).toMatchObject({
      ok: false,
      error: expect.stringContaining('device'),
    });
    expect(lex('\\\\.\\pipe\\x')).toMatchObject({ ok: false });
  });

  it('refuses paths outside the root and denylisted ones, whatever the case or separator', () => {
    expect(lex('..\\other\\x')).toEqual({ ok: false, error: '..\\other\\x: outside the workspace' });
    expect(lex('D:\\work\\ws\\x')).toMatchObject({ ok: false, error: expect.stringContaining('outside') });
    expect(lex('\\\\server\\share\\x')).toMatchObject({
      ok: false,
      error: expect.stringContaining('outside'),
    });
    expect(lex('.ENV')).toMatchObject({ ok: false, error: expect.stringContaining('secrets denylist') });
    expect(lex('sub/.SSH/config')).toMatchObject({ ok: false, error: expect.stringContaining('.ssh/') });
  });

  it('accepts ordinary paths, absolute ones inside the root in any case, and a drive prefix', () => {
    expect(lex('sub\\a.txt')).toEqual({ ok: true, abs: 'C:\\work\\ws\\sub\\a.txt', rel: 'sub/a.txt' });
    expect(lex('sub/a.txt')).toEqual({ ok: true, abs: 'C:\\work\\ws\\sub\\a.txt', rel: 'sub/a.txt' });
    expect(lex('c:\\WORK\\ws\\b.txt')).toMatchObject({ ok: true, rel: 'b.txt' });
    expect(lex('.\\x\\..\\y.txt')).toMatchObject({ ok: true, rel: 'y.txt' });
    expect(lex('a.b.c')).toMatchObject({ ok: true });
  });

  it('judges the resolved real path: an 8.3 short name expanded to a denylisted name is refused', () => {
    // realpath on Windows expands SECRE~1.ENV to its long name; the long name is what the denylist judges.
    expect(judgeReal(root, 'C:\\work\\ws\\.env.local', 'SECRE~1.ENV', deny, path.win32)).toEqual({
      ok: false,
      error: 'SECRE~1.ENV: access denied (matches the secrets denylist: .env.local)',
    });
    expect(judgeReal(root, 'C:\\Work\\WS\\notes.txt', 'NOTES~1.TXT', deny, path.win32)).toEqual({
      ok: true,
      abs: 'C:\\Work\\WS\\notes.txt',
      rel: 'notes.txt',
    });
    expect(judgeReal(root, 'C:\\elsewhere\\x', 'x', deny, path.win32)).toMatchObject({ ok: false });
  });

  it('windowsPathProblem is null for plain names', () => {
    for (const p of ['a.txt', 'C:\\x\\y', 'dir/sub/file.tar.gz', '.gitignore', '..\\x']) {
      expect([p, windowsPathProblem(p)]).toEqual([p, null]);
    }
  });
});
