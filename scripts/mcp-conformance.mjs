// Runs the MCP project's conformance suite (@modelcontextprotocol/conformance, server scenarios) against
// `panto mcp serve --http` serving the conformance Lua tools in test/fixtures/mcp/lua. Needs `npm run build:ts`.
//
// COVERED are the scenarios for what the server offers (tools: text, image, embedded resource, mixed, error, progress,
// JSON Schema 2020-12; lifecycle, ping, Streamable HTTP streams, DNS-rebinding protection); each must pass.
// The rest test features a tool server does not have (resources, prompts, completion, logging, sampling,
// elicitation, audio tool output); `--all` runs and reports them, never required.
// Exit 0 when every covered scenario passes. Cost: ~40-90 s on 2 busy cores.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const hooks = path.join(root, 'scripts/mcp-conformance/register.mjs');

const COVERED = [
  'server-initialize',
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
];
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
  'prompts-list',
  'prompts-get-simple',
  'prompts-get-with-args',
  'prompts-get-embedded-resource',
  'prompts-get-with-image',
  'server-sse-polling',
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

/** Run one scenario; returns {passed, failed, warnings} from the CLI's own summary line. */
function run(scenario, cwd) {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--import', hooks, cli, 'server', '--url', url, '--scenario', scenario],
      {
        cwd,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
    });
    child.stderr.on('data', (c) => {
      out += c;
    });
    child.on('exit', () => {
      const m = /Passed: (\d+)\/(\d+), (\d+) failed, (\d+) warnings/.exec(out);
      resolve(
        m
          ? { passed: Number(m[1]), failed: Number(m[3]), warnings: Number(m[4]), out }
          : { passed: 0, failed: 1, warnings: 0, out },
      );
    });
  });
}

const work = mkdtempSync(path.join(tmpdir(), 'panto-mcp-conformance-'));
let bad = 0;
try {
  console.log(`conformance against ${url}`);
  // Three scenarios at a time: each is its own short-lived client process.
  const results = new Map();
  const queue = [...COVERED];
  await Promise.all(
    [1, 2, 3].map(async () => {
      for (let s = queue.shift(); s !== undefined; s = queue.shift()) results.set(s, await run(s, work));
    }),
  );
  for (const s of COVERED) {
    const r = results.get(s);
    const ok = r.failed === 0 && r.passed > 0;
    if (!ok) {
      bad++;
      console.log(r.out);
    }
    console.log(
      `${ok ? 'PASS' : 'FAIL'}  ${s}: ${r.passed} passed, ${r.failed} failed, ${r.warnings} warnings`,
    );
  }
  if (process.argv.includes('--all')) {
    for (const s of NOT_OFFERED) {
      const r = await run(s, work);
      console.log(`n/a   ${s}: ${r.passed} passed, ${r.failed} failed, ${r.warnings} warnings (not offered)`);
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
console.log(bad === 0 ? `all ${COVERED.length} covered scenarios pass` : `${bad} covered scenario(s) failed`);
process.exit(bad === 0 ? 0 : 1);
