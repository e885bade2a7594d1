/**
 * The heavy cases of the `textInFile` hostile pass (too big for the unit run: about 300 MB of peak RSS, seconds of
 * CPU). Run by name after `npm run build:ts`: `node test/session/text-in-file-heavy.mjs`. Exits 1 when a check fails.
 * - One 64 MiB text on one line: the default settings leave it in the file (the file is >= 64 MiB); the part's
 *   `text` reads back the exact string (compared by SHA-256 and length), and JSON of the session equals the one
 *   loaded with `textInFile: false`.
 * - A million short texts (1000 lines of 1000 parts, each below `minTextBytes`) with texts forced in the file
 *   (`minFileBytes: 0`): none is left in the file, and the session equals the one loaded with `textInFile: false`.
 * - (first) A 6 MB line of `],` (more closes than opens): the same error as with `textInFile: false`, and the load's heap
 *   raises the peak RSS by less than 100 MB (the scan used to keep state at every negative depth: 600 MB and 18 s).
 * - One line of 160k long text parts (24 MB): the same session as `textInFile: false`, loaded in less than 4x its
 *   time (a record lookup per text key scanned every record: 40k parts took 5x, 160k parts about 20x).
 * Prints each case's wall time and the process's peak RSS.
 */
import { createHash } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const lib = await import(fileURLToPath(new URL('../../dist/index.js', import.meta.url)));
const dir = mkdtempSync(join(tmpdir(), 'panto-text-in-file-heavy-'));
const HEADER = JSON.stringify({ type: 'session', version: 1, id: 'h', created: '2026-01-01T00:00:00Z' });
const sha = (s) => createHash('sha256').update(s).digest('hex');
const backed = (part) => typeof Object.getOwnPropertyDescriptor(part, 'text')?.get === 'function';
let failed = 0;
const check = (ok, what) => {
  if (!ok) {
    failed++;
    console.error(`FAIL: ${what}`);
  }
};
const timed = async (name, fn) => {
  const t0 = performance.now();
  await fn();
  console.log(`${name}: ${Math.round(performance.now() - t0)} ms`);
};

try {
  await timed('6 MB line of "],"', async () => {
    const path = join(dir, 'closes.jsonl');
    const fd = openSync(path, 'w');
    writeSync(fd, `${HEADER}\n${'],'.repeat(3_000_000)}\n`);
    closeSync(fd);
    const error = async (textInFile) => {
      try {
        await lib.loadSession(path, { eager: true, textInFile });
        return 'loaded';
      } catch (err) {
        return `${err.code} ${err.message}`;
      }
    };
    const plain = await error(false);
    // Peak RSS (monotonic): this case runs first, so the peak before it is the loads of `plain` just above.
    const before = process.resourceUsage().maxRSS * 1024;
    const got = await error({ minFileBytes: 0 });
    const peak = process.resourceUsage().maxRSS * 1024;
    check(got === plain, `same error: ${got.slice(0, 120)} / ${plain.slice(0, 120)}`);
    check(peak - before < 100 * 1024 * 1024, `peak RSS grew by ${Math.round((peak - before) / 1048576)} MB`);
    rmSync(path);
  });
  await timed('64 MiB single text', async () => {
    const path = join(dir, 'big.jsonl');
    const unit = 'abcdefghijklmnopqrstuvwxyz0123456789 ÿ日本\\"\n😀'; // escapes, 2-, 3- and 4-byte UTF-8
    const literal = JSON.stringify(unit).slice(1, -1);
    const reps = Math.ceil((64 * 1024 * 1024) / Buffer.byteLength(literal));
    const fd = openSync(path, 'w');
    writeSync(
      fd,
      `${HEADER}\n{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"`,
    );
    const block = literal.repeat(1024);
    let left = reps;
    while (left >= 1024) {
      writeSync(fd, block);
      left -= 1024;
    }
    writeSync(fd, literal.repeat(left));
    writeSync(fd, '"}]}}\n');
    closeSync(fd);
    const want = createHash('sha256');
    for (let i = 0; i < Math.floor(reps / 1024); i++) want.update(unit.repeat(1024));
    want.update(unit.repeat(reps % 1024));
    const wantHash = want.digest('hex');

    const s = await lib.loadSession(path);
    const part = s.conversation.messages[0].content[0];
    check(backed(part), 'the 64 MiB text is left in the file by default');
    const text = part.text;
    check(text.length === unit.length * reps, `length ${text.length} !== ${unit.length * reps}`);
    check(sha(text) === wantHash, 'the text read back is the text written');
    const plain = await lib.loadSession(path, { textInFile: false });
    check(
      sha(JSON.stringify(plain.conversation)) === sha(JSON.stringify(s.conversation)),
      'JSON equals textInFile:false',
    );
    rmSync(path);
  });

  await timed('1e6 short texts', async () => {
    const path = join(dir, 'many.jsonl');
    const fd = openSync(path, 'w');
    writeSync(fd, `${HEADER}\n`);
    for (let l = 0; l < 1000; l++) {
      const parts = Array.from(
        { length: 1000 },
        (_, i) => `{"type":"text","text":"t${(l * 1000 + i) % 97}"}`,
      );
      const parent = l === 0 ? 'null' : `"m${l - 1}"`;
      writeSync(
        fd,
        `{"type":"message","id":"m${l}","parentId":${parent},"timestamp":"t","message":{"role":"user","content":[${parts.join(',')}]}}\n`,
      );
    }
    closeSync(fd);
    const s = await lib.loadSession(path, { textInFile: { minFileBytes: 0 } });
    let count = 0;
    let inFile = 0;
    for (const m of s.conversation.messages)
      for (const p of m.content) {
        count++;
        if (backed(p)) inFile++;
      }
    check(count === 1_000_000, `parts: ${count}`);
    check(inFile === 0, `short texts left in the file: ${inFile}`);
    const plain = await lib.loadSession(path, { textInFile: false });
    check(
      sha(JSON.stringify(plain.conversation)) === sha(JSON.stringify(s.conversation)),
      'JSON equals textInFile:false',
    );
    rmSync(path);
  });

  await timed('160k long parts on one line', async () => {
    const path = join(dir, 'parts.jsonl');
    const part = `{"type":"text","text":"${'x'.repeat(140)}"}`;
    const fd = openSync(path, 'w');
    writeSync(
      fd,
      `${HEADER}\n{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":[`,
    );
    writeSync(fd, Array(160_000).fill(part).join(','));
    writeSync(fd, ']}}\n');
    closeSync(fd);
    const load = async (textInFile) => {
      const t0 = performance.now();
      const s = await lib.loadSession(path, { eager: true, textInFile });
      return { ms: performance.now() - t0, hash: sha(JSON.stringify(s.conversation)) };
    };
    const plain = await load(false);
    const inFile = await load({ minFileBytes: 0 });
    console.log(`  in memory ${Math.round(plain.ms)} ms, in the file ${Math.round(inFile.ms)} ms`);
    check(inFile.hash === plain.hash, 'JSON equals textInFile:false');
    check(inFile.ms < 4 * plain.ms, 'loads in less than 4x the in-memory time');
    rmSync(path);
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`peak RSS: ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`);
if (failed > 0) process.exit(1);
console.log('ok');
