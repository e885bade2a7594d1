#!/usr/bin/env bash
# CI step for the WebAssembly fallback (called by .ci/run; also `npm run test:wasm`):
#   1. builds prebuilds/wasm32/ with scripts/build-wasm.sh (installs Debian's emscripten when missing)
#   2. runs the WHOLE media test suite (test/media) with the public API on the wasm backend
#      (PANTO_MEDIA_BACKEND=wasm), including test/media/wasm-*.test.ts (parity with the native addon, worker pool,
#      backend selection); PANTO_REQUIRE_WASM=1 makes a missing build a failure, never a silent skip
#   3. prints "wasm media suite: N passed, N failed" and the step's time
# Needs dist/ (npm run build:ts) and, for the parity tests, the native addon (they compare against it).
# Cost on 2 cores: build ~2 min from scratch (~10 s when cached), tests ~1.5 min.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
START=$(date +%s)
bash scripts/build-wasm.sh
[ -f dist/index.js ] || npm run build:ts
RESULTS=.vitest-wasm-results.json
rm -f "$RESULTS"
status=0
PANTO_MEDIA_BACKEND=wasm PANTO_REQUIRE_WASM=1 npx vitest run test/media \
  --reporter=default --reporter=json --outputFile.json="$RESULTS" || status=$?
node -e "
const r = JSON.parse(require('node:fs').readFileSync('$RESULTS', 'utf8'));
const skipped = r.numPendingTests + r.numTodoTests;
console.log(\`wasm media suite: \${r.numPassedTests} passed, \${r.numFailedTests} failed\` + (skipped ? \`, \${skipped} skipped\` : ''));
"
echo "ci-wasm: $(($(date +%s) - START)) s"
exit "$status"
