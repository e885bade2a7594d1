// libwebp runs with one helper thread per call (WEBP_USE_THREAD, scripts/native-sources.cjs): the encoder compresses
// the alpha plane and half of the segment analysis on it (encode.cpp, thread_level 1), the decoder filters, converts
// and writes rows and decodes alpha on it (decode.cpp, use_threads). These tests pin the two promises that makes:
//   - the bytes do not change: encode_webp with and without the helper thread, and decode_image against libwebp's
//     single-threaded simple API (WebPDecodeRGB/RGBA), are byte-identical (native and wasm builds must agree, and the
//     wasm build has no threads);
//   - abort still works while the helper thread is busy: ERR_ABORTED from an encode whose alpha plane is on the
//     helper thread and from a decode whose alpha rows are, with the flag raised mid-way; the helper thread never
//     reads a BudgetScope (it has none) and is joined before the call returns (LeakSanitizer in ctest sees no leak).
// And the memory contract of libwebp's allocator (webp-memory.cpp): its blocks are charged to no call's budget.
#include <webp/decode.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "budget.h"
#include "internal.h"
#include "test-util.h"

using namespace panto_test;

namespace {

/** A photo-like RGB(A) image: smooth gradients plus noise (so every macroblock costs real work); the alpha plane
 *  is a radial ramp with a fully transparent corner and a fully opaque band, so alpha filtering has choices to make. */
std::vector<uint8_t> photo(uint32_t w, uint32_t h, int channels, uint32_t seed) {
  std::vector<uint8_t> v(size_t(w) * h * size_t(channels));
  uint32_t s = seed;
  for (uint32_t y = 0; y < h; y++)
    for (uint32_t x = 0; x < w; x++) {
      s ^= s << 13;
      s ^= s >> 17;
      s ^= s << 5;
      uint8_t* p = &v[(size_t(y) * w + x) * size_t(channels)];
      const int n = int(s >> 27) - 16;  // -16..15
      p[0] = uint8_t(std::min(255, std::max(0, int(x * 255 / w) + n)));
      p[1] = uint8_t(std::min(255, std::max(0, int(y * 255 / h) - n)));
      p[2] = uint8_t(std::min(255, std::max(0, int((x ^ y) & 0xff) / 2 + 64 + n)));
      if (channels == 4) {
        const int64_t dx = int64_t(x) - w / 2, dy = int64_t(y) - h / 2;
        const int64_t r = (dx * dx + dy * dy) * 255 / (int64_t(w) * w / 4 + int64_t(h) * h / 4);
        const bool corner = x < w / 6 && y < h / 6;
        const bool band = y > h / 2 && y < h / 2 + h / 10;
        p[3] = corner ? 0 : band ? 255 : uint8_t(std::max<int64_t>(0, 255 - r));
      }
    }
  return v;
}

std::vector<uint8_t> bytes_of(const panto::OwnedBytes& b) { return {b.data, b.data + b.size}; }

std::vector<uint8_t> encode(const std::vector<uint8_t>& px, uint32_t w, uint32_t h, int channels, bool lossless,
                            bool threads) {
  panto::OwnedBytes out;
  const auto st = panto::encode_webp({w, h, channels, px.data()}, lossless, 82, &out, threads);
  if (!st.ok()) {
    record_failure(__FILE__, __LINE__, "encode_webp: " + st.code + " " + st.message);
    return {};
  }
  return bytes_of(out);
}

/** libwebp's own single-threaded decode (simple API: no decoder options, so no helper thread). */
std::vector<uint8_t> reference_decode(const std::vector<uint8_t>& webp, int channels) {
  int w = 0, h = 0;
  uint8_t* p = channels == 4 ? WebPDecodeRGBA(webp.data(), webp.size(), &w, &h)
                             : WebPDecodeRGB(webp.data(), webp.size(), &w, &h);
  if (!p) return {};
  std::vector<uint8_t> v(p, p + size_t(w) * size_t(h) * size_t(channels));
  WebPFree(p);
  return v;
}

panto::Status decode(const std::vector<uint8_t>& in, panto::Budget* b, panto::Pixels* px) {
  panto::MediaInfo info;
  const auto st = panto::probe(in.data(), in.size(), &info);
  if (!st.ok()) return st;
  panto::BudgetScope scope(b);
  return panto::decode_image(in.data(), in.size(), info, px);
}

void expect_aborted(const panto::Status& st, const std::string& what, int line) {
  if (st.code != "ERR_ABORTED") record_failure(__FILE__, line, what + ": '" + st.code + "' " + st.message);
}

}  // namespace

PANTO_TEST(webp, encode_output_is_the_same_with_and_without_the_helper_thread) {
  struct Case {
    uint32_t w, h;
    int channels;
    bool lossless;
  };
  // Lossy with alpha is where both helper jobs run (alpha plane + analysis split); odd sizes cover partial
  // macroblocks; 16x16 is a single macroblock row (libwebp then skips the analysis split); lossless covers the
  // VP8L encoder's side worker.
  const Case cases[] = {{1200, 900, 4, false}, {1201, 899, 4, false}, {1200, 900, 3, false},
                        {16, 16, 4, false},    {640, 480, 4, true},   {333, 517, 3, true}};
  for (const auto& c : cases) {
    const auto px = photo(c.w, c.h, c.channels, 0x9E3779B9u ^ c.w);
    const auto threaded = encode(px, c.w, c.h, c.channels, c.lossless, true);
    const auto single = encode(px, c.w, c.h, c.channels, c.lossless, false);
    PANTO_REQUIRE(!threaded.empty());
    if (threaded != single)
      record_failure(__FILE__, __LINE__,
                     std::to_string(c.w) + "x" + std::to_string(c.h) + "x" + std::to_string(c.channels) +
                         (c.lossless ? " lossless" : " lossy") + ": " + std::to_string(threaded.size()) + " bytes vs " +
                         std::to_string(single.size()) + " without the helper thread");
  }
}

PANTO_TEST(webp, decode_output_is_the_same_as_libwebps_single_threaded_decode) {
  // >= 512 px wide: libwebp's threaded row pipeline applies (frame_dec.c, MIN_WIDTH_FOR_THREADS); 300 px: it does not.
  struct Case {
    uint32_t w, h;
    int channels;
    bool lossless;
  };
  const Case cases[] = {{1200, 900, 4, false}, {1201, 899, 3, false}, {300, 200, 4, false}, {700, 500, 4, true}};
  for (const auto& c : cases) {
    const auto webp = encode(photo(c.w, c.h, c.channels, 12345u + c.h), c.w, c.h, c.channels, c.lossless, false);
    PANTO_REQUIRE(!webp.empty());
    panto::Budget b(1ull << 30);
    panto::Pixels px;
    const auto st = decode(webp, &b, &px);
    PANTO_REQUIRE(st.ok());
    PANTO_CHECK_EQ(px.width, c.w);
    PANTO_CHECK_EQ(px.height, c.h);
    PANTO_REQUIRE(px.channels == c.channels);
    const auto ref = reference_decode(webp, c.channels);
    PANTO_REQUIRE(ref.size() == px.data.size);
    PANTO_CHECK(std::memcmp(ref.data(), px.data.data, ref.size()) == 0);
  }
}

PANTO_TEST(webp, libwebp_memory_is_charged_to_no_call) {
  // libwebp allocates through webp-memory.cpp (cdeps/patches/libwebp/0002): budget-allocator blocks (large ones are
  // their own mappings, freed to the OS on any thread) charged to no call, on this thread and on the helper thread
  // alike. So an encode needing tens of MB of libwebp working memory runs under a 64 KiB budget and leaves it at 0, and
  // a decode charges exactly its output buffer.
  const uint32_t W = 1200, H = 900;
  const auto px = photo(W, H, 4, 5u);
  panto::Budget small(64 << 10);
  std::vector<uint8_t> webp;
  {
    panto::BudgetScope scope(&small);
    panto::OwnedBytes out;
    const auto st = panto::encode_webp({W, H, 4, px.data()}, false, 80, &out);
    PANTO_REQUIRE(st.ok());
    webp = bytes_of(out);
  }
  PANTO_CHECK_EQ(small.used.load(), uint64_t(0));
  PANTO_CHECK_EQ(small.peak.load(), uint64_t(0));
  PANTO_CHECK(!small.exceeded.load());
  panto::Budget exact(uint64_t(W) * H * 4);
  panto::Pixels out;
  PANTO_REQUIRE(decode(webp, &exact, &out).ok());
  PANTO_CHECK_EQ(exact.used.load(), uint64_t(W) * H * 4);
  PANTO_CHECK_EQ(exact.peak.load(), uint64_t(W) * H * 4);
  PANTO_CHECK(!exact.exceeded.load());
  panto::BudgetScope scope(&exact);  // a block is uncharged when freed under its own budget's scope
  out.data.reset();
  PANTO_CHECK_EQ(exact.used.load(), uint64_t(0));
}

PANTO_TEST(webp, abort_stops_an_encode_whose_alpha_is_on_the_helper_thread) {
  const uint32_t W = 1600, H = 1600;
  const auto px = photo(W, H, 4, 7u);
  const panto::PixelView v{W, H, 4, px.data()};
  {  // already set
    std::atomic<int> flag{1};
    panto::Budget b(2ull << 30, &flag);
    panto::BudgetScope scope(&b);
    panto::OwnedBytes out;
    expect_aborted(panto::encode_webp(v, false, 80, &out), "lossy+alpha encode (flag set)", __LINE__);
  }
  {  // raised while the colour planes are encoded and the alpha plane is compressed on the helper thread (20 ms in;
     // the encode takes far longer, even unsanitized)
    std::atomic<int> flag{0};
    panto::Budget b(2ull << 30, &flag);
    std::thread t([&flag] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      flag.store(1);
    });
    panto::Status st;
    {
      panto::BudgetScope scope(&b);
      panto::OwnedBytes out;
      st = panto::encode_webp(v, false, 80, &out);
    }
    t.join();
    expect_aborted(st, "lossy+alpha encode (raised mid-way)", __LINE__);
  }
  {  // the same encode completes when nobody aborts (the hook ran on this thread with the scope active throughout)
    std::atomic<int> flag{0};
    panto::Budget b(2ull << 30, &flag);
    panto::BudgetScope scope(&b);
    panto::OwnedBytes out;
    PANTO_CHECK(panto::encode_webp(v, false, 80, &out).ok());
  }
}

PANTO_TEST(webp, abort_stops_a_decode_whose_alpha_rows_are_on_the_helper_thread) {
  const uint32_t W = 2000, H = 2000;
  const auto webp = encode(photo(W, H, 4, 99u), W, H, 4, false, true);
  PANTO_REQUIRE(!webp.empty());
  std::atomic<int> flag{0};
  panto::Budget b(2ull << 30, &flag);
  // Raised once the decoder has charged its output buffer (it is then decoding rows).
  std::thread t([&b, &flag] {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (b.used.load() < uint64_t(W) * H * 4 && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
    flag.store(1);
  });
  panto::Pixels px;
  const auto st = decode(webp, &b, &px);
  t.join();
  expect_aborted(st, "lossy+alpha decode (raised mid-way)", __LINE__);
  PANTO_CHECK(px.data.data == nullptr);
}
