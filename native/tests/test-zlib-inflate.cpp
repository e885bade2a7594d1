// zlib's streaming inflate (PNG decoding, png-decode.cpp) copies matches 8 bytes at a time and its window with the C
// library's memcpy (cdeps/patches/zlib/0001), and its fast loop refills its 64-bit bit buffer 8 bytes at a time
// (cdeps/patches/zlib/0002). These tests pin that it still gives back exactly what was compressed:
// streams from libdeflate at every level over data made of matches at every short distance (the overlapping copies:
// runs and repeated pixels), far references (the window), and noise, inflated into output pieces of many sizes
// (a piece boundary inside a match takes the window path; zlib's fast loop only runs with 258 bytes of room left);
// and that the fast loop agrees with the byte-by-byte one, which input pieces of 7 bytes always take, on damaged
// streams too: the same bytes out, the same end and the same message.
#include <libdeflate.h>

#define Z_PREFIX 1
#define Z_SOLO 1
#include <zlib/zlib.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
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

/** A zlib stream of `data` from libdeflate at `level`; empty on failure. */
std::vector<uint8_t> zlib_compress(const std::vector<uint8_t>& data, int level) {
  libdeflate_compressor* c = libdeflate_alloc_compressor(level);
  if (c == nullptr) return {};
  std::vector<uint8_t> z(libdeflate_zlib_compress_bound(c, data.size()));
  z.resize(libdeflate_zlib_compress(c, data.data(), data.size(), z.data(), z.size()));
  libdeflate_free_compressor(c);
  return z;
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
      const std::vector<uint8_t> z = zlib_compress(data, level);
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

namespace {

struct InflateResult {
  int rc = Z_OK;
  std::string msg;
  std::vector<uint8_t> out;
  bool operator==(const InflateResult& o) const { return rc == o.rc && msg == o.msg && out == o.out; }
};

/** Inflates `z` into room for `room` bytes, its input handed over `piece` bytes at a time (0: all at once), each from
 *  an allocation of exactly that size, so an over-read is a sanitizer report. Stops at the first error. */
InflateResult inflate_input_pieces(const std::vector<uint8_t>& z, size_t room, size_t piece) {
  InflateResult r;
  z_stream zs;
  std::memset(&zs, 0, sizeof zs);
  zs.zalloc = zalloc;
  zs.zfree = zfree;
  if (inflateInit(&zs) != Z_OK) return r;
  r.out.resize(room);
  zs.next_out = r.out.data();
  zs.avail_out = uInt(room);
  size_t at = 0;
  while (true) {
    const size_t n = piece == 0 ? z.size() - at : std::min(piece, z.size() - at);
    std::unique_ptr<uint8_t[]> buf(new uint8_t[n ? n : 1]);
    std::memcpy(buf.get(), z.data() + at, n);
    zs.next_in = buf.get();
    zs.avail_in = uInt(n);
    do r.rc = inflate(&zs, Z_NO_FLUSH);
    while (r.rc == Z_OK && zs.avail_in > 0 && zs.avail_out > 0);
    at += n - zs.avail_in;
    if (r.rc != Z_OK || zs.avail_out == 0 || at >= z.size() || n == 0) break;
  }
  r.msg = zs.msg ? zs.msg : "";
  r.out.resize(room - zs.avail_out);
  inflateEnd(&zs);
  return r;
}

}  // namespace

PANTO_TEST(png, zlib_fast_loop_agrees_with_the_byte_loop_on_damaged_streams) {
  Lcg r{77};
  int compared = 0;
  for (uint64_t seed = 1; seed <= 4; seed++) {
    const auto data = matchy_data(60000 + 7919 * seed, seed);
    for (int level : {1, 6, 12}) {
      const std::vector<uint8_t> z = zlib_compress(data, level);
      PANTO_REQUIRE(!z.empty());
      for (int k = 0; k < 12; k++) {
        std::vector<uint8_t> bad = z;
        if (k > 0) {  // k == 0: intact
          const size_t at = 2 + r.next() % (z.size() - 6);
          if (k % 3 == 0) bad.resize(at);                                        // cut short
          else if (k % 3 == 1) bad[at] ^= uint8_t(1u << (r.next() % 8));          // one bit flipped
          else for (size_t i = at; i < std::min(bad.size(), at + 16); i++) bad[i] = uint8_t(r.next());  // noise
        }
        const InflateResult fast = inflate_input_pieces(bad, data.size() + 1000, 0);
        const InflateResult slow = inflate_input_pieces(bad, data.size() + 1000, 7);
        if (!(fast == slow))
          record_failure(__FILE__, __LINE__,
                         "seed " + show(seed) + " level " + show(level) + " case " + show(k) + ": fast rc " +
                             show(fast.rc) + " '" + fast.msg + "' " + show(fast.out.size()) + " bytes, byte loop rc " +
                             show(slow.rc) + " '" + slow.msg + "' " + show(slow.out.size()) + " bytes");
        if (k == 0 && fast.out != data) record_failure(__FILE__, __LINE__, "intact stream: bytes differ");
        compared++;
      }
    }
  }
  PANTO_CHECK(compared == 4 * 3 * 12);
}
