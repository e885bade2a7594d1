// zlib's streaming inflate (PNG decoding, png-decode.cpp) copies matches 8 bytes at a time and its window with the C
// library's memcpy (cdeps/patches/zlib/0001). These tests pin that it still gives back exactly what was compressed:
// streams from libdeflate at every level over data made of matches at every short distance (the overlapping copies:
// runs and repeated pixels), far references (the window), and noise, inflated into output pieces of many sizes
// (a piece boundary inside a match takes the window path; zlib's fast loop only runs with 258 bytes of room left).
#include <libdeflate.h>

#define Z_PREFIX 1
#define Z_SOLO 1
#include <zlib/zlib.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "harness.h"

using namespace panto_test;

namespace {

struct Lcg {
  uint64_t s;
  uint32_t next() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t(s >> 33);
  }
};

/** Runs of short periods (1..20 bytes), copies from up to 40000 bytes back, and noise, in random order. */
std::vector<uint8_t> matchy_data(size_t n, uint64_t seed) {
  Lcg r{seed};
  std::vector<uint8_t> v;
  v.reserve(n + 600);
  while (v.size() < n) {
    const uint32_t kind = r.next() % 4, len = 3 + r.next() % 600;
    if (kind == 0 || v.size() < 64) {
      for (uint32_t i = 0; i < len % 40; i++) v.push_back(uint8_t(r.next()));
    } else if (kind == 1) {
      const size_t period = 1 + r.next() % 20;
      for (size_t i = 0; i < period; i++) v.push_back(uint8_t(r.next()));
      for (uint32_t i = 0; i < len; i++) v.push_back(v[v.size() - period]);
    } else {
      const size_t back = 1 + r.next() % std::min<size_t>(v.size(), kind == 2 ? 64 : 40000);
      for (uint32_t i = 0; i < len; i++) v.push_back(v[v.size() - back]);
    }
  }
  v.resize(n);
  return v;
}

void* zalloc(void*, unsigned n, unsigned size) { return std::calloc(n, size); }
void zfree(void*, void* p) { std::free(p); }

/** Inflates `z` (a zlib stream) in output pieces of `piece` bytes; empty on any error. */
std::vector<uint8_t> inflate_in_pieces(const std::vector<uint8_t>& z, size_t total, size_t piece) {
  z_stream zs;
  std::memset(&zs, 0, sizeof zs);
  zs.zalloc = zalloc;
  zs.zfree = zfree;
  if (inflateInit(&zs) != Z_OK) return {};
  std::vector<uint8_t> out(total);
  zs.next_in = const_cast<Bytef*>(z.data());
  zs.avail_in = uInt(z.size());
  size_t done = 0;
  int rc = Z_OK;
  while (rc == Z_OK && done < total) {
    const size_t n = std::min(piece, total - done);
    zs.next_out = out.data() + done;
    zs.avail_out = uInt(n);
    while (zs.avail_out > 0 && rc == Z_OK) rc = inflate(&zs, Z_NO_FLUSH);
    done += n - zs.avail_out;
  }
  if (rc == Z_OK) rc = inflate(&zs, Z_FINISH);
  inflateEnd(&zs);
  if (rc != Z_STREAM_END || done != total) return {};
  return out;
}

}  // namespace

PANTO_TEST(png, zlib_inflate_gives_back_what_was_compressed) {
  int compared = 0;
  for (uint64_t seed = 1; seed <= 6; seed++) {
    const auto data = matchy_data(seed % 2 ? 300000 : 70001, seed);
    for (int level : {1, 2, 6, 12}) {
      libdeflate_compressor* c = libdeflate_alloc_compressor(level);
      PANTO_REQUIRE(c != nullptr);
      std::vector<uint8_t> z(libdeflate_zlib_compress_bound(c, data.size()));
      z.resize(libdeflate_zlib_compress(c, data.data(), data.size(), z.data(), z.size()));
      libdeflate_free_compressor(c);
      PANTO_REQUIRE(!z.empty());
      for (size_t piece : {size_t(1), size_t(7), size_t(257), size_t(8641), size_t(1) << 20}) {
        if (piece < 257 && data.size() > 100000) continue;  // byte-sized pieces: the short streams suffice
        if (inflate_in_pieces(z, data.size(), piece) != data)
          record_failure(__FILE__, __LINE__,
                         "seed " + std::to_string(seed) + " level " + std::to_string(level) + " pieces of " +
                             std::to_string(piece) + ": inflated bytes differ from the input");
        compared++;
      }
    }
  }
  PANTO_CHECK(compared >= 96);
}
