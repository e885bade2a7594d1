// Runs the MCP project's conformance suite (@modelcontextprotocol/conformance, server scenarios) against
// `panto mcp serve --http` serving the conformance Lua tools in test/fixtures/mcp/lua. Needs `npm run build:ts`.
//
// Both protocol revisions, each scenario at its own wire version (`--spec-version`): 2025-11-25 (the initialize
// handshake, a session) and 2026-07-28 (stateless, per-request `_meta`). COVERED are the scenarios for what the server
// offers (tools: text, image, embedded resource, mixed, error, progress, JSON Schema 2020-12; lifecycle, Streamable
// HTTP streams, DNS-rebinding protection; for 2026-07-28 also statelessness, caching hints and header validation);
// each must pass, except the checks listed in NOT_APPLICABLE (the suite itself calls them not testable against a
// server without diagnostic tools, or they ask for prompts/resources this server does not offer). The rest test
// features a tool server does not have (resources, prompts, completion, logging, sampling, elicitation, audio tool
// output, input_required round trips: Lua tools never ask the client for input); `--all` runs and reports them, never
// required. Exit 0 when every covered scenario passes. Cost: ~60-120 s on 2 busy cores.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const hooks = path.join(root, 'scripts/mcp-conformance/register.mjs');

const COVERED = {
  '2025-11-25': [
    'server-initialize',
    'server-session-lifecycle',
    'ping',
    'tools-list',
    'tools-call-simple-text',
    'tools-call-image',
    'tools-call-embedded-resource',
    'tools-call-mixed-content',
    'tools-call-error',
    'tools-call-with-progress',
    'json-schema-2020-12',
    'server-sse-multiple-streams',
    'dns-rebinding-protection',
  ],
  '2026-07-28': [
    'server-stateless',
    'tools-list',
    'tools-call-simple-text',
    'tools-call-image',
    'tools-call-embedded-resource',
    'tools-call-mixed-content',
    'tools-call-error',
    'tools-call-with-progress',
    'json-schema-2020-12',
    'server-sse-multiple-streams',
    'dns-rebinding-protection',
    'caching',
    'http-header-validation',
  ],
};
/** Failing checks of covered scenarios that do not count, and why. */
const NOT_APPLICABLE = {
  // "Not testable": they need the suite's diagnostic tools (one that asks for sampling, one that logs).
  'sep-2575-server-rejects-undeclared-capability': 'needs a tool that requires a client capability',
  'sep-2575-missing-capability-http-400': 'needs a tool that requires a client capability',
  'sep-2575-http-server-no-independent-requests-on-stream': 'needs a tool that asks the client for input',
  'sep-2575-server-no-log-without-loglevel': 'needs a tool that logs',
  // Cache hints of lists this server does not offer (it answers them -32601).
  'sep-2549-prompts-list-caching-hints': 'no prompts',
  'sep-2549-resources-list-caching-hints': 'no resources',
  'sep-2549-resources-templates-list-caching-hints': 'no resources',
};
const NOT_OFFERED = [
  'logging-set-level',
  'completion-complete',
  'tools-call-audio',
  'tools-call-with-logging',
  'tools-call-sampling',
  'tools-call-elicitation',
  'elicitation-sep1034-defaults',
  'elicitation-sep1330-enums',
  'resources-list',
  'resources-read-text',
  'resources-read-binary',
  'resources-templates-read',
  'resources-subscribe',
  'resources-unsubscribe',
  'sep-2164-resource-not-found',
  'prompts-list',
  'prompts-get-simple',
  'prompts-get-with-args',
  'prompts-get-embedded-resource',
  'prompts-get-with-image',
  'server-sse-polling',
  'http-custom-header-server-validation',
];

const server = spawn(
  process.execPath,
  [
    path.join(root, 'dist/cli/main.js'),
    'mcp',
    'serve',
    '--http',
    '0',
    '--tools',
    path.join(root, 'test/fixtures/mcp/lua'),
    '--workspace',
    path.join(root, 'test/fixtures/media'),
    // The suite's client sends no bearer token.
    '--no-auth',
  ],
  { stdio: ['ignore', 'ignore', 'pipe'] },
);
const url = await new Promise((resolve, reject) => {
  let err = '';
  const timer = setTimeout(() => reject(new Error(`panto mcp serve did not start: ${err}`)), 30_000);
  server.stderr.on('data', (c) => {
    err += c;
    const m = /at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(err);
    if (m) {
      clearTimeout(timer);
      resolve(m[1]);
    }
  });
  server.on('exit', (code) => reject(new Error(`panto mcp serve exited (${code}): ${err}`)));
});

/** Run one scenario at one revision; returns {passed, failed, warnings, failing check ids} from the CLI's output. */
function run(scenario, version, cwd) {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--import', hooks, cli, 'server', '--url', url, '--scenario', scenario, '--spec-version', version],
      { cwd, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
    });
    child.stderr.on('data', (c) => {
      out += c;
    });
    child.on('exit', () => {
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the CLI colours its output
      const plain = out.replace(/\x1b\[[0-9;]*m/g, '');
      const failing = [...plain.matchAll(/\[([\w-]+)\s*\] FAILURE/g)].map((m) => m[1]);
      const m = /Passed: (\d+)\/(\d+), (\d+) failed, (\d+) warnings/.exec(plain);
      resolve(
        m
          ? { passed: Number(m[1]), failed: Number(m[3]), warnings: Number(m[4]), failing, out }
          : { passed: 0, failed: 1, warnings: 0, failing, out },
      );
    });
  });
}

const work = mkdtempSync(path.join(tmpdir(), 'panto-mcp-conformance-'));
let bad = 0;
try {
  console.log(`conformance against ${url}`);
  // Three scenarios at a time: each is its own short-lived client process.
  const jobs = Object.entries(COVERED).flatMap(([v, list]) => list.map((s) => [s, v]));
  const results = new Map();
  const queue = [...jobs];
  await Promise.all(
    [1, 2, 3].map(async () => {
      for (let j = queue.shift(); j !== undefined; j = queue.shift()) {
        results.set(j.join(' @ '), await run(j[0], j[1], work));
      }
    }),
  );
  for (const j of jobs) {
    const r = results.get(j.join(' @ '));
    const excused = r.failing.filter((id) => id in NOT_APPLICABLE);
    const ok = r.passed > 0 && r.failed === excused.length;
    if (!ok) {
      bad++;
      console.log(r.out);
    }
    const note = excused.length > 0 ? ` (not applicable: ${excused.join(', ')})` : '';
    console.log(
      `${ok ? 'PASS' : 'FAIL'}  ${j[0]} @ ${j[1]}: ${r.passed} passed, ${r.failed} failed, ${r.warnings} warnings${note}`,
    );
  }
  if (process.argv.includes('--all')) {
    for (const s of NOT_OFFERED) {
      for (const v of Object.keys(COVERED)) {
        const r = await run(s, v, work);
        console.log(
          `n/a   ${s} @ ${v}: ${r.passed} passed, ${r.failed} failed, ${r.warnings} warnings (not offered)`,
        );
      }
    }
  } else {
    console.log(
      `not run (features a tool server does not offer; --all runs them): ${NOT_OFFERED.join(', ')}`,
    );
  }
} finally {
  server.kill('SIGTERM');
  rmSync(work, { recursive: true, force: true });
}
const total = Object.values(COVERED).flat().length;
console.log(bad === 0 ? `all ${total} covered scenario runs pass` : `${bad} covered scenario run(s) failed`);
process.exit(bad === 0 ? 0 : 1);
