/** `panto session FILE`: the transcript of a saved session log (images described, never dumped as base64). */
import { open } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { deleteSessionUploads } from '../../agent/delete-uploads.js';
import { estimateTokens } from '../../compaction/index.js';
import type { ProviderFiles } from '../../providers/files/file-types.js';
import { createProviderFiles } from '../../providers/files/provider-files.js';
import type { ModelApi } from '../../providers/model/model-info.js';
import { ENDPOINTS } from '../../providers/transport/endpoints.js';
import {
  type LoadedSession,
  loadSession,
  type SessionEntry,
  SessionLog,
  type SessionWriter,
} from '../../session/index.js';
import { fileLines } from '../../session-store/file-lines.js';
import { cliApiKey } from '../api-key.js';
import { CliError, EXIT_USAGE } from '../cli-error.js';
import type { CliIo } from '../cli-io.js';
import { openStore, shownStore } from '../session-store-option.js';
import { abbreviateBase64 } from '../surfaces.js';
import { describeSystemError, isSystemError } from '../system-error.js';
import { renderCliTranscript } from '../transcript.js';
import { formatUsage, sumUsage } from '../usage-format.js';

export const sessionHelp = `Usage: panto session FILE [options]
       panto session ID --store STORE [options]
       panto session list --store STORE
       panto session export ID --store STORE [--out FILE]
       panto session import FILE --store STORE

Print the transcript of a saved session log (JSONL): the current conversation,
with images and documents described as [image: image/png 1200x800], the token
usage of each answer, and answers the user aborted or the provider failed marked
as such ([assistant — aborted ...]; they are not sent to the model again).

With --store, the session is ID in that store (the transcript, --entries,
--json, --delete-uploads work as on a file). list, export and import work on a
session store: STORE is a PostgreSQL URL
(postgres://user@host:port/db) or a folder of JSONL session files. export
writes the session's JSONL lines (to FILE or standard output); import checks
every line of a JSONL file as a load does and stores it under its header's id
(nothing when a line fails). Both stream: a session of any size moves in
bounded memory, and an export imported and exported again is the same bytes.

Options:
  --entries   list every entry in the file (ids, parents, kinds), including
              messages a compaction replaced (reads and checks every line;
              without it only the current conversation's lines are read)
  --json      print {header, warnings, messages} as JSON (base64 abbreviated)
  --full      with --json: base64 in full
  --store S   the session store (ID, list, export, import)
  --out FILE  export: write to FILE instead of standard output
  --delete-uploads
              delete the files the session uploaded to providers' Files
              APIs (chat --uploads), with the API keys of the environment
              (the key that uploaded them: files of another key are kept and
              listed); records the deletions in the session (file or store)
  --api-key-env VAR
              with --delete-uploads: the key for a --base-url host
  -h, --help  show this help
`;

export async function runSession(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      entries: { type: 'boolean' },
      json: { type: 'boolean' },
      full: { type: 'boolean' },
      store: { type: 'string' },
      out: { type: 'string' },
      'delete-uploads': { type: 'boolean' },
      'api-key-env': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    io.out(sessionHelp);
    return 0;
  }
  const verb = positionals[0];
  if (verb === 'list' || verb === 'export' || verb === 'import') {
    if (values.store === undefined)
      throw new CliError(`panto session ${verb} needs --store\n\n${sessionHelp}`, EXIT_USAGE);
    return runStoreVerb(verb, positionals.slice(1), values.store, values.out, io);
  }
  const file = positionals[0];
  const what = values.store === undefined ? 'FILE' : 'ID';
  if (!file || positionals.length > 1)
    throw new CliError(`expected one ${what}\n\n${sessionHelp}`, EXIT_USAGE);
  if (values['delete-uploads']) {
    if (values.store === undefined) return deleteUploadsOfFile(file, values['api-key-env'], io);
    return deleteUploadsInStore(values.store, file, values['api-key-env'], io);
  }
  let session: LoadedSession;
  if (values.store !== undefined) {
    const store = await openStore(values.store);
    try {
      session = await store.load(file, { eager: values.entries ?? false });
    } finally {
      await store.close();
    }
  } else {
    try {
      // Lazy: the transcript needs the current conversation only. With --entries every line is read and checked now,
      // so a damaged line in an old branch fails here, before anything is printed.
      session = await loadSession(file, { eager: values.entries ?? false });
    } catch (err) {
      if (isSystemError(err)) throw new CliError(describeSystemError(err, file));
      throw err;
    }
  }
  const { header, conversation, warnings } = session;

  if (values.json) {
    io.out(
      abbreviateBase64(
        {
          header,
          warnings,
          messages: conversation.messages,
          ...(values.entries ? { entries: session.entries } : {}),
        },
        values.full ?? false,
      ),
    );
    return 0;
  }
  const tokens = estimateTokens(conversation.messages);
  io.out(
    `session ${header.id} (format v${header.version}), created ${header.created}` +
      (header.model ? `, model ${header.model}` : '') +
      (session.model !== undefined && session.model !== header.model ? ` (now ${session.model})` : '') +
      (header.workspace ? `, workspace ${header.workspace}` : ''),
  );
  const used = sumUsage(conversation.messages);
  io.out(
    `${conversation.messages.length} messages, ~${tokens} tokens in context (estimate)` +
      (used.inputTokens + used.outputTokens > 0 ? `; reported usage: ${formatUsage(used)}` : ''),
  );
  for (const w of warnings) io.out(`warning: ${w.message}`);
  if (values.entries) {
    io.out('');
    for (const e of session.entries) {
      io.out(`${e.id}  parent=${e.parentId ?? '-'}  ${e.timestamp}  ${describeEntry(e)}`);
    }
  }
  io.out('');
  io.out(renderCliTranscript(conversation.messages));
  return 0;
}

/** `--delete-uploads` on a session file (its lock held while deleting). */
async function deleteUploadsOfFile(file: string, keyVar: string | undefined, io: CliIo): Promise<number> {
  let log: SessionLog;
  try {
    log = await SessionLog.open(file);
  } catch (err) {
    if (isSystemError(err)) throw new CliError(describeSystemError(err, file));
    throw err;
  }
  try {
    return await deleteUploadsOf(log, keyVar, io);
  } finally {
    log.close();
  }
}

/** `--delete-uploads` on session `id` of a store (opened for appending: its lock held while deleting). */
async function deleteUploadsInStore(
  storeOption: string,
  id: string,
  keyVar: string | undefined,
  io: CliIo,
): Promise<number> {
  const store = await openStore(storeOption);
  try {
    const log = await store.open(id);
    try {
      return await deleteUploadsOf(log, keyVar, io);
    } finally {
      await log.close();
    }
  } finally {
    await store.close();
  }
}

/**
 * Delete the live files of the session through a Files API client per (api, base URL) it names, with the
 * environment's key for that host (cliApiKey's rule); the deletions are recorded (and flushed) in the session. Exit
 * 1 when a delete failed.
 */
async function deleteUploadsOf(log: SessionWriter, keyVar: string | undefined, io: CliIo): Promise<number> {
  const clients: ProviderFiles[] = [];
  const seen = new Set<string>();
  for (const e of (await log.uploadEntries?.()) ?? []) {
    const key = `${e.api} ${e.baseUrl}`;
    if (seen.has(key) || !(e.api in ENDPOINTS)) continue;
    seen.add(key);
    const api = e.api as ModelApi;
    const { apiKey, notice } = cliApiKey(api, e.baseUrl, keyVar, process.env);
    if (notice !== undefined) io.err(notice);
    const client = createProviderFiles({ api, baseUrl: e.baseUrl, env: {}, ...(apiKey ? { apiKey } : {}) });
    if (client !== undefined) clients.push(client);
  }
  const out = await deleteSessionUploads(log, clients);
  await log.flush();
  io.out(`deleted ${out.deleted.length} file${out.deleted.length === 1 ? '' : 's'}`);
  for (const f of out.failed) io.out(`failed: ${f.id} (${f.api}): ${f.error.message}`);
  for (const k of out.kept) {
    io.out(`kept: ${k.id} (${k.api} @ ${k.baseUrl}): uploaded with another API key than the environment's`);
  }
  return out.failed.length > 0 ? 1 : 0;
}

async function runStoreVerb(
  verb: 'list' | 'export' | 'import',
  args: string[],
  storeOption: string,
  out: string | undefined,
  io: CliIo,
): Promise<number> {
  if (args.length !== (verb === 'list' ? 0 : 1))
    throw new CliError(
      `panto session ${verb}: expected ${verb === 'list' ? 'no argument' : verb === 'export' ? 'one ID' : 'one FILE'}\n\n${sessionHelp}`,
      EXIT_USAGE,
    );
  const store = await openStore(storeOption);
  try {
    if (verb === 'list') {
      for (const s of await store.list())
        io.out(`${s.id}  ${s.created}  ${s.entries} entries${s.model ? `  ${s.model}` : ''}`);
      return 0;
    }
    if (verb === 'export') {
      const id = args[0] as string;
      if (out === undefined) {
        for await (const line of store.exportLines(id)) io.out(line);
        return 0;
      }
      const fh = await open(out, 'wx').catch((err: unknown) => {
        if (isSystemError(err)) throw new CliError(describeSystemError(err, out));
        throw err;
      });
      try {
        // Written a batch at a time: the session is never held whole.
        let batch: string[] = [];
        let size = 0;
        for await (const line of store.exportLines(id)) {
          batch.push(line);
          size += line.length;
          if (size < 1024 * 1024) continue;
          await fh.write(`${batch.join('\n')}\n`);
          batch = [];
          size = 0;
        }
        if (batch.length > 0) await fh.write(`${batch.join('\n')}\n`);
      } finally {
        await fh.close();
      }
      io.err(`exported session ${id} from ${shownStore(storeOption)} to ${out}`);
      return 0;
    }
    const file = args[0] as string;
    // Streamed: read, checked and stored a batch at a time (a failed import stores nothing).
    const lines = fileLines(file, {
      onEnd: (read) => {
        if (read.torn)
          io.err(
            `warning: ${file}:${read.torn.line}: last line is incomplete (a crash mid-write); not imported`,
          );
      },
    });
    let id: string;
    try {
      id = await store.importLines(lines);
    } catch (err) {
      if (isSystemError(err)) throw new CliError(describeSystemError(err, file));
      throw err;
    }
    io.out(id);
    io.err(`imported ${file} into ${shownStore(storeOption)} as session ${id}`);
    return 0;
  } finally {
    await store.close();
  }
}

function describeEntry(e: SessionEntry): string {
  switch (e.type) {
    case 'message':
      return `message (${e.message.role})`;
    case 'compaction':
      return `compaction (${e.tokensBefore} -> ${e.tokensAfter} tokens, kept from ${e.firstKeptEntryId ?? 'nothing'})`;
    case 'custom':
      return `custom (${e.customType})`;
    case 'model_change':
      return `model_change (${e.model})`;
    case 'upload':
      return `upload (${e.api} @ ${e.baseUrl}: ${e.files?.length ?? 0} uploaded, ${e.removed?.length ?? 0} removed)`;
  }
}
