/**
 * Project instructions for the model, as pi, Codex and opencode read them: every `AGENTS.md` (and `CLAUDE.md`, when
 * present) from the repository root down to the workspace, outermost first, added to the system prompt. The walk up
 * stops at the first directory holding `.git` (the repository root); outside a repository only the workspace itself
 * is read. Each file is capped at 64 KiB (the rest is cut with a note).
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { openRegular, readUpTo } from '../../regular-file.js';

export const CONTEXT_FILE_NAMES = ['AGENTS.md', 'CLAUDE.md'] as const;
export const CONTEXT_FILE_CAP = 64 * 1024;

export interface ContextFile {
  path: string;
  text: string;
  /** True when the file was longer than the cap. */
  truncated: boolean;
}

async function exists(p: string): Promise<boolean> {
  try {
    await stat(p);
    return true;
  } catch {
    return false;
  }
}

/** The directories from the repository root (or `workspace` alone outside a repository) down to `workspace`. */
export async function contextDirs(workspace: string): Promise<string[]> {
  const chain: string[] = [];
  let dir = path.resolve(workspace);
  for (;;) {
    chain.push(dir);
    if (await exists(path.join(dir, '.git'))) return chain.reverse();
    const parent = path.dirname(dir);
    if (parent === dir) return [path.resolve(workspace)];
    dir = parent;
  }
}

/** The context files for `workspace`, outermost first; unreadable files are reported through `onProblem`. */
export async function loadContextFiles(
  workspace: string,
  onProblem: (message: string) => void = () => {},
): Promise<ContextFile[]> {
  const out: ContextFile[] = [];
  for (const dir of await contextDirs(workspace)) {
    for (const name of CONTEXT_FILE_NAMES) {
      const file = path.join(dir, name);
      let bytes: Buffer;
      try {
        const opened = await openRegular(file);
        if ('not' in opened) continue;
        try {
          // Capped read: a huge (or sparse 2 GB) AGENTS.md costs no more than the cap.
          bytes = await readUpTo(opened.fh, CONTEXT_FILE_CAP + 1);
        } finally {
          await opened.fh.close();
        }
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== 'ENOENT') onProblem(`${file}: not read (${code ?? String(err)})`);
        continue;
      }
      const truncated = bytes.byteLength > CONTEXT_FILE_CAP;
      out.push({
        path: file,
        text: new TextDecoder().decode(truncated ? bytes.subarray(0, CONTEXT_FILE_CAP) : bytes),
        truncated,
      });
    }
  }
  return out;
}

/** The system prompt: the user's `--system` text, then each context file under a heading naming it. */
export function systemWithContext(
  system: string | undefined,
  files: readonly ContextFile[],
): string | undefined {
  if (files.length === 0) return system;
  const sections = files.map(
    (f) =>
      `## ${f.path}\n\n${f.text.trimEnd()}` +
      (f.truncated ? `\n\n[truncated: only the first ${CONTEXT_FILE_CAP} bytes of this file are shown]` : ''),
  );
  const context = `# Project instructions\n\nThe following files hold instructions for working in this project (outermost directory first; a later file refines an earlier one).\n\n${sections.join('\n\n')}`;
  return system === undefined || system.length === 0 ? context : `${system}\n\n${context}`;
}
