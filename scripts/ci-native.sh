#!/usr/bin/env bash
# Native CI steps for the media core (called by .ci/run; also runnable by hand from any directory):
#   1. installs the Debian packages it needs when missing (idempotent; root or sudo)
#   2. configures ONE clang tree with ASan + UBSan + libFuzzer instrumentation (CMakeLists.txt: PANTO_SANITIZE=ON,
#      PANTO_FUZZ=ON; cmake-js configures it so it can build the addon too) and builds the native unit tests, the
#      fuzzer and the Node addon from it (the C libraries compiled once)
#   3. runs ctest (native unit tests over test/fixtures/media, under ASan + UBSan), drives the addon's Node-API surface
#      with scripts/native-asan-smoke.mjs (fixtures, truncations, byte flips, a pixel bomb; 16 calls in flight) with
#      the ASan runtime preloaded, then the hostile-input suite (scripts/test-hostile-media.mjs; heavy 100 MP decodes
#      skipped) on the same addon
#   4. runs the fuzzer over the whole decode path for PANTO_FUZZ_SECONDS (default 60) seeded with the fixtures;
#      any crash, sanitizer report, leak, timeout or OOM fails the script (the reproducer is kept, path printed)
#   5. prints a summary
# Environment: PANTO_FUZZ_SECONDS (default 60), PANTO_NATIVE_BUILD_DIR (default build-ci-native),
#              PANTO_CDEPS_SRC (optional, see scripts/fetch-cdeps.mjs), JOBS (default: nproc).
# Cost on 2 cores: ~2-3 min build + ctest + 60 s fuzz.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD="${PANTO_NATIVE_BUILD_DIR:-build-ci-native}"
FUZZ_SECONDS="${PANTO_FUZZ_SECONDS:-60}"
JOBS="${JOBS:-$(nproc)}"
START=$(date +%s)
log() { printf '\n==> %s\n' "$*"; }

# --- 1. system packages ----------------------------------------------------------------------------------------------
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
apt_install() {
  local missing=()
  for p in "$@"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p"); done
  if [ "${#missing[@]}" -gt 0 ]; then
    log "installing ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
}
apt_install cmake make g++ clang ca-certificates
CLANG_MAJOR="$(clang -dumpversion | cut -d. -f1)"
FUZZ_RT="$(clang --print-runtime-dir 2>/dev/null)/libclang_rt.fuzzer-x86_64.a"
if [ ! -f "$FUZZ_RT" ] && ! ls "$(clang --print-resource-dir)"/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  apt_install "libclang-rt-${CLANG_MAJOR}-dev"
fi

# --- 2. configure + build --------------------------------------------------------------------------------------------
# One tree for all three targets, so the C libraries are compiled once: cmake-js configures it (Node-API headers for
# the addon), cmake builds it.
log "configure $BUILD (clang $CLANG_MAJOR, ASan+UBSan+libFuzzer)"
mkdir -p "$BUILD"
CC=clang CXX=clang++ npx --no-install cmake-js configure --out "$BUILD" --config RelWithDebInfo \
  --CDPANTO_SANITIZE=ON --CDPANTO_FUZZ=ON >"$BUILD/configure.log" 2>&1 || { tail -n 30 "$BUILD/configure.log"; exit 1; }
log "build ($JOBS jobs)"
cmake --build "$BUILD" -j "$JOBS" --target panto_native_tests fuzz_process panto_media
ADDON="$BUILD/RelWithDebInfo/panto_media.node"
BUILD_DONE=$(date +%s)

# --- 3. ctest --------------------------------------------------------------------------------------------------------
log "ctest (ASan + UBSan)"
CTEST_STATUS=0
ctest --test-dir "$BUILD" --output-on-failure -j "$JOBS" || CTEST_STATUS=$?

log "ASan+UBSan Node addon + native-asan-smoke"
# The smoke takes the media policy defaults from the built media entry (src/media/policy.ts, bundled in dist/).
[ -f dist/media/index.js ] || npm run build:ts
SMOKE_STATUS=0
LD_PRELOAD="$(clang -print-file-name=libclang_rt.asan-x86_64.so)" \
  ASAN_OPTIONS="detect_leaks=0:abort_on_error=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
  node scripts/native-asan-smoke.mjs "$ADDON" || SMOKE_STATUS=$?
HOSTILE_STATUS=0
if [ "$SMOKE_STATUS" = 0 ]; then
  log "hostile-input suite on the ASan+UBSan addon (one child per case)"
  PANTO_HOSTILE_ADDON="$(cd "$(dirname "$ADDON")" && pwd)/panto_media.node" \
    PANTO_HOSTILE_PRELOAD="$(clang -print-file-name=libclang_rt.asan-x86_64.so)" PANTO_HOSTILE_SANITIZED=1 \
    ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:allocator_may_return_null=1" \
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    node scripts/test-hostile-media.mjs || HOSTILE_STATUS=$?
fi
CTEST_DONE=$(date +%s)

# --- 4. fuzz ---------------------------------------------------------------------------------------------------------
log "fuzz_process for ${FUZZ_SECONDS}s"
SEEDS="$BUILD/fuzz-seeds"
CORPUS="$BUILD/fuzz-corpus"
ARTIFACTS="$BUILD/fuzz-artifacts"
rm -rf "$SEEDS" "$ARTIFACTS"
mkdir -p "$SEEDS" "$CORPUS" "$ARTIFACTS"
find test/fixtures/media -maxdepth 1 -type f ! -name '*.md' -exec cp {} "$SEEDS/" \;
FUZZ_LOG="$BUILD/fuzz.log"
FUZZ_STATUS=0
ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:symbolize=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
  "$BUILD/fuzz_process" -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10 \
  -max_len=262144 -print_final_stats=1 -artifact_prefix="$ARTIFACTS/" "$CORPUS" "$SEEDS" >"$FUZZ_LOG" 2>&1 ||
  FUZZ_STATUS=$?
FUZZ_DONE=$(date +%s)
if [ "$FUZZ_STATUS" != 0 ]; then
  echo "fuzzer FAILED (exit $FUZZ_STATUS); last lines of $FUZZ_LOG:"
  tail -n 60 "$FUZZ_LOG"
  ls -la "$ARTIFACTS"
  echo "reproduce: $BUILD/fuzz_process $ARTIFACTS/<file>"
fi
RUNS="$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$FUZZ_LOG" | grep -Eo '[0-9]+$' || echo '?')"
COV="$(grep -Eo 'cov: [0-9]+' "$FUZZ_LOG" | tail -n1 | grep -Eo '[0-9]+' || echo '?')"

# --- 5. summary ------------------------------------------------------------------------------------------------------
status_word() { if [ "$1" = 0 ]; then echo PASS; else echo "FAIL (exit $1)"; fi; }
cat <<EOF

==================== native CI summary ====================
build (ASan+UBSan+fuzzer, clang $CLANG_MAJOR)   $((BUILD_DONE - START)) s
ctest native unit tests + ASan addon smoke  ctest $(status_word "$CTEST_STATUS"), addon $(status_word "$SMOKE_STATUS"), hostile $(status_word "$HOSTILE_STATUS")   $((CTEST_DONE - BUILD_DONE)) s
fuzz_process ${FUZZ_SECONDS}s                           $(status_word "$FUZZ_STATUS")   $((FUZZ_DONE - CTEST_DONE)) s, ${RUNS} runs, cov ${COV}, corpus $(find "$CORPUS" -type f | wc -l) files
log: $FUZZ_LOG
===========================================================
EOF
[ "$CTEST_STATUS" = 0 ] && [ "$SMOKE_STATUS" = 0 ] && [ "$HOSTILE_STATUS" = 0 ] && [ "$FUZZ_STATUS" = 0 ]
