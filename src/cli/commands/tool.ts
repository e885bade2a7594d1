/** `panto tool NAME`: one tool call through the real dispatcher, offline; `--as` shows the request fragment a surface gets. Exit 1 when the tool failed. */
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Conversation, StoredPart, ToolCallBlock, ToolResultBlock } from '../../conversation.js';
import { CAPABILITIES, LuaToolSource } from '../../lua/index.js';
import { mediaPolicyFor, resolveModel } from '../../providers/index.js';
import { ToolRegistry } from '../../tool-source.js';
import { dispatchToolCalls, type ToolEvent } from '../../tools/index.js';
import { CliError, EXIT_FAILURE, EXIT_USAGE } from '../cli-error.js';
import { type CliIo, formatBytes, withProgress } from '../cli-io.js';
import { describeProcessed } from '../media-summary.js';
import { escapeJsonControls } from '../safe-text.js';
import {
  abbreviateBase64,
  DEFAULT_MODEL,
  parseSurface,
  type Surface,
  surfaceApi,
  toolResultFragment,
} from '../surfaces.js';

export const toolHelp = `Usage: panto tool NAME [JSON-ARGS] [options]

Run one tool the way the agent would (argument validation, Lua sandbox, media
pipeline) and print its result: text, and for each image/document its type,
size, dimensions before/after and what was changed. Works offline.

  panto tool read '{"path":"photo.jpg"}' --workspace examples --as anthropic

Options:
  --tools DIR        load Lua tools from DIR (repeatable; the built-in tools are always loaded; every
                     capability is granted: the call you name is the one that runs)
  --workspace DIR    the workspace root tools may read (default: current directory)
  --as SURFACE       also print the request fragment SURFACE would receive:
                     anthropic | openai-chat | openai-responses | gemini
  --model ID         the model whose limits apply (default: a current model of the surface)
  --full             print base64 in full (default: abbreviated)
  --list             list the available tools and exit
  --json             print a JSON object instead of text
  -v, --verbose      show the Lua log (print output, tracebacks) on stderr
  -h, --help         show this help
`;

interface MediaLine {
  partIndex: number;
  /** The line, given the stored document's page count (known only once the result is built). */
  text: (pages: number | undefined) => string;
  detail: Record<string, unknown>;
}

export async function runTool(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      tools: { type: 'string', multiple: true },
      workspace: { type: 'string' },
      as: { type: 'string' },
      model: { type: 'string' },
      full: { type: 'boolean' },
      list: { type: 'boolean' },
      json: { type: 'boolean' },
      verbose: { type: 'boolean', short: 'v' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    io.out(toolHelp);
    return 0;
  }
  const workspaceRoot = path.resolve(values.workspace ?? process.cwd());
  const surface: Surface | undefined = values.as === undefined ? undefined : parseSurface(values.as);
  const modelId = values.model ?? (surface ? DEFAULT_MODEL[surfaceApi(surface)] : undefined);
  const model = modelId === undefined ? undefined : resolveModel(modelId);

  // The user names the one call to run: that is the approval, so every capability is granted.
  const source = await LuaToolSource.fromDir(
    (values.tools ?? []).map((d) => path.resolve(d)),
    {
      includeBuiltins: true,
      capabilities: CAPABILITIES,
      workspaceRoot,
      ...(values.verbose ? { log: (e) => io.err(`[lua ${e.level}] ${e.message}`) } : {}),
    },
  );
  for (const e of source.loadErrors) io.err(`warning: ${formatLoadError(e)}`);
  const registry = new ToolRegistry([source]);

  if (values.list) {
    const decls = registry.list();
    if (values.json) io.out(escapeJsonControls(JSON.stringify(decls)));
    else for (const d of decls) io.out(`${d.name.padEnd(16)}${d.description.split('\n')[0] ?? ''}`);
    return 0;
  }

  const [name, rawArgs, ...extra] = positionals;
  if (!name || extra.length > 0) throw new CliError(`expected NAME [JSON-ARGS]\n\n${toolHelp}`, EXIT_USAGE);
  let input: Record<string, unknown> = {};
  if (rawArgs !== undefined) {
    try {
      input = JSON.parse(rawArgs) as Record<string, unknown>;
    } catch (err) {
      throw new CliError(`JSON-ARGS is not valid JSON: ${(err as Error).message}`, EXIT_USAGE);
    }
    if (input === null || typeof input !== 'object' || Array.isArray(input)) {
      throw new CliError('JSON-ARGS must be a JSON object, e.g. \'{"path":"a.png"}\'', EXIT_USAGE);
    }
  }

  const call: ToolCallBlock = { type: 'tool_call', id: 'call_1', name, input };
  const media: MediaLine[] = [];
  const onEvent = (e: ToolEvent): void => {
    if (e.type === 'tool_media_processed') {
      const output = { mediaType: e.mediaType, width: e.width, height: e.height, byteLength: e.byteLength };
      media.push({
        partIndex: e.partIndex,
        text: (pages) => describeProcessed({ ...output, pages }, e.original, e.changes),
        detail: {
          mediaType: e.mediaType,
          width: e.width,
          height: e.height,
          byteLength: e.byteLength,
          original: e.original,
          changes: e.changes,
        },
      });
    } else if (e.type === 'tool_media_dropped') {
      media.push({
        partIndex: e.partIndex,
        text: () => `dropped (${e.code}): ${e.note}`,
        detail: { dropped: true, code: e.code, note: e.note, mediaType: e.mediaType },
      });
    }
  };
  const started = performance.now();
  const [result] = await withProgress(io, `running ${name}`, () =>
    dispatchToolCalls([call], {
      tools: registry,
      workspaceRoot,
      onEvent,
      ...(model ? { media: mediaPolicyFor(model) } : {}),
    }),
  );
  const ms = performance.now() - started;
  if (!result) throw new CliError('the dispatcher returned no result');
  media.sort((a, b) => a.partIndex - b.partIndex);

  let fragment: ReturnType<typeof toolResultFragment> | undefined;
  if (surface && model) {
    const conversation: Conversation = {
      messages: [
        { role: 'user', content: [{ type: 'text', text: `Run ${name}.` }] },
        { role: 'assistant', content: [call], stopReason: 'tool_use' },
        { role: 'tool', results: [result] },
      ],
    };
    fragment = toolResultFragment(surface, conversation, model, registry.list());
  }

  if (values.json) {
    io.out(
      escapeJsonControls(
        JSON.stringify({
          tool: name,
          input,
          isError: result.isError,
          parts: result.parts.map(summarizePart),
          media: media.map((m) => m.detail),
          ...(result.meta === undefined ? {} : { meta: result.meta }),
          ms: Math.round(ms * 100) / 100,
          ...(fragment && surface && model
            ? {
                request: {
                  surface,
                  model: model.id,
                  fragment: JSON.parse(abbreviateBase64(fragment.fragment, values.full ?? false)),
                  warnings: fragment.warnings,
                },
              }
            : {}),
        }),
      ),
    );
    return result.isError ? EXIT_FAILURE : 0;
  }

  printResult(io, name, result, media, ms);
  if (fragment && surface && model) {
    io.out(`\n--- request fragment for ${surface} (model ${model.id}) ---`);
    for (const w of fragment.warnings) io.out(`warning: ${w.message}`);
    io.out(abbreviateBase64(fragment.fragment, values.full ?? false));
  }
  return result.isError ? EXIT_FAILURE : 0;
}

function printResult(io: CliIo, name: string, result: ToolResultBlock, media: MediaLine[], ms: number): void {
  io.out(`${name}: ${result.isError ? 'ERROR' : 'ok'} in ${ms.toFixed(1)} ms`);
  let mediaIndex = 0;
  for (const part of result.parts) {
    if (part.type === 'text') {
      io.out(part.text);
      continue;
    }
    const line = media[mediaIndex++];
    const pages = part.type === 'document' ? part.pages : undefined;
    const label = part.type === 'image' ? 'image' : `document${part.name ? ` ${part.name}` : ''}`;
    io.out(
      `[${label}] ${line ? line.text(pages) : `${part.mediaType}, ${formatBytes(base64Bytes(part.data))}`}`,
    );
  }
  for (const line of media.slice(mediaIndex)) io.out(`[attachment] ${line.text(undefined)}`);
  if (result.meta !== undefined) io.out(`meta: ${escapeJsonControls(JSON.stringify(result.meta))}`);
}

function summarizePart(part: StoredPart): Record<string, unknown> {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'image':
      return {
        type: 'image',
        mediaType: part.mediaType,
        width: part.width,
        height: part.height,
        byteLength: base64Bytes(part.data),
      };
    case 'document':
      return {
        type: 'document',
        mediaType: part.mediaType,
        byteLength: base64Bytes(part.data),
        ...(part.name === undefined ? {} : { name: part.name }),
        ...(part.pages === undefined ? {} : { pages: part.pages }),
      };
  }
}

function base64Bytes(b64: string): number {
  const pad = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
  return (b64.length / 4) * 3 - pad;
}

function formatLoadError(e: { file: string; line?: number | undefined; message: string }): string {
  return `${e.file}${e.line === undefined ? '' : `:${e.line}`}: ${e.message}`;
}
