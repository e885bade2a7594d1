/**
 * `panto tool`: the tool author's loop, offline. `panto tool NAME [ARGS]` runs one call through the real dispatcher
 * (argument validation, Lua sandbox, media pipeline) and prints the result; `--as` shows the request fragment a
 * surface gets; `--watch` runs it again whenever a tool file changes. `panto tool --check DIR` loads every tool of DIR,
 * exits 1 on any load error (a JSON Schema error in `parameters` included), and prints each declaration as each
 * provider receives it. Exit 1 when the tool failed.
 */
import { watch } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Conversation, StoredPart, ToolCallBlock, ToolResultBlock } from '../../conversation.js';
import { CAPABILITIES, type LuaLogEntry, LuaToolSource } from '../../lua/index.js';
import {
  anthropicTools,
  geminiTools,
  mediaPolicyFor,
  openAIChatTools,
  openAIResponsesTools,
  resolveModel,
} from '../../providers/index.js';
import { openRegular, readUpTo } from '../../regular-file.js';
import type { ToolDecl } from '../../tool.js';
import { ToolRegistry } from '../../tool-source.js';
import { dispatchToolCalls, type ToolEvent } from '../../tools/index.js';
import { CliError, EXIT_FAILURE, EXIT_USAGE } from '../cli-error.js';
import { type CliIo, formatBytes, withProgress } from '../cli-io.js';
import { formatLoadError, isLoadErrorLog } from '../load-errors.js';
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
import { describeSystemError, isSystemError } from '../system-error.js';

export const toolHelp = `Usage: panto tool NAME [ARGS] [options]
       panto tool --check DIR [--json]
       panto tool --list [--tools DIR]

Run one tool the way the agent would (argument validation, Lua sandbox, media
pipeline) and print its result: text, and for each image/document its type,
size, dimensions before/after and what was changed. Works offline.

  panto tool read '{"path":"photo.jpg"}' --workspace examples/workspace --as anthropic
  panto tool chart @args.json --tools ./tools --watch
  echo '{"path":"notes.txt"}' | panto tool read -

ARGS is a JSON object, '@FILE' (read from FILE) or '-' (read from stdin).

Options:
  --tools DIR        load Lua tools from DIR (repeatable; the built-in tools are always loaded; every
                     capability is granted: the call you name is the one that runs)
  --workspace DIR    the workspace root tools may read (default: current directory)
  --as SURFACE       also print the request fragment SURFACE would receive:
                     anthropic | openai-chat | openai-responses | gemini
  --model ID         the model whose limits apply (default: a current model of the surface)
  --image-input      declare that --model takes images (a local vision model the catalog does not know)
  --pdf-input        declare that --model takes PDFs
  --watch            run again whenever a file in a tools directory changes (Ctrl-C stops)
  --check DIR        load every tool in DIR, report load errors (exit 1 on any) and print each
                     declaration as each provider receives it
  --full             print base64 in full (default: abbreviated)
  --list             list the available tools and exit
  --json             print a JSON object instead of text
  -v, --verbose      show the Lua log (print output, panto.log, tracebacks) on stderr
  -h, --help         show this help
`;

interface MediaLine {
  partIndex: number;
  /** The line, given the stored document's page count (known only once the result is built). */
  text: (pages: number | undefined) => string;
  detail: Record<string, unknown>;
}

/** Largest ARGS file or stdin read. */
const MAX_ARGS_BYTES = 16 * 1024 * 1024;

export async function runTool(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      tools: { type: 'string', multiple: true },
      workspace: { type: 'string' },
      as: { type: 'string' },
      model: { type: 'string' },
      'image-input': { type: 'boolean' },
      'pdf-input': { type: 'boolean' },
      watch: { type: 'boolean' },
      check: { type: 'string' },
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
  const verbose = values.verbose ?? false;
  // Load errors are reported once each, by the CLI (the log would say the same again).
  const log = (e: LuaLogEntry) => {
    if (!verbose || isLoadErrorLog(e)) return;
    io.err(`[lua ${e.level}] ${e.message}${e.traceback ? `\n${e.traceback}` : ''}`);
  };

  if (values.check !== undefined)
    return checkTools(path.resolve(values.check), workspaceRoot, values.json ?? false, io, log);

  const surface: Surface | undefined = values.as === undefined ? undefined : parseSurface(values.as);
  const modelId = values.model ?? (surface ? DEFAULT_MODEL[surfaceApi(surface)] : undefined);
  const input: { image?: boolean; pdf?: boolean } = {};
  if (values['image-input']) input.image = true;
  if (values['pdf-input']) input.pdf = true;
  const model =
    modelId === undefined
      ? undefined
      : resolveModel(modelId, {
          ...(surface ? { api: surfaceApi(surface) } : {}),
          ...(Object.keys(input).length > 0 ? { input } : {}),
        });

  const toolDirs = (values.tools ?? []).map((d) => path.resolve(d));
  // The user names the one call to run: that is the approval, so every capability is granted.
  const source = await LuaToolSource.fromDir(toolDirs, {
    includeBuiltins: true,
    workspaceRoot,
    log,
    capabilities: CAPABILITIES,
  });
  try {
    for (const e of source.loadErrors) io.err(`warning: ${formatLoadError(e)}`);
    if (values.list) {
      const decls = source.list();
      if (values.json) io.out(escapeJsonControls(JSON.stringify(decls)));
      else for (const d of decls) io.out(`${d.name.padEnd(16)}${d.description.split('\n')[0] ?? ''}`);
      return 0;
    }

    const [name, rawArgs, ...extra] = positionals;
    if (!name || extra.length > 0) throw new CliError(`expected NAME [ARGS]\n\n${toolHelp}`, EXIT_USAGE);
    const args = await readArgs(rawArgs);
    const run = () =>
      runOnce(
        source,
        name,
        args,
        { workspaceRoot, surface, model, full: values.full ?? false, json: values.json ?? false },
        io,
      );
    if (!values.watch) return await run();

    // --watch: run, then again on every change under the tools directories (debounced), until Ctrl-C.
    const dirs = toolDirs.length > 0 ? toolDirs : [LuaToolSource.builtinDir()];
    await run();
    io.err(`[watching ${dirs.join(', ')} — Ctrl-C stops]`);
    await new Promise<void>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      let running = Promise.resolve();
      const watchers = dirs.map((dir) =>
        watch(dir, { recursive: true }, (_event, file) => {
          if (file !== null && !String(file).endsWith('.lua')) return;
          clearTimeout(timer);
          timer = setTimeout(() => {
            running = running.then(async () => {
              io.err(`\n[${String(file ?? 'a file')} changed: reloading]`);
              try {
                await source.reload();
                for (const e of source.loadErrors) io.err(`warning: ${formatLoadError(e)}`);
                await run();
              } catch (err) {
                io.err(`error: ${(err as Error).message}`);
              }
            });
          }, 100);
        }),
      );
      process.once('SIGINT', () => {
        clearTimeout(timer);
        for (const w of watchers) w.close();
        resolve();
      });
    });
    return 0;
  } finally {
    await source.close();
  }
}

interface RunSettings {
  workspaceRoot: string;
  surface: Surface | undefined;
  model: ReturnType<typeof resolveModel> | undefined;
  full: boolean;
  json: boolean;
}

/** One call of `name`, printed; the exit code. */
async function runOnce(
  source: LuaToolSource,
  name: string,
  input: Record<string, unknown>,
  o: RunSettings,
  io: CliIo,
): Promise<number> {
  const registry = new ToolRegistry([source]);
  if (!registry.list().some((d) => d.name === name)) {
    // A tool whose file failed to load: say that, not "unknown tool".
    const failed = source.loadErrors.find(
      (e) => path.basename(e.file, '.lua') === name || e.message.includes(`tool '${name}'`),
    );
    if (failed) {
      io.out(`${name}: ERROR: its file did not load`);
      io.out(formatLoadError(failed));
      return EXIT_FAILURE;
    }
    if (source.loadErrors.length > 0) {
      const n = source.loadErrors.length;
      io.out(
        `${name}: ERROR: no tool of that name loaded; ${n} tool file${n === 1 ? '' : 's'} did not load and may define it:`,
      );
      for (const e of source.loadErrors) io.out(`  ${formatLoadError(e)}`);
      return EXIT_FAILURE;
    }
  }
  const call: ToolCallBlock = { type: 'tool_call', id: 'call_1', name, input };
  const media: MediaLine[] = [];
  const onEvent = (e: ToolEvent): void => {
    if (e.type === 'tool_call_update') {
      const u = e.update;
      const pct = typeof u.progress === 'number' ? ` ${Math.round(u.progress * 100)}%` : '';
      io.err(`[progress]${pct}${typeof u.message === 'string' ? ` ${u.message}` : ''}`);
    } else if (e.type === 'tool_media_processed') {
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
      workspaceRoot: o.workspaceRoot,
      onEvent,
      ...(o.model ? { media: mediaPolicyFor(o.model) } : {}),
    }),
  );
  const ms = performance.now() - started;
  if (!result) throw new CliError('the dispatcher returned no result');
  media.sort((a, b) => a.partIndex - b.partIndex);

  const { surface, model } = o;
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

  if (o.json) {
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
                  fragment: JSON.parse(abbreviateBase64(fragment.fragment, o.full)),
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
    io.out(abbreviateBase64(fragment.fragment, o.full));
  }
  return result.isError ? EXIT_FAILURE : 0;
}

/**
 * `--check DIR`: every tool file of DIR loads (its `parameters` a valid JSON Schema), or exit 1; each declaration as
 * each provider receives it.
 */
async function checkTools(
  dir: string,
  workspaceRoot: string,
  json: boolean,
  io: CliIo,
  log: (e: LuaLogEntry) => void,
): Promise<number> {
  const source = await LuaToolSource.fromDir(dir, { workspaceRoot, log, capabilities: CAPABILITIES });
  try {
    const decls: ToolDecl[] = source.list();
    const declarations = {
      anthropic: anthropicTools(decls),
      'openai-chat': openAIChatTools(decls),
      'openai-responses': openAIResponsesTools(decls),
      gemini: geminiTools(decls),
    };
    if (json) {
      io.out(
        escapeJsonControls(
          JSON.stringify({
            dir,
            ok: source.loadErrors.length === 0,
            loadErrors: source.loadErrors.map((e) => ({ ...e, text: formatLoadError(e) })),
            tools: decls.map((d) => d.name),
            declarations,
          }),
        ),
      );
    } else {
      for (const e of source.loadErrors) io.out(`error: ${formatLoadError(e)}`);
      io.out(
        `${decls.length} tool${decls.length === 1 ? '' : 's'} loaded from ${dir}` +
          (decls.length > 0 ? `: ${decls.map((d) => d.name).join(', ')}` : '') +
          (source.loadErrors.length > 0
            ? `; ${source.loadErrors.length} file${source.loadErrors.length === 1 ? '' : 's'} did not load`
            : ''),
      );
      for (const [surface, list] of Object.entries(declarations)) {
        io.out(`\n--- as ${surface} receives them ---`);
        io.out(escapeJsonControls(JSON.stringify(list, null, 2)));
      }
    }
    return source.loadErrors.length === 0 ? 0 : EXIT_FAILURE;
  } finally {
    await source.close();
  }
}

/** ARGS: a JSON object given inline, in a file (`@FILE`) or on stdin (`-`). */
async function readArgs(raw: string | undefined): Promise<Record<string, unknown>> {
  if (raw === undefined) return {};
  let text = raw;
  let from = 'ARGS';
  if (raw === '-') {
    from = 'stdin';
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
      size += chunk.byteLength;
      if (size > MAX_ARGS_BYTES)
        throw new CliError(`ARGS on stdin are over ${MAX_ARGS_BYTES} bytes`, EXIT_USAGE);
      chunks.push(chunk);
    }
    text = Buffer.concat(chunks).toString('utf8');
  } else if (raw.startsWith('@')) {
    const file = raw.slice(1);
    from = file;
    try {
      const opened = await openRegular(file);
      if ('not' in opened)
        throw new CliError(`cannot read ${file}: ${opened.not}, not a regular file`, EXIT_USAGE);
      try {
        const bytes = await readUpTo(opened.fh, MAX_ARGS_BYTES + 1);
        if (bytes.byteLength > MAX_ARGS_BYTES)
          throw new CliError(`${file}: over ${MAX_ARGS_BYTES} bytes`, EXIT_USAGE);
        text = bytes.toString('utf8');
      } finally {
        await opened.fh.close();
      }
    } catch (err) {
      if (isSystemError(err)) throw new CliError(describeSystemError(err, file), EXIT_USAGE);
      throw err;
    }
  }
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch (err) {
    throw new CliError(
      `${from === 'ARGS' ? 'JSON-ARGS' : `the ARGS in ${from}`} is not valid JSON: ${(err as Error).message}`,
      EXIT_USAGE,
    );
  }
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new CliError('JSON-ARGS must be a JSON object, e.g. \'{"path":"a.png"}\'', EXIT_USAGE);
  }
  return input as Record<string, unknown>;
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
