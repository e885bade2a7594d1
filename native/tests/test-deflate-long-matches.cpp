// libdeflate's hash-chain matchfinder as we patch it (cdeps/patches/libdeflate/0003): a match longer than 128 bytes
// inserts only its last 16 positions, and may jump over the 32 KiB point where the matchfinder rebases its tables.
// These tests pin that every level using it (2-9) still gives back exactly what was compressed: screenshot-like rows
// (flat runs of every length, short repeated "glyphs", rows equal to the one above, noise), a long run of one byte
// (every match skips and the tables rebase dozens of times inside matches), and the chunked sync-flush calls our PNG
// encoder makes.
#include <libdeflate.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "harness.h"
#include "test-util.h"

using namespace panto_test;

namespace {

/** RGB rows of a UI-like picture: flat spans, repeated 5-40 byte patterns, copies of the previous row, noise. */
std::vector<uint8_t> screen_like(size_t width, size_t rows, uint32_t seed) {
  Prng r(seed);
  const size_t stride = width * 3;
  std::vector<uint8_t> v;
  v.reserve(stride * rows);
  for (size_t y = 0; y < rows; y++) {
    if (y > 0 && r.next() % 3 == 0) {  // a row equal to the one above: a match at distance `stride`
      for (size_t i = 0; i < stride; i++) v.push_back(v[v.size() - stride]);
      continue;
    }
    size_t x = 0;
    while (x < stride) {
      const uint32_t kind = r.next() % 4;
      size_t len = std::min(stride - x, size_t(1 + r.next() % (kind == 0 ? 4000 : 300)));
      if (kind == 0) {  // a flat span of one colour
        const uint8_t c[3] = {uint8_t(r.next()), uint8_t(r.next()), uint8_t(r.next())};
        for (size_t i = 0; i < len; i++) v.push_back(c[(x + i) % 3]);
      } else if (kind == 1) {  // a "glyph" pattern repeated
        const size_t period = 5 + r.next() % 36;
        std::vector<uint8_t> p(period);
        for (auto& b : p) b = uint8_t(r.next());
        for (size_t i = 0; i < len; i++) v.push_back(p[i % period]);
      } else {  // noise
        for (size_t i = 0; i < len; i++) v.push_back(uint8_t(r.next()));
      }
      x += len;
    }
  }
  return v;
}

/** Compresses `data` at `level` in one call or, with `chunk` > 0, in sync-flushed pieces (the PNG encoder's way). */
std::vector<uint8_t> compress(const std::vector<uint8_t>& data, int level, size_t chunk) {
  libdeflate_compressor* c = libdeflate_alloc_compressor(level);
  if (c == nullptr) return {};
  std::vector<uint8_t> out;
  if (chunk == 0) {
    out.resize(libdeflate_deflate_compress_bound(c, data.size()));
    out.resize(libdeflate_deflate_compress(c, data.data(), data.size(), out.data(), out.size()));
  } else {
    for (size_t at = 0; at < data.size(); at += chunk) {
      const size_t n = std::min(chunk, data.size() - at);
      std::vector<uint8_t> piece(libdeflate_deflate_compress_bound(c, n) + 16);
      const bool last = at + n == data.size();
      const size_t got = last ? libdeflate_deflate_compress(c, data.data() + at, n, piece.data(), piece.size())
                              : libdeflate_deflate_compress_sync(c, data.data() + at, n, piece.data(), piece.size());
      if (got == 0) {
        out.clear();
        break;
      }
      out.insert(out.end(), piece.begin(), piece.begin() + long(got));
    }
  }
  libdeflate_free_compressor(c);
  return out;
}

/** Inflates a raw DEFLATE stream of `size` bytes; empty on any error. */
std::vector<uint8_t> inflate_all(const std::vector<uint8_t>& z, size_t size) {
  libdeflate_decompressor* d = libdeflate_alloc_decompressor();
  std::vector<uint8_t> out(size);
  size_t got = 0;
  const auto rc = libdeflate_deflate_decompress(d, z.data(), z.size(), out.data(), out.size(), &got);
  libdeflate_free_decompressor(d);
  if (rc != LIBDEFLATE_SUCCESS || got != size) return {};
  return out;
}

}  // namespace

PANTO_TEST(png, deflate_long_matches_give_back_what_was_compressed) {
  std::vector<std::pair<std::string, std::vector<uint8_t>>> inputs;
  for (uint32_t seed = 1; seed <= 3; seed++)
    inputs.emplace_back("screen " + show(seed), screen_like(1000 + 333 * seed, 200, seed));
  inputs.emplace_back("one byte", std::vector<uint8_t>(1 << 20, 0x5a));
  std::vector<uint8_t> mixed(3 << 19, 0);
  Prng r(9);
  for (size_t i = 0; i < mixed.size(); i += 1 + r.next() % 9000) mixed[i] = uint8_t(r.next());
  inputs.emplace_back("sparse noise in zeros", mixed);
  int compared = 0;
  for (const auto& [name, data] : inputs) {
    for (int level = 2; level <= 9; level++) {
      for (size_t chunk : {size_t(0), size_t(512) << 10}) {
        const auto z = compress(data, level, chunk);
        PANTO_REQUIRE(!z.empty());
        if (inflate_all(z, data.size()) != data)
          record_failure(__FILE__, __LINE__,
                         name + " level " + show(level) + " chunk " + show(chunk) + ": inflated bytes differ");
        compared++;
      }
    }
  }
  PANTO_CHECK(compared == 5 * 8 * 2);
}
