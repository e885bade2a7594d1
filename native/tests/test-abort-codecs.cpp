// Abort reaches every long-running codec step (issue 12): the WebP decoder (incremental, still and first animation
// frame), stb's GIF LZW loop (cdeps/patches/stb/0007), the WebP encoder (progress hook) and the PNG encoder (between
// row bands). Each codec function is called directly (process() also polls between stages, which would hide a codec
// that ignores the flag): once with the flag already set, and once with the flag raised from another thread while the
// codec runs on a large noise image. Without the polling each of these returns OK.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "budget.h"
#include "internal.h"
#include "test-util.h"

using namespace panto_test;

namespace {

/** Deterministic noise pixels (xorshift), `channels` 3 or 4. */
std::vector<uint8_t> noise(uint32_t w, uint32_t h, int channels) {
  std::vector<uint8_t> v(size_t(w) * h * channels);
  uint32_t s = 0x9E3779B9u;
  for (auto& b : v) {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    b = uint8_t(s >> 24);
  }
  return v;
}

std::vector<uint8_t> to_vector(panto::ByteView b) { return {b.data, b.data + b.size}; }

/** Encodes noise with our own encoders (no budget scope: unlimited, never aborted). */
std::vector<uint8_t> noise_webp(uint32_t w, uint32_t h, bool lossless) {
  const auto px = noise(w, h, 3);
  panto::OwnedBytes out;
  if (!panto::encode_webp({w, h, 3, px.data()}, lossless, 90, &out).ok()) std::abort();
  return to_vector(out.view());
}

/** A smooth gradient (a few KB as WebP: the whole image decodes from one step of input, so only libwebp's own row
 *  polling can stop it). */
std::vector<uint8_t> gradient_webp(uint32_t w, uint32_t h, bool lossless) {
  std::vector<uint8_t> px(size_t(w) * h * 3);
  for (uint32_t y = 0; y < h; y++)
    for (uint32_t x = 0; x < w; x++) {
      uint8_t* p = &px[(size_t(y) * w + x) * 3];
      p[0] = uint8_t(x * 255 / w);
      p[1] = uint8_t(y * 255 / h);
      p[2] = uint8_t((x + y) * 255 / (w + h));
    }
  panto::OwnedBytes out;
  if (!panto::encode_webp({w, h, 3, px.data()}, lossless, 80, &out).ok()) std::abort();
  return to_vector(out.view());
}

/**
 * A GIF of w x h noise (256 grey levels): 9-bit LZW codes, a clear code before every 254 literals so the code size
 * never grows (an "uncompressed" LZW stream, ~1.1 bytes per pixel), in 255-byte sub-blocks.
 */
std::vector<uint8_t> noise_gif(uint32_t w, uint32_t h) {
  std::vector<uint8_t> g = {'G', 'I', 'F', '8', '9', 'a'};
  put_le16(g, w);
  put_le16(g, h);
  g.insert(g.end(), {0xF7, 0, 0});  // global colour table of 256 entries
  for (int i = 0; i < 256; i++) g.insert(g.end(), {uint8_t(i), uint8_t(i), uint8_t(i)});
  g.push_back(0x2C);
  put_le16(g, 0);
  put_le16(g, 0);
  put_le16(g, w);
  put_le16(g, h);
  g.push_back(0);
  g.push_back(8);  // LZW minimum code size
  std::vector<uint8_t> lzw;
  uint32_t acc = 0;
  int nbits = 0;
  auto emit = [&](uint32_t code) {
    acc |= code << nbits;
    nbits += 9;
    while (nbits >= 8) {
      lzw.push_back(uint8_t(acc));
      acc >>= 8;
      nbits -= 8;
    }
  };
  const auto px = noise(w, h, 1);
  for (size_t i = 0; i < px.size(); i++) {
    if (i % 254 == 0) emit(256);
    emit(px[i]);
  }
  emit(257);
  if (nbits > 0) lzw.push_back(uint8_t(acc));
  for (size_t i = 0; i < lzw.size(); i += 255) {
    const size_t n = std::min<size_t>(255, lzw.size() - i);
    g.push_back(uint8_t(n));
    g.insert(g.end(), lzw.begin() + std::ptrdiff_t(i), lzw.begin() + std::ptrdiff_t(i + n));
  }
  g.push_back(0);
  g.push_back(0x3B);
  return g;
}

/** Raises `flag` once the budget has charged `bytes` (the codec allocated its output and is now working). */
std::thread raise_when_charged(const panto::Budget& b, uint64_t bytes, std::atomic<int>* flag) {
  return std::thread([&b, bytes, flag] {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (b.used.load() < bytes && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
    flag->store(1);
  });
}

/** Raises `flag` after `ms` milliseconds (for libwebp's encoder, whose allocations the budget does not see). */
std::thread raise_after(int ms, std::atomic<int>* flag) {
  return std::thread([ms, flag] {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    flag->store(1);
  });
}

panto::Status decode(const std::vector<uint8_t>& in, std::atomic<int>* flag, uint64_t raise_at = 0) {
  panto::MediaInfo info;
  const auto st = panto::probe(in.data(), in.size(), &info);
  if (!st.ok()) return st;
  panto::Budget b(2ull << 30, flag);
  std::thread t;
  if (raise_at) t = raise_when_charged(b, raise_at, flag);
  panto::Status s;
  {
    panto::BudgetScope scope(&b);
    panto::Pixels px;
    s = panto::decode_image(in.data(), in.size(), info, &px);
  }
  if (t.joinable()) t.join();
  return s;
}

void expect_aborted(const panto::Status& st, const std::string& what, int line) {
  if (st.code != "ERR_ABORTED") record_failure(__FILE__, line, what + ": '" + st.code + "' " + st.message);
}

}  // namespace

PANTO_TEST(budget, abort_flag_set_stops_webp_and_gif_decoders) {
  for (const char* name : {"webp-lossy.webp", "webp-lossless.webp", "webp-lossy-alpha.webp", "webp-animated.webp",
                           "gif-still.gif", "gif-animated.gif", "gif-transparent.gif"}) {
    std::atomic<int> flag{1};
    expect_aborted(decode(fixture(name), &flag), name, __LINE__);
    std::atomic<int> clear{0};
    PANTO_CHECK(decode(fixture(name), &clear).ok());  // the same decode completes when nobody aborts
  }
}

PANTO_TEST(budget, abort_mid_decode_stops_webp_and_gif) {
  // The flag is raised once the decoder has allocated its output (and is decoding): only polling inside the codec
  // can return ERR_ABORTED from decode_image.
  const uint32_t W = 1600, H = 1600;
  struct Case {
    const char* what;
    std::vector<uint8_t> bytes;
    uint64_t output;
  };
  const Case cases[] = {
      {"lossy webp", noise_webp(W, H, false), uint64_t(W) * H * 3},
      {"lossless webp", noise_webp(W, H, true), uint64_t(W) * H * 3},
      {"gif", noise_gif(W, H), uint64_t(W) * H * 4},
      // One step of input holds the whole image: libwebp's row polling (cdeps/patches/libwebp/0001) stops these.
      {"lossy gradient webp", gradient_webp(3000, 3000, false), uint64_t(3000) * 3000 * 3},
      {"lossless gradient webp", gradient_webp(3000, 3000, true), uint64_t(3000) * 3000 * 3},
  };
  for (const auto& c : cases) {
    std::atomic<int> flag{0};
    expect_aborted(decode(c.bytes, &flag, c.output), c.what, __LINE__);
  }
}

PANTO_TEST(budget, abort_stops_webp_and_png_encoders) {
  const uint32_t W = 1600, H = 1600;
  const auto px3 = noise(W, H, 3);
  const auto px4 = noise(W, H, 4);
  const panto::PixelView v3{W, H, 3, px3.data()}, v4{W, H, 4, px4.data()};
  auto encode = [&](int kind) {
    panto::OwnedBytes out;
    switch (kind) {
      case 0: return panto::encode_webp(v3, false, 80, &out);
      case 1: return panto::encode_webp(v4, true, 80, &out);
      default: return panto::encode_png(v4, &out);
    }
  };
  const char* names[] = {"lossy webp encode", "lossless webp encode", "png encode"};
  for (int kind = 0; kind < 3; kind++) {
    {  // already set
      std::atomic<int> flag{1};
      panto::Budget b(2ull << 30, &flag);
      panto::BudgetScope scope(&b);
      expect_aborted(encode(kind), std::string(names[kind]) + " (flag set)", __LINE__);
    }
    {  // raised while encoding: WebP after 20 ms (an encode of this image takes far longer, even unsanitized), PNG
       // once its filtered-rows buffer is charged (filtering then runs over 1600 rows, polled every 64)
      std::atomic<int> flag{0};
      panto::Budget b(2ull << 30, &flag);
      std::thread t = kind == 2 ? raise_when_charged(b, uint64_t(W * 4 + 1) * H, &flag) : raise_after(20, &flag);
      panto::Status st;
      {
        panto::BudgetScope scope(&b);
        st = encode(kind);
      }
      t.join();
      expect_aborted(st, std::string(names[kind]) + " (raised mid-way)", __LINE__);
    }
  }
}

PANTO_TEST(budget, damaged_webp_alpha_is_corrupt_not_aborted) {
  // libwebp reports alpha data it cannot decode as VP8_STATUS_USER_ABORT (its row output fails): without an abort
  // flag that is a corrupt file, never ERR_ABORTED. Two flipped bytes, one in ALPH and one in VP8 (found by
  // scripts/native-asan-smoke.mjs, "flipped#9").
  auto in = fixture("webp-lossy-alpha.webp");
  PANTO_REQUIRE(in.size() == 238 && std::equal(in.begin() + 30, in.begin() + 34, "ALPH"));
  in[71] ^= 104;
  in[191] ^= 99;
  panto::DecodedImage img;
  const auto st = panto::decode_to_rgba(in.data(), in.size(), 100000000, &img);
  PANTO_CHECK_EQ(st.code, std::string("ERR_CORRUPT_MEDIA"));
  std::atomic<int> flag{0};
  PANTO_CHECK_EQ(decode(in, &flag).code, std::string("ERR_CORRUPT_MEDIA"));  // a flag that is not raised: the same
}
