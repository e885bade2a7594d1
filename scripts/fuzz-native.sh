#!/usr/bin/env bash
# Builds the libFuzzer target native/fuzz/fuzz-process.cpp (ASan + UBSan) and runs one campaign per input format for
# N seconds each (default 60): png, jpeg, webp, gif, bmp, pdf and "other" (the types we only recognise). Each campaign
# seeds its corpus from test/fixtures/media (each fixture as is, and with a few selector trailers appended so every
# option family of the harness is reached from the start) and uses the format's dictionary (native/fuzz/dict/).
#
# Usage: scripts/fuzz-native.sh [seconds-per-target] [target ...]
# Needs (Debian 12 packages): clang-14 and libclang-rt-14-dev (libFuzzer, ASan and UBSan runtimes), cmake, node.
# No network: the C deps come from cdeps/ (scripts/fetch-cdeps.mjs, run at configure time, reads its local cache).
# Environment: PANTO_FUZZ_BUILD (build dir, default /tmp/panto-fuzz-build), PANTO_FUZZ_WORK (corpora and artifacts,
# default /tmp/panto-fuzz-work; kept between runs, so a later run resumes from the grown corpus), CC/CXX (default
# clang/clang++), PANTO_FUZZ_RSS_MB (default 2048), PANTO_FUZZ_SEED (libFuzzer -seed; each target's seed is printed
# in the summary either way, so a run can be repeated: same seed, same corpus, same binary).
# Exit status: 0 when no target found anything; 1 when any did (crash, sanitizer report, timeout, OOM: the artifact
# path and its reproducer command are printed); 2 on a usage or build error.
# Runs at nice 10, one in-process fuzzer per target (no -jobs: that forks and logs to ./fuzz-N.log), PANTO_FUZZ_JOBS
# targets at a time (default: the number of cores). Peak RSS per target is what libFuzzer prints (stat::peak_rss_mb), capped by -rss_limit_mb.
set -euo pipefail

seconds="${1:-60}"
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [seconds-per-target] [target ...]" >&2; exit 2; }
shift || true
all_targets=(png jpeg webp gif bmp pdf other)
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=("${all_targets[@]}")

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${PANTO_FUZZ_BUILD:-/tmp/panto-fuzz-build}"
work="${PANTO_FUZZ_WORK:-/tmp/panto-fuzz-work}"
rss="${PANTO_FUZZ_RSS_MB:-2048}"
export CC="${CC:-clang}" CXX="${CXX:-clang++}"

echo "== building fuzz_process in $build"
mkdir -p "$build"  # (its logs go inside it: a build dir in the repository, as .ci/run's, leaves no stray files)
cmake -S "$repo" -B "$build" -DPANTO_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build/fuzz-configure.log" 2>&1 ||
  { cat "$build/fuzz-configure.log" >&2; exit 2; }
nice -n 10 cmake --build "$build" -j2 --target fuzz_process >"$build/fuzz-build.log" 2>&1 ||
  { tail -50 "$build/fuzz-build.log" >&2; exit 2; }
fuzzer="$build/fuzz_process"

# Fixture name patterns per target (test/fixtures/media/<pattern>).
fixtures_of() {
  case "$1" in
    png) echo "png-*" ;;
    jpeg) echo "jpeg-*" ;;
    webp) echo "webp-*" ;;
    gif) echo "gif-*" ;;
    bmp) echo "bmp-*" ;;
    pdf) echo "pdf-*" ;;
    other) echo "avif-* heic-* ico-* jxl-* svg-* tiff-*" ;;
    *) return 1 ;;
  esac
}

# Selector trailers (high byte, low byte; see the harness header): formats, sizes, caps, metadata, streaming off,
# qualities, discardable input, no part threads, hint, and codec mode at several budget limits.
trailers=("\x00\x00" "\x00\x05" "\x0a\x1a" "\x05\x26" "\x0f\x38" "\x10\xc5" "\x20\x47" "\x40\x17" "\x03\x94"
          "\x00\x29" "\x80\x00" "\x83\x00" "\x88\x00" "\x8f\x00")

# One campaign per target, PANTO_FUZZ_JOBS (default: the number of cores) at a time. Each writes its summary line to
# $work/<target>.summary and returns 1 when it found something.
run_target() {
  local t=$1 patterns corpus artifacts seeds b i tr before after rc stats execs speed seed log
  local extra=() dict=()
  patterns="$(fixtures_of "$t")"
  corpus="$work/corpus-$t"
  artifacts="$work/artifacts-$t/"
  mkdir -p "$corpus" "$artifacts"
  seeds="$work/seeds-$t"
  rm -rf "$seeds" && mkdir -p "$seeds"
  for p in $patterns; do
    for f in "$repo"/test/fixtures/media/$p; do
      [[ -f "$f" ]] || continue
      b="$(basename "$f")"
      cp "$f" "$seeds/$b"
      i=0
      for tr in "${trailers[@]}"; do
        { cat "$f"; printf "$tr"; } >"$seeds/$b.sel$i"
        i=$((i + 1))
      done
    done
  done
  [[ -n "${PANTO_FUZZ_SEED:-}" ]] && extra=("-seed=$PANTO_FUZZ_SEED")
  [[ -f "$repo/native/fuzz/dict/$t.dict" ]] && dict=("-dict=$repo/native/fuzz/dict/$t.dict")
  log="$work/$t.log"
  echo "== $t: ${seconds}s (corpus $corpus, log $log)"
  before="$(ls "$artifacts" | wc -l)"
  rc=0
  nice -n 10 "$fuzzer" "$corpus" "$seeds" "${dict[@]}" "${extra[@]}" -max_total_time="$seconds" -rss_limit_mb="$rss" -malloc_limit_mb=1024 -timeout=10 \
    -max_len=65536 -artifact_prefix="$artifacts" -print_final_stats=1 >"$log" 2>&1 || rc=$?
  after="$(ls "$artifacts" | wc -l)"
  stats="$(grep -E '^#[0-9]+.*(DONE|cov:)' "$log" | tail -1 || true)"
  execs="$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}' || true)"
  speed="$(grep -E '^stat::average_exec_per_sec' "$log" | awk '{print $2}' || true)"
  seed="$(grep -m1 -oE 'INFO: Seed: [0-9]+' "$log" | awk '{print $3}' || true)"
  echo "$t: seed=${seed:-?} execs=${execs:-?} exec/s=${speed:-?} | ${stats:-no stats}" >"$work/$t.summary"
  if [[ $rc -ne 0 || "$after" != "$before" ]]; then
    echo "!! $t found something (exit $rc); last lines of $log:"
    grep -E 'ERROR|SUMMARY|invariant broken|Test unit written|runtime error' "$log" | head -20 || true
    echo "   reproduce: $fuzzer <artifact>; minimise: $fuzzer -minimize_crash=1 -runs=10000 <artifact>"
    return 1
  fi
}

for t in "${targets[@]}"; do
  fixtures_of "$t" >/dev/null || { echo "unknown target '$t' (one of: ${all_targets[*]})" >&2; exit 2; }
done
jobs_max="${PANTO_FUZZ_JOBS:-$(nproc)}"
status=0 running=0
for t in "${targets[@]}"; do
  if [[ $running -ge $jobs_max ]]; then
    wait -n || status=1
    running=$((running - 1))
  fi
  run_target "$t" &
  running=$((running + 1))
done
while [[ $running -gt 0 ]]; do
  wait -n || status=1
  running=$((running - 1))
done

echo "== summary (${seconds}s per target, $jobs_max at a time)"
for t in "${targets[@]}"; do cat "$work/$t.summary" 2>/dev/null || echo "$t: no summary"; done
exit "$status"
