/**
 * The system prompt of `panto chat`: who the agent is and how it works (unless `--system` gives another), where it
 * runs (working directory, date, OS, shell), the tools it has with one line each, then the project's context files
 * (context-files.ts). Built once when the chat starts.
 */
import os from 'node:os';
import type { ToolDecl } from '../../tool.js';
import { type ContextFile, systemWithContext } from './context-files.js';

export interface SystemPromptInput {
  /** `--system`: replaces the built-in instructions (the environment and context files still follow). */
  custom?: string | undefined;
  workspace: string;
  tools: readonly ToolDecl[];
  contextFiles: readonly ContextFile[];
  now?: Date;
  platform?: NodeJS.Platform;
  shell?: string | undefined;
}

const INSTRUCTIONS = `You are panto, a coding agent working in the user's project through tools. Be concise and direct.

- Look before you change: read the files involved (and search the project) before editing them.
- Make the smallest change that does what was asked; keep the project's style. Prefer editing files to rewriting them.
- Run the project's own checks (tests, type checks, linters) after a change when you can, and say what you ran.
- When a tool fails, read its error and adjust; do not repeat the same call unchanged.
- Paths are relative to the working directory below. Never claim to have done something a tool did not do.
- Answer in Markdown; put code, commands and file paths in backticks.`;

export function buildSystemPrompt(input: SystemPromptInput): string {
  const now = input.now ?? new Date();
  const platform = input.platform ?? process.platform;
  const env = [
    `Working directory: ${input.workspace}`,
    `Date: ${now.toISOString().slice(0, 10)}`,
    `OS: ${platform} (${os.release()})${input.shell ? `; shell ${input.shell}` : ''}`,
  ];
  const tools =
    input.tools.length === 0
      ? 'No tools are available in this session.'
      : input.tools.map((t) => `- ${t.name}: ${summaryOf(t.description)}`).join('\n');
  const base = `${input.custom ?? INSTRUCTIONS}\n\n# Environment\n\n${env.join('\n')}\n\n# Tools\n\n${tools}`;
  return systemWithContext(base, input.contextFiles) ?? base;
}

/** The first sentence of a tool's description (its declaration, sent with every request, has the rest). */
function summaryOf(description: string): string {
  const line = (description.split('\n')[0] ?? '').trim();
  const end = /[.!?](\s|$)/.exec(line);
  const sentence = end ? line.slice(0, end.index + 1) : line;
  return sentence.length > 200 ? `${sentence.slice(0, 199)}…` : sentence;
}
