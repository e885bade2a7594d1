#!/usr/bin/env bash
# Builds the WebAssembly fallback of the media addon: the same C++ core and the same pinned C sources as the native
# build — everything from the one source list, scripts/native-sources.cjs (core + cdeps + libwebp + libdeflate; stb
# headers; sources extracted into git-ignored cdeps/src by scripts/fetch-cdeps.mjs) — behind the small C ABI in
# native/wasm/panto-wasm.cpp, compiled with Debian's emscripten. Output (git-ignored, shipped in the npm package):
#   prebuilds/wasm32/panto-media.cjs   emscripten's JS glue (CommonJS, MODULARIZE, node-only)
#   prebuilds/wasm32/panto-media.wasm  the module
#   prebuilds/wasm32/BUILD-INFO        compiler version and flags
# Objects are cached in build-wasm/obj-<flags hash>/ and rebuilt when their source (or, for our C++, any core
# header) is newer. Installs emscripten with apt-get when em++ is missing (root or sudo).
# Environment: JOBS (default nproc), PANTO_WASM_SIMD=1 adds -msimd128, PANTO_WASM_OUT (default prebuilds/wasm32).
# Cost on 2 idle cores: ~3 min from scratch (emscripten's first run also builds its system libraries into its
# cache), seconds when nothing changed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
JOBS="${JOBS:-$(nproc)}"
OUT="${PANTO_WASM_OUT:-prebuilds/wasm32}"
START=$(date +%s)
log() { printf 'build-wasm: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# --- emscripten ------------------------------------------------------------------------------------------------------
if ! command -v em++ >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" != 0 ] && SUDO="sudo"
  command -v apt-get >/dev/null 2>&1 || die "em++ not found and no apt-get: install emscripten (>= 3.1.6) first"
  log "installing emscripten (apt)"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends emscripten >/dev/null
fi
# Debian's emscripten needs its own node modules (node-acorn) when run by a Node that does not look in /usr/share/nodejs.
export NODE_PATH="/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}"
EM_VERSION="$(em++ --version | sed -n 1p)"

# --- sources (the one list) ----------------------------------------------------------------------------------------
# One "compiler<TAB>source<TAB>flag set" line per translation unit: C libraries with cdepsCflags and their include
# dirs; our C++ (core, cdeps TU, the C ABI) with cflags and the core/deps include dirs. The *_sse41.c files,
# libdeflate's per-CPU feature detection and libjpeg-turbo's SIMD are x86/arm only, so they are not part of a wasm32
# build (libjpeg-turbo gets its C-only dispatcher, jsimd_none.c).
SOURCES="$(node -e '
  const s = require("./scripts/native-sources.cjs");
  const I = (dirs) => dirs.map((d) => `-I${d}`).join(" ");
  const D = s.defines.map((d) => `-D${d}`).join(" ");
  const c = (files, inc) => files.map((f) => ["emcc", f, `${s.cdepsCflags.join(" ")} ${D} ${I(inc)}`].join("\t"));
  // PANTO_HOST_MEMORY_POOL: the process-wide memory pool and the abort flag live with the JS host (budget.h).
  const cxxFlags = `${s.cflags.join(" ")} ${D} -DPANTO_HOST_MEMORY_POOL=1 ${I([...s.coreIncludeDirs, ...s.includeDirs()])}`;
  console.log([
    ...c(s.libwebp.sources(), s.libwebp.includeDirs()),
    ...c(s.libdeflate.sources(), s.libdeflate.includeDirs()),
    ...s.zlib.sources().map((f) => ["emcc", f, `${s.cdepsCflags.join(" ")} ${D} ${s.zlib.defines.map((d) => `-D${d}`).join(" ")}`].join("\t")),
    ...c([...s.libjpegTurbo.sources(), ...s.libjpegTurbo.noSimdSources()], s.libjpegTurbo.includeDirs()),
    ...[...s.core, ...s.cdeps, "native/wasm/panto-wasm.cpp"].map((f) => ["em++", f, cxxFlags].join("\t")),
  ].join("\n"));')"

# --- compile -------------------------------------------------------------------------------------------------------
SIMD=""; [ "${PANTO_WASM_SIMD:-0}" = 1 ] && SIMD="-msimd128"
# The list's flags keep -fexceptions (the core catches std::bad_alloc; the C ABI catches everything; emscripten's
# JS-assisted EH, as Debian's 3.1.6 has no wasm-EH libc++abi). No -pthread: std::thread throws std::system_error and
# the core then does the same work on one thread; parallelism comes from worker_threads instead.
HASH="$(printf '%s|%s|%s' "$EM_VERSION" "$SIMD" "$SOURCES" | sha256sum | cut -c1-12)"
OBJ="build-wasm/obj-$HASH"
mkdir -p "$OBJ" "$OUT"
printf '%s\n' "$SOURCES" > "$OBJ/jobs.txt"
NEWEST_HEADER="$ROOT/native/core/$(cd native/core && ls -t -- *.h | head -1)"
export OBJ SIMD NEWEST_HEADER
compile_one() {
  local cc="$1" src="$2" flags="$3"
  local o; o="$OBJ/$(printf '%s' "$src" | sha256sum | cut -c1-16)-$(basename "$src").o"
  # Up to date when newer than its source and (C++: our code) than every core header.
  if [ -f "$o" ] && [ "$o" -nt "$src" ] && { [ "$cc" = emcc ] || [ ! "$NEWEST_HEADER" -nt "$o" ]; }; then
    echo "$o"; return
  fi
  # shellcheck disable=SC2086
  "$cc" $flags $SIMD -c "$src" -o "$o.tmp"
  mv "$o.tmp" "$o"; echo "$o"
}
export -f compile_one
log "compiling $(wc -l < "$OBJ/jobs.txt") sources with $EM_VERSION ($JOBS jobs)"
objects="$(tr '\t' '\n' < "$OBJ/jobs.txt" | xargs -d '\n' -n 3 -P "$JOBS" bash -c 'compile_one "$0" "$1" "$2"')"

# --- link ------------------------------------------------------------------------------------------------------------
# MODULARIZE + sync compilation: the glue's factory fills the object it is given, so a caller can instantiate
# synchronously (sniffMedia/probeMedia are synchronous). NODEJS_CATCH_*=0: a library must not install process-wide
# uncaughtException/unhandledRejection handlers. ABORTING_MALLOC=0: an allocation beyond the 4 GiB wasm32 limit
# returns null (std::bad_alloc -> ERR_MEDIA_TOO_LARGE) instead of aborting the instance.
LDFLAGS=(-O3 $SIMD -fexceptions
  -sMODULARIZE=1 -sEXPORT_NAME=pantoMedia -sENVIRONMENT=node -sWASM_ASYNC_COMPILATION=0
  -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB -sABORTING_MALLOC=0 -sFILESYSTEM=0
  -sNODEJS_CATCH_EXIT=0 -sNODEJS_CATCH_REJECTION=0 -sINVOKE_RUN=0
  -sEXPORTED_FUNCTIONS=_pw_alloc,_pw_free,_pw_result_free,_pw_sniff,_pw_probe,_pw_process,_pw_decode_to_rgba,_pw_default_memory_cap
  -sEXPORTED_RUNTIME_METHODS=HEAPU8,HEAPU32,UTF8ToString,stringToUTF8,lengthBytesUTF8)
# Relink only when an object is newer than the last link (the link runs wasm-opt: the slow part of a no-op build).
if [ -f "$OBJ/panto-media.wasm" ] && [ "$(cat "$OBJ/ldflags" 2>/dev/null)" = "${LDFLAGS[*]}" ] &&
  [ -z "$(find "$OBJ" -name '*.o' -newer "$OBJ/panto-media.wasm" | head -1)" ]; then
  log "link up to date"
else
  log "linking"
  # shellcheck disable=SC2086
  em++ "${LDFLAGS[@]}" $objects -o "$OBJ/panto-media.cjs"
  printf '%s' "${LDFLAGS[*]}" > "$OBJ/ldflags"
fi
cp "$OBJ/panto-media.cjs" "$OBJ/panto-media.wasm" "$OUT/"
{
  echo "compiler: $EM_VERSION${SIMD:+ $SIMD}"
  echo "ldflags: ${LDFLAGS[*]}"
  echo "sources: $(grep -v '^ ' cdeps/src/STAMP 2>/dev/null | tr '\n' ';')"
} > "$OUT/BUILD-INFO"
log "done in $(($(date +%s) - START)) s: $OUT/panto-media.wasm $(stat -c %s "$OUT/panto-media.wasm") bytes, $OUT/panto-media.cjs $(stat -c %s "$OUT/panto-media.cjs") bytes"
