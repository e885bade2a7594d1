// A second process writing to a PostgreSQL session (postgres-store.test.ts). Uses the built library (dist/).
//   append ID PREFIX N: open the session (waiting for its lock), append N user messages "PREFIX i", close.
//   flood ID: open the session and append ~100 KB messages until killed, printing a line after each stored one.
import { PostgresSessionStore } from '../../dist/index.js';

const [mode, id, prefix, count] = process.argv.slice(2);
const store = await PostgresSessionStore.connect(process.env.PANTO_TEST_PG_URL);
const log = await store.open(id, { lockTimeoutMs: 10_000 });
const say = (text) => ({ role: 'user', content: [{ type: 'text', text }] });
if (mode === 'append') {
  for (let i = 0; i < Number(count); i++) log.appendMessage(say(`${prefix} ${i}`));
  await log.close();
  await store.close();
} else {
  for (let i = 0; ; i++) {
    log.appendMessage(say(`${i} ${'y'.repeat(100_000)}`));
    await log.flush();
    process.stdout.write(`${i}\n`);
  }
}
