#!/usr/bin/env bash
# Builds the WebAssembly fallback of the media addon: the same C++ core (scripts/native-sources.cjs: core + cdeps)
# plus libwebp and libdeflate from their pinned sources, behind the small C ABI in native/wasm/panto-wasm.cpp,
# compiled with Debian's emscripten. Output (git-ignored, shipped in the npm package's files):
#   prebuilds/wasm32/panto-media.cjs   emscripten's JS glue (CommonJS, MODULARIZE, node-only)
#   prebuilds/wasm32/panto-media.wasm  the module
#   prebuilds/wasm32/BUILD-INFO        compiler version and flags (read by the tests and the bench)
# Objects are cached in build-wasm/obj-<flags hash>/ and rebuilt when a source is newer.
#
# Sources of libwebp / libdeflate / stb headers: the environment can point at extracted trees
#   PANTO_WASM_WEBP_SRC=/path/libwebp-1.2.4  PANTO_WASM_DEFLATE_SRC=/path/libdeflate-1.14
#   PANTO_WASM_INCLUDE=/path/include  (stb/stb_image.h, stb/stb_image_write.h, stb/stb_image_resize2.h, webp/*.h,
#                                      libdeflate.h)
# otherwise the ones the native build uses (scripts/native-sources.cjs) are taken.
# Installs emscripten with apt-get when emcc is missing (root or sudo).
# Environment: JOBS (default nproc), PANTO_WASM_SIMD=1 adds -msimd128, PANTO_WASM_OUT (default prebuilds/wasm32).
# Cost on 2 idle cores: ~2 min from scratch (emscripten's first run also builds its system libraries into its cache).
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

# --- sources ---------------------------------------------------------------------------------------------------------
read -r WEBP_SRC DEFLATE_SRC INCLUDE < <(node -e '
  const s = require("./scripts/native-sources.cjs");
  const env = process.env;
  const pick = (v, f) => v || (typeof f === "function" ? f() : "");
  console.log([
    pick(env.PANTO_WASM_WEBP_SRC, s.webpSourceDir), pick(env.PANTO_WASM_DEFLATE_SRC, s.deflateSourceDir),
    pick(env.PANTO_WASM_INCLUDE, () => s.includeDirs()[0]),
  ].map((p) => p || "-").join(" "));')
[ -d "$WEBP_SRC/src/dec" ] || die "libwebp sources not found (got '$WEBP_SRC'); set PANTO_WASM_WEBP_SRC"
[ -f "$DEFLATE_SRC/lib/deflate_compress.c" ] || die "libdeflate sources not found (got '$DEFLATE_SRC'); set PANTO_WASM_DEFLATE_SRC"
for h in stb/stb_image.h stb/stb_image_write.h stb/stb_image_resize2.h webp/decode.h libdeflate.h; do
  [ -f "$INCLUDE/$h" ] || die "$INCLUDE/$h missing; set PANTO_WASM_INCLUDE"
done

# --- compile ---------------------------------------------------------------------------------------------------------
SIMD=""; [ "${PANTO_WASM_SIMD:-0}" = 1 ] && SIMD="-msimd128"
# -fexceptions: the core catches std::bad_alloc and the C ABI catches everything (emscripten's JS-assisted EH; Debian's
# 3.1.6 has no wasm-EH libc++abi variant that Node 20 runs by default). No -pthread: std::thread throws
# std::system_error and the encoder already falls back to one thread; parallelism comes from worker_threads instead.
CFLAGS="-O3 -DNDEBUG $SIMD"
CXXFLAGS="$CFLAGS -std=c++17 -fexceptions -fvisibility=hidden"
HASH="$(printf '%s|%s|%s' "$EM_VERSION" "$CFLAGS" "$CXXFLAGS" | sha256sum | cut -c1-12)"
OBJ="build-wasm/obj-$HASH"
mkdir -p "$OBJ" "$OUT"

# One "compiler<TAB>source<TAB>include dir" job per line; an object is rebuilt when missing or older than its source.
jobs_file="$OBJ/jobs.txt"
{
  (cd "$WEBP_SRC" && ls src/dec/*.c src/dsp/*.c src/enc/*.c src/utils/*.c sharpyuv/*.c src/demux/demux.c src/demux/anim_decode.c) |
    sed "s|^|emcc\t$WEBP_SRC/|; s|\$|\t$WEBP_SRC|"
  (cd "$DEFLATE_SRC" && ls lib/*.c lib/x86/*.c lib/arm/*.c) | sed "s|^|emcc\t$DEFLATE_SRC/|; s|\$|\t$DEFLATE_SRC|"
  node -p 'const s = require("./scripts/native-sources.cjs"); [...s.core, ...s.cdeps].join("\n")' |
    sed "s|^|em++\t$ROOT/|; s|\$|\t$ROOT/native/core|"
  printf 'em++\t%s\t%s\n' "$ROOT/native/wasm/panto-wasm.cpp" "$ROOT/native/core"
} > "$jobs_file"
NEWEST_HEADER="$ROOT/native/core/$(cd native/core && ls -t -- *.h | head -1)"
export OBJ CFLAGS CXXFLAGS INCLUDE NEWEST_HEADER
compile_one() {
  local cc="$1" src="$2" inc="$3"
  local o; o="$OBJ/$(printf '%s' "$src" | sha256sum | cut -c1-16)-$(basename "$src").o"
  # Up to date when newer than its source and (C++: our code) than every core header.
  if [ -f "$o" ] && [ "$o" -nt "$src" ] && { [ "$cc" = emcc ] || [ ! "$NEWEST_HEADER" -nt "$o" ]; }; then
    echo "$o"; return
  fi
  if [ "$cc" = emcc ]; then
    emcc $CFLAGS -I"$inc" -c "$src" -o "$o.tmp"
  else
    em++ $CXXFLAGS -I"$inc" -I"$INCLUDE" -c "$src" -o "$o.tmp"
  fi
  mv "$o.tmp" "$o"; echo "$o"
}
export -f compile_one
log "compiling $(wc -l < "$jobs_file") sources with $EM_VERSION ($JOBS jobs)"
objects="$(tr '\t' '\n' < "$jobs_file" | xargs -d '\n' -n 3 -P "$JOBS" bash -c 'compile_one "$0" "$1" "$2"')"

# --- link ------------------------------------------------------------------------------------------------------------
# MODULARIZE + sync compilation: the glue's factory fills the object it is given, so a caller can instantiate
# synchronously (sniffMedia/probeMedia are synchronous). NODEJS_CATCH_*=0: a library must not install process-wide
# uncaughtException/unhandledRejection handlers. ABORTING_MALLOC=0: an allocation beyond the 4 GiB wasm32 limit
# returns null (std::bad_alloc -> ERR_MEDIA_TOO_LARGE) instead of aborting the instance.
LDFLAGS=(-O3 $SIMD -fexceptions
  -sMODULARIZE=1 -sEXPORT_NAME=pantoMedia -sENVIRONMENT=node -sWASM_ASYNC_COMPILATION=0
  -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB -sABORTING_MALLOC=0 -sFILESYSTEM=0
  -sNODEJS_CATCH_EXIT=0 -sNODEJS_CATCH_REJECTION=0 -sINVOKE_RUN=0
  -sEXPORTED_FUNCTIONS=_pw_alloc,_pw_free,_pw_result_free,_pw_sniff,_pw_probe,_pw_process,_pw_decode_to_rgba
  -sEXPORTED_RUNTIME_METHODS=HEAPU8,HEAPU32,UTF8ToString,stringToUTF8,lengthBytesUTF8)
log "linking"
# shellcheck disable=SC2086
em++ "${LDFLAGS[@]}" $objects -o "$OBJ/panto-media.cjs"
cp "$OBJ/panto-media.cjs" "$OBJ/panto-media.wasm" "$OUT/"
{
  echo "compiler: $EM_VERSION"
  echo "cflags: $CXXFLAGS"
  echo "ldflags: ${LDFLAGS[*]}"
  echo "webp: $(basename "$WEBP_SRC")"
  echo "deflate: $(basename "$DEFLATE_SRC")"
} > "$OUT/BUILD-INFO"
log "done in $(($(date +%s) - START)) s: $OUT/panto-media.wasm $(stat -c %s "$OUT/panto-media.wasm") bytes, $OUT/panto-media.cjs $(stat -c %s "$OUT/panto-media.cjs") bytes"
