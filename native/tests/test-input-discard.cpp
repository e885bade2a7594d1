// The caller's input copy returned to the OS as a decoder consumes it (budget.h: panto_budget_malloc_input,
// InputDiscardScope, discard_input; wired for PNG in png-decode.cpp and process.cpp). Resident pages are read with
// mincore(2):
//   - the primitive releases exactly the whole pages inside the declared range, nothing outside it, and nothing
//     without a scope or for a small block;
//   - process() on large PNGs with ProcessOptions::input_discardable: the consumed IDAT pages are gone when the call
//     returns (the header page stays: errors sniff it), and the output is byte-identical to the same call without
//     the flag, for each path that discards: the row-by-row decode with shrink on load, the streamed resize into the
//     PNG encoder, the streamed RGBA pass after an RGB pass found transparency in the last row (the first pass must
//     not discard: it is decoded again), the byte-cap ladder, and the whole-buffer decode of a PNG that is not
//     resized (its IDAT data released once inflated, or once joined when it comes in several chunks);
//   - process() on inputs decoded whole (GIF, BMP, lossless and lossy WebP): everything past the header page is given
//     back once the decode is done, before the resize, the encode and the ladder, with the same output bytes (a
//     lossless WebP stays lossless: that is read before the input goes).
// Linux only (elsewhere discard_input is a no-op and the tests say so).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "budget.h"
#include "gif-writer.h"
#include "internal.h"
#include "test-util.h"

#ifdef __linux__
#include <sys/mman.h>
#include <unistd.h>
#endif

using panto::ProcessOptions;
using panto::ProcessResult;
using namespace panto_test;

namespace {

#ifdef __linux__
/** Resident pages of [p, p + n) (whole pages touching it). */
size_t resident_pages(const uint8_t* p, size_t n, size_t* total) {
  const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  const uintptr_t from = reinterpret_cast<uintptr_t>(p) & ~(page - 1);
  const uintptr_t to = (reinterpret_cast<uintptr_t>(p) + n + page - 1) & ~(page - 1);
  std::vector<unsigned char> v((to - from) / page);
  if (mincore(reinterpret_cast<void*>(from), to - from, v.data()) != 0) return SIZE_MAX;
  size_t r = 0;
  for (unsigned char c : v) r += c & 1;
  *total = v.size();
  return r;
}
#endif

/** The caller's input as the addon holds it: an input block (freed on destruction). */
struct InputBlock {
  uint8_t* p = nullptr;
  size_t n = 0;
  explicit InputBlock(const std::vector<uint8_t>& bytes) : n(bytes.size()) {
    p = static_cast<uint8_t*>(panto_budget_malloc_input(n));
    std::memcpy(p, bytes.data(), n);
  }
  ~InputBlock() { panto_budget_free(p); }
  InputBlock(const InputBlock&) = delete;
  InputBlock& operator=(const InputBlock&) = delete;
};

/** Noisy RGB(A) pixels (so the PNG is megabytes, most of it IDAT); `last_row_alpha`: the last row half transparent. */
std::vector<uint8_t> noisy_png(uint32_t w, uint32_t h, int c, bool last_row_alpha) {
  std::vector<uint8_t> px(size_t(w) * h * c);
  uint32_t s = w * 131u + h + uint32_t(c);
  for (uint32_t y = 0; y < h; y++)
    for (uint32_t x = 0; x < w; x++)
      for (int k = 0; k < c; k++) {
        s = s * 1103515245u + 12345u;
        uint8_t v = uint8_t((x * (k + 1) + y * 2) + ((s >> 16) & 63));
        if (k == 3) v = (last_row_alpha && y == h - 1 && x % 2) ? 100 : 255;
        px[(size_t(y) * w + x) * c + k] = v;
      }
  panto::Budget budget(1ull << 30);
  panto::BudgetScope scope(&budget);
  panto::OwnedBytes png;
  if (!panto::encode_png(panto::PixelView{w, h, c, px.data()}, &png).ok()) return {};
  return std::vector<uint8_t>(png.data, png.data + png.size);
}

/** `png` with its (one) IDAT split into chunks of at most `piece` bytes. */
std::vector<uint8_t> split_idat(const std::vector<uint8_t>& png, size_t piece) {
  std::vector<uint8_t> out(png.begin(), png.begin() + 33);  // signature + IHDR
  for (size_t i = 33; i + 12 <= png.size();) {
    const size_t n = (size_t(png[i]) << 24) | (size_t(png[i + 1]) << 16) | (size_t(png[i + 2]) << 8) | png[i + 3];
    const std::string type(reinterpret_cast<const char*>(png.data() + i + 4), 4);
    const uint8_t* data = png.data() + i + 8;
    for (size_t o = 0; o < n || (n == 0 && o == 0); o += piece) {
      const size_t k = std::min(piece, n - o);
      png_chunk(out, type.c_str(), std::vector<uint8_t>(data + o, data + o + k));
      if (type != "IDAT") break;
    }
    i += 12 + n;
  }
  return out;
}

/** A 24-bit BMP of noisy pixels (about 3 bytes per pixel, so the input is megabytes). */
std::vector<uint8_t> noisy_bmp(uint32_t w, uint32_t h) {
  std::vector<uint8_t> rgb(size_t(w) * h * 3);
  Prng r(w * 7u + h);
  for (size_t i = 0; i < rgb.size(); i++) {
    const uint32_t x = uint32_t(i / 3 % w), y = uint32_t(i / 3 / w), k = uint32_t(i % 3);
    rgb[i] = uint8_t(x * (k + 1) + y + (r.next() & 31));
  }
  return bmp24(w, h, rgb);
}

/** A WebP of noisy RGB pixels, lossless or lossy at quality 95. */
std::vector<uint8_t> noisy_webp(uint32_t w, uint32_t h, bool lossless) {
  std::vector<uint8_t> px(size_t(w) * h * 3);
  Prng r(w + h * 3u);
  for (size_t i = 0; i < px.size(); i++) px[i] = uint8_t(i % 251 + (r.next() & 63));
  panto::Budget budget(1ull << 30);
  panto::BudgetScope scope(&budget);
  panto::OwnedBytes webp;
  if (!panto::encode_webp(panto::PixelView{w, h, 3, px.data()}, lossless, 95, &webp).ok()) return {};
  return std::vector<uint8_t>(webp.data, webp.data + webp.size);
}

}  // namespace

PANTO_TEST(budget, discard_input_releases_only_whole_pages_of_the_declared_block) {
#ifdef __linux__
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  const size_t n = 64 * page + 100;
  uint8_t* p = static_cast<uint8_t*>(panto_budget_malloc_input(n));
  PANTO_REQUIRE(p != nullptr);
  std::memset(p, 0x5A, n);
  size_t total = 0;
  PANTO_CHECK_EQ(resident_pages(p, n, &total), total);
  panto::Budget budget(1ull << 30);
  {
    panto::BudgetScope scope(&budget);
    PANTO_CHECK_EQ(panto::discard_input(p, p + n), size_t(0));  // no InputDiscardScope: nothing
    {
      panto::InputDiscardScope allow(&budget, p, n);
      // From mid-page 3 to mid-page 20 of the block: pages wholly inside are released.
      const uint8_t* from = p + 3 * page + 7;
      const uint8_t* to = p + 20 * page + 9;
      const size_t released = panto::discard_input(from, to);
      PANTO_CHECK(released > 0 && released % page == 0);
      PANTO_CHECK(released <= size_t(to - from) && released + 2 * page > size_t(to - from));
      size_t t = 0;
      PANTO_CHECK_EQ(resident_pages(p, n, &t), t - released / page);
      // Outside the range the data is intact; inside, the released pages read as zeros.
      PANTO_CHECK(p[3 * page + 6] == 0x5A && p[20 * page + 9] == 0x5A && p[0] == 0x5A && p[n - 1] == 0x5A);
      const uintptr_t first = (reinterpret_cast<uintptr_t>(from) + page - 1) & ~uintptr_t(page - 1);
      PANTO_CHECK_EQ(*reinterpret_cast<const uint8_t*>(first), uint8_t(0));
      // A range reaching past the block is clipped to it.
      const size_t before = resident_pages(p, n, &t);
      PANTO_CHECK(panto::discard_input(p + n - 2 * page, p + n + 64 * page) <= 2 * page);
      PANTO_CHECK(resident_pages(p, n, &t) < before);
    }
    PANTO_CHECK_EQ(panto::discard_input(p + 30 * page, p + 40 * page), size_t(0));  // the scope ended
  }
  panto_budget_free(p);
  // A small block (malloc, shared pages): never.
  std::vector<uint8_t> small(4096, 1);
  InputBlock tiny(small);
  {
    panto::BudgetScope scope(&budget);
    panto::InputDiscardScope allow(&budget, tiny.p, tiny.n);
    PANTO_CHECK_EQ(panto::discard_input(tiny.p, tiny.p + tiny.n), size_t(0));
  }
#else
  std::printf("  skipped: discard_input is Linux only\n");
#endif
}

PANTO_TEST(png, process_returns_the_consumed_input_pages_and_gives_the_same_bytes) {
  struct Case {
    const char* name;
    uint32_t w, h;
    int c;
    bool last_row_alpha;
    uint32_t max_dimension;
    uint64_t max_encoded;
    panto::OutputFormat format;
    size_t idat_piece = 0;  // > 0: IDAT chunks of at most this many bytes
  };
  const std::vector<Case> cases = {
      {"RGB, shrink on load 2x exactly (row-by-row decode)", 2400, 1600, 3, false, 1200, 64ull << 20,
       panto::OutputFormat::Png},
      {"RGB, streamed resize into the PNG encoder", 2000, 1500, 3, false, 1500, 64ull << 20, panto::OutputFormat::Png},
      {"RGBA transparent in the last row (RGB pass, then RGBA pass)", 1800, 1200, 4, true, 1500, 64ull << 20,
       panto::OutputFormat::Png},
      {"RGB over the byte cap (ladder)", 2000, 1500, 3, false, 1500, 400000, panto::OutputFormat::Auto},
      {"RGB not resized, over the byte cap (whole-buffer decode, one IDAT)", 1500, 1000, 3, false, 2000, 400000,
       panto::OutputFormat::Auto},
      {"RGBA not resized, several IDATs (whole-buffer decode of the joined data)", 1500, 1000, 4, true, 2000, 400000,
       panto::OutputFormat::Auto, 65536},
  };
  for (const Case& k : cases) {
    std::vector<uint8_t> png = noisy_png(k.w, k.h, k.c, k.last_row_alpha);
    if (k.idat_piece) png = split_idat(png, k.idat_piece);
    PANTO_REQUIRE(png.size() > (1u << 20));
    ProcessOptions o;
    o.max_dimension = k.max_dimension;
    o.max_encoded_bytes = k.max_encoded;
    o.max_input_bytes = 256ull << 20;
    o.format = k.format;
    ProcessResult plain;
    PANTO_REQUIRE(panto::process(png.data(), png.size(), o, &plain).ok());
    InputBlock in(png);
    o.input_discardable = true;
    ProcessResult r;
    const panto::Status s = panto::process(in.p, in.n, o, &r);
    PANTO_CHECK(s.ok());
    PANTO_CHECK(r.type == plain.type && r.width == plain.width && r.height == plain.height);
    PANTO_CHECK(r.changes == plain.changes);
    PANTO_CHECK(r.data.size == plain.data.size && std::memcmp(r.data.data, plain.data.data, r.data.size) == 0);
#ifdef __linux__
    size_t total = 0;
    const size_t resident = resident_pages(in.p, in.n, &total);
    std::printf("  %s: %zu-byte PNG -> %s %ux%u; input pages resident after the call: %zu of %zu\n", k.name,
                png.size(), panto::mime_of(r.type), r.width, r.height, resident, total);
    PANTO_CHECK(resident * 10 < total);                             // at least 90% released
    PANTO_CHECK(std::memcmp(in.p, png.data(), 64) == 0);            // the header is intact
    PANTO_CHECK(panto::sniff(in.p, in.n) == panto::MediaType::Png);  // what an error path reads
#endif
  }
}

PANTO_TEST(process, a_wholly_decoded_input_is_given_back_before_the_encode) {
  struct Case {
    const char* name;
    std::vector<uint8_t> bytes;
    panto::MediaType type;
    uint32_t max_dimension;
    uint64_t max_encoded;
  };
  GifSpec gif{"one full frame", 1000, 700, 0, {{0, 0, 1000, 700}}};
  const std::vector<Case> cases = {
      {"GIF, resized, PNG over the cap (ladder)", make_gif(gif), panto::MediaType::Gif, 800, 300000},
      {"BMP 24-bit, resized", noisy_bmp(1400, 1000), panto::MediaType::Bmp, 1000, 64ull << 20},
      {"WebP lossless, resized (stays lossless)", noisy_webp(900, 700, true), panto::MediaType::Webp, 800, 64ull << 20},
      {"WebP lossy, resized", noisy_webp(1800, 1400, false), panto::MediaType::Webp, 1000, 64ull << 20},
      {"WebP lossy, resized, over the cap (ladder)", noisy_webp(1800, 1400, false), panto::MediaType::Webp, 1000,
       40000},
  };
  for (const Case& k : cases) {
    PANTO_REQUIRE(k.bytes.size() > (300u << 10));
    PANTO_REQUIRE(panto::sniff(k.bytes.data(), k.bytes.size()) == k.type);
    ProcessOptions o;
    o.max_dimension = k.max_dimension;
    o.max_encoded_bytes = k.max_encoded;
    o.max_input_bytes = 256ull << 20;
    ProcessResult plain;
    PANTO_REQUIRE(panto::process(k.bytes.data(), k.bytes.size(), o, &plain).ok());
    InputBlock in(k.bytes);
    o.input_discardable = true;
    ProcessResult r;
    PANTO_CHECK(panto::process(in.p, in.n, o, &r).ok());
    PANTO_CHECK(r.type == plain.type && r.width == plain.width && r.height == plain.height);
    PANTO_CHECK(r.changes == plain.changes);
    PANTO_CHECK(r.data.size == plain.data.size && std::memcmp(r.data.data, plain.data.data, r.data.size) == 0);
    PANTO_CHECK(r.data.size > 0);  // re-encoded (a pass-through result is the input itself and keeps it)
#ifdef __linux__
    size_t total = 0;
    const size_t resident = resident_pages(in.p, in.n, &total);
    std::printf("  %s: %zu bytes -> %s %ux%u (%zu bytes); input pages resident after the call: %zu of %zu\n", k.name,
                k.bytes.size(), panto::mime_of(r.type), r.width, r.height, r.data.size, resident, total);
    PANTO_CHECK(resident <= 2);  // the header page (and the block's tail page)
    PANTO_CHECK(std::memcmp(in.p, k.bytes.data(), 64) == 0);
    PANTO_CHECK(panto::sniff(in.p, in.n) == k.type);
#endif
  }
}

// An input the binding was handed by transfer (addon.cpp, `owned`): not an input block but memory from the runtime's
// allocator (Node's ArrayBuffer allocator is malloc), at any alignment, with other data possibly sharing its first and
// last pages. With input_discardable the call may release only whole pages inside it: the bytes around it (here: a
// sentinel run on the same pages) stay intact, the output is byte-identical to the same call without the flag, and
// the consumed pages are returned. The heap block is freed normally afterwards (MADV_DONTNEED on private anonymous
// memory only zero-fills the pages).
PANTO_TEST(process, a_transferred_heap_input_gives_back_only_whole_pages_inside_it) {
  const std::vector<uint8_t> png = noisy_png(2000, 1500, 3, false);
  PANTO_REQUIRE(png.size() > (1u << 20));
  struct Case {
    const char* name;
    uint32_t max_dimension;
    uint64_t max_encoded;
  };
  const std::vector<Case> cases = {{"streamed resize into the PNG encoder", 1500, 64ull << 20},
                                   {"not resized, over the byte cap (whole-buffer decode)", 2000, 400000}};
  for (const Case& k : cases) {
    for (size_t misalign : {size_t(0), size_t(1), size_t(3001)}) {
      ProcessOptions o;
      o.max_dimension = k.max_dimension;
      o.max_encoded_bytes = k.max_encoded;
      o.max_input_bytes = 256ull << 20;
      ProcessResult plain;
      PANTO_REQUIRE(panto::process(png.data(), png.size(), o, &plain).ok());
      const size_t guard = 5000;  // sentinels before and after: they share the input's first and last pages
      uint8_t* block = static_cast<uint8_t*>(std::malloc(misalign + guard + png.size() + guard));
      PANTO_REQUIRE(block != nullptr);
      uint8_t* in = block + misalign + guard;
      std::memset(block, 0xA5, misalign + guard);
      std::memcpy(in, png.data(), png.size());
      std::memset(in + png.size(), 0x5A, guard);
      o.input_discardable = true;
      ProcessResult r;
      PANTO_CHECK(panto::process(in, png.size(), o, &r).ok());
      PANTO_CHECK(r.type == plain.type && r.width == plain.width && r.height == plain.height);
      PANTO_CHECK(r.data.size == plain.data.size && std::memcmp(r.data.data, plain.data.data, r.data.size) == 0);
      bool intact = true;
      for (size_t i = 0; i < misalign + guard; i++) intact = intact && block[i] == 0xA5;
      for (size_t i = 0; i < guard; i++) intact = intact && in[png.size() + i] == 0x5A;
      PANTO_CHECK(intact);
      PANTO_CHECK(std::memcmp(in, png.data(), 64) == 0);  // the header is intact
#ifdef __linux__
      size_t total = 0;
      const size_t resident = resident_pages(in, png.size(), &total);
      std::printf("  %s, offset %zu: input pages resident after the call: %zu of %zu\n", k.name,
                  (misalign + guard) % 4096, resident, total);
      PANTO_CHECK(resident * 5 < total);  // most of it given back
#endif
      std::free(block);
    }
  }
}
