// Resuming a store's session in another process (store-behaviour.ts). Uses the built library (dist/).
//   node resume-process.mjs STORE ID TEXT: open session ID of STORE (a PostgreSQL URL or a folder of JSONL files),
//   print {leafId, model, messages} as JSON, append a user message TEXT, close.
import { JsonlSessionStore, PostgresSessionStore } from '../../dist/index.js';

const [where, id, text] = process.argv.slice(2);
const store = /^postgres(ql)?:\/\//i.test(where)
  ? await PostgresSessionStore.connect(where)
  : new JsonlSessionStore(where);
const log = await store.open(id);
process.stdout.write(
  `${JSON.stringify({ leafId: log.leafId, model: log.model, messages: log.conversation.messages })}\n`,
);
log.appendMessage({ role: 'user', content: [{ type: 'text', text }] });
await log.close();
await store.close();
