// Helpers shared by the native tests: fixture lists, pixel sampling, pixel-bomb builders (mirrors
// test/helpers/media-bombs.ts), and a deterministic PRNG for corrupt variants.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "budget.h"
#include "harness.h"
#include "internal.h"
#include "media-core.h"

namespace panto_test {

struct FixtureType {
  const char* file;
  panto::MediaType type;
};

/** Every committed fixture with the type `sniff` must report. */
inline const std::vector<FixtureType>& all_fixtures() {
  using T = panto::MediaType;
  static const std::vector<FixtureType> v = {
      {"png-rgb.png", T::Png},           {"png-rgba.png", T::Png},
      {"png-16bit.png", T::Png},         {"png-16bit-rgba.png", T::Png},
      {"png-interlaced.png", T::Png},    {"png-palette-trns.png", T::Png},
      {"png-gray.png", T::Png},          {"png-metadata.png", T::Png},
      {"jpeg-baseline.jpg", T::Jpeg},    {"jpeg-progressive.jpg", T::Jpeg},
      {"jpeg-gray.jpg", T::Jpeg},        {"jpeg-cmyk.jpg", T::Jpeg},
      {"jpeg-metadata.jpg", T::Jpeg},    {"jpeg-orient-1.jpg", T::Jpeg},
      {"jpeg-orient-2.jpg", T::Jpeg},    {"jpeg-orient-3.jpg", T::Jpeg},
      {"jpeg-orient-4.jpg", T::Jpeg},    {"jpeg-orient-5.jpg", T::Jpeg},
      {"jpeg-orient-6.jpg", T::Jpeg},    {"jpeg-orient-7.jpg", T::Jpeg},
      {"jpeg-orient-8.jpg", T::Jpeg},    {"gif-still.gif", T::Gif},
      {"gif-transparent.gif", T::Gif},   {"gif-animated.gif", T::Gif},
      {"bmp-24.bmp", T::Bmp},            {"bmp-32-alpha.bmp", T::Bmp},
      {"bmp-topdown.bmp", T::Bmp},       {"bmp-4bit-palette.bmp", T::Bmp},
      {"bmp-rle8.bmp", T::Bmp},          {"webp-lossless.webp", T::Webp},
      {"webp-lossless-alpha.webp", T::Webp}, {"webp-lossy.webp", T::Webp},
      {"webp-lossy-alpha.webp", T::Webp}, {"webp-animated.webp", T::Webp},
      {"pdf-2page.pdf", T::Pdf},         {"tiff-rgb.tiff", T::Tiff},
      {"ico-32.ico", T::Ico},            {"svg-rgb.svg", T::Svg},
      {"avif-rgb.avif", T::Avif},        {"heic-rgb.heic", T::Heic},
      {"jxl-rgb.jxl", T::Jxl},
  };
  return v;
}

struct Rgba {
  int r, g, b, a;
};

inline Rgba pixel_at(const panto::DecodedImage& img, uint32_t x, uint32_t y) {
  const uint8_t* p = img.rgba.data + (static_cast<size_t>(y) * img.width + x) * 4;
  return {p[0], p[1], p[2], p[3]};
}

inline bool near(const Rgba& p, int r, int g, int b, int tol) {
  return std::abs(p.r - r) <= tol && std::abs(p.g - g) <= tol && std::abs(p.b - b) <= tol;
}

inline std::string show_rgba(const Rgba& p) {
  return "rgba(" + std::to_string(p.r) + "," + std::to_string(p.g) + "," + std::to_string(p.b) + "," +
         std::to_string(p.a) + ")";
}

/** The output bytes of a process() result: the input when unchanged. */
inline std::vector<uint8_t> output_bytes(const panto::ProcessResult& r, const std::vector<uint8_t>& input) {
  if (r.unchanged) return input;
  return std::vector<uint8_t>(r.data.data, r.data.data + r.data.size);
}

inline bool has_change(const panto::ProcessResult& r, const std::string& c) {
  for (const auto& x : r.changes)
    if (x == c) return true;
  return false;
}

inline bool contains(const std::vector<uint8_t>& hay, const std::string& needle) {
  if (needle.size() > hay.size()) return false;
  for (size_t i = 0; i + needle.size() <= hay.size(); ++i)
    if (std::equal(needle.begin(), needle.end(), hay.begin() + static_cast<std::ptrdiff_t>(i))) return true;
  return false;
}

/** True for the codes a failed process()/probe() may return for bad input (ERR_INTERNAL is a bug). */
inline bool is_input_error(const std::string& code) {
  return code == "ERR_CORRUPT_MEDIA" || code == "ERR_UNSUPPORTED_MEDIA" || code == "ERR_MEDIA_TOO_LARGE";
}

// ---- pixel bombs (mirror test/helpers/media-bombs.ts) ---------------------------------------------------------------

inline uint32_t crc32(const uint8_t* p, size_t n) {
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
  }
  return c ^ 0xffffffffu;
}

inline void put_be32(std::vector<uint8_t>& v, uint32_t x) {
  v.push_back(static_cast<uint8_t>(x >> 24));
  v.push_back(static_cast<uint8_t>(x >> 16));
  v.push_back(static_cast<uint8_t>(x >> 8));
  v.push_back(static_cast<uint8_t>(x));
}

inline void put_le16(std::vector<uint8_t>& v, uint32_t x) {
  v.push_back(static_cast<uint8_t>(x));
  v.push_back(static_cast<uint8_t>(x >> 8));
}

inline void put_le32(std::vector<uint8_t>& v, uint32_t x) {
  put_le16(v, x & 0xffff);
  put_le16(v, x >> 16);
}

inline void png_chunk(std::vector<uint8_t>& out, const char* type, const std::vector<uint8_t>& data) {
  put_be32(out, static_cast<uint32_t>(data.size()));
  const size_t start = out.size();
  out.insert(out.end(), type, type + 4);
  out.insert(out.end(), data.begin(), data.end());
  put_be32(out, crc32(out.data() + start, out.size() - start));
}

/** PNG 8-bit RGB declaring w x h, valid IHDR CRC, a stored (uncompressed) zlib block of one zero row-start. */
inline std::vector<uint8_t> png_bomb(uint32_t w = 20000, uint32_t h = 20000) {
  std::vector<uint8_t> out = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  std::vector<uint8_t> ihdr;
  put_be32(ihdr, w);
  put_be32(ihdr, h);
  ihdr.insert(ihdr.end(), {8, 2, 0, 0, 0});
  png_chunk(out, "IHDR", ihdr);
  // zlib header + one final stored block of 16 zero bytes (+ no adler: truncated stream on purpose)
  std::vector<uint8_t> idat = {0x78, 0x01, 0x01, 16, 0, static_cast<uint8_t>(~16), 0xff};
  idat.insert(idat.end(), 16, 0);
  png_chunk(out, "IDAT", idat);
  png_chunk(out, "IEND", {});
  return out;
}

/** The 35-byte GIF declaring w x h (see media-bombs.ts). */
inline std::vector<uint8_t> gif_bomb(uint32_t w = 20000, uint32_t h = 20000) {
  std::vector<uint8_t> out = {'G', 'I', 'F', '8', '9', 'a'};
  put_le16(out, w);
  put_le16(out, h);
  out.insert(out.end(), {0x80, 0, 0, 0, 0, 0, 255, 255, 255, 0x2c, 0, 0, 0, 0});
  put_le16(out, w);
  put_le16(out, h);
  out.insert(out.end(), {0, 2, 2, 0x44, 0x01, 0, 0x3b});
  return out;
}

/** 24-bit BMP declaring w x h (negative h = top-down) with 16 pixel bytes. */
inline std::vector<uint8_t> bmp_bomb(int32_t w = 20000, int32_t h = 20000) {
  std::vector<uint8_t> out = {'B', 'M'};
  put_le32(out, 54 + 16);
  put_le32(out, 0);
  put_le32(out, 54);
  put_le32(out, 40);
  put_le32(out, static_cast<uint32_t>(w));
  put_le32(out, static_cast<uint32_t>(h));
  put_le16(out, 1);
  put_le16(out, 24);
  out.resize(54 + 16, 0);
  return out;
}

/** A bottom-up 24-bit BMP of w x h RGB pixels (`rgb`: top row first, 3 bytes per pixel). */
inline std::vector<uint8_t> bmp24(uint32_t w, uint32_t h, const std::vector<uint8_t>& rgb) {
  const uint32_t stride = (w * 3 + 3) & ~3u;
  std::vector<uint8_t> out = {'B', 'M'};
  put_le32(out, 54 + stride * h);
  put_le32(out, 0);
  put_le32(out, 54);
  put_le32(out, 40);
  put_le32(out, w);
  put_le32(out, h);
  put_le16(out, 1);
  put_le16(out, 24);
  out.resize(54, 0);
  out.reserve(54 + size_t(stride) * h);
  for (uint32_t y = h; y-- > 0;) {
    for (uint32_t x = 0; x < w; x++) {
      const uint8_t* p = &rgb[(size_t(y) * w + x) * 3];
      out.insert(out.end(), {p[2], p[1], p[0]});
    }
    out.resize(out.size() + (stride - w * 3), 0);
  }
  return out;
}

/** Simple lossless WebP (VP8L) declaring w x h (1..16384). */
inline std::vector<uint8_t> webp_bomb(uint32_t w = 16384, uint32_t h = 16384) {
  std::vector<uint8_t> vp8l(20, 0);
  vp8l[0] = 0x2f;
  const uint32_t bits = (w - 1) | ((h - 1) << 14);
  for (int i = 0; i < 4; ++i) vp8l[1 + i] = static_cast<uint8_t>(bits >> (8 * i));
  std::vector<uint8_t> out = {'R', 'I', 'F', 'F'};
  put_le32(out, static_cast<uint32_t>(4 + 8 + vp8l.size()));
  out.insert(out.end(), {'W', 'E', 'B', 'P', 'V', 'P', '8', 'L'});
  put_le32(out, static_cast<uint32_t>(vp8l.size()));
  out.insert(out.end(), vp8l.begin(), vp8l.end());
  return out;
}

/** A copy of a JPEG with its SOF header rewritten to w x h. Empty when no SOF is found. */
inline std::vector<uint8_t> jpeg_with_dimensions(std::vector<uint8_t> jpeg, uint16_t w, uint16_t h) {
  size_t o = 2;
  while (o + 9 <= jpeg.size() && jpeg[o] == 0xff) {
    const uint8_t m = jpeg[o + 1];
    const size_t len = (static_cast<size_t>(jpeg[o + 2]) << 8) | jpeg[o + 3];
    if (m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc) {
      jpeg[o + 5] = static_cast<uint8_t>(h >> 8);
      jpeg[o + 6] = static_cast<uint8_t>(h);
      jpeg[o + 7] = static_cast<uint8_t>(w >> 8);
      jpeg[o + 8] = static_cast<uint8_t>(w);
      return jpeg;
    }
    if (m == 0xda) break;
    o += 2 + len;
  }
  return {};
}

/** Probes `bomb` (it must probe), then calls `decode(bomb.data(), bomb.size(), info, &px)` (a decoder called straight,
 *  with no structure check before it) under a fresh 1 GiB budget: it must refuse the file with ERR_CORRUPT_MEDIA,
 *  leave `px` empty and, once `px` is gone, nothing charged to the budget. */
template <class Decode>
void expect_decoder_refuses(const std::vector<uint8_t>& bomb, Decode decode) {
  panto::MediaInfo info;
  PANTO_REQUIRE(panto::probe(bomb.data(), bomb.size(), &info).ok());
  panto::Budget b(1ull << 30);
  {
    panto::BudgetScope scope(&b);
    panto::Pixels px;
    const panto::Status st = decode(bomb.data(), bomb.size(), info, &px);
    PANTO_CHECK_EQ(st.code, std::string("ERR_CORRUPT_MEDIA"));
    PANTO_CHECK(px.data.data == nullptr);
  }
  PANTO_CHECK_EQ(b.used.load(), uint64_t(0));
}

/** mulberry32, same sequence as test/helpers/media-corruption.ts seededRandom (as uint32). */
struct Prng {
  uint32_t a;
  explicit Prng(uint32_t seed) : a(seed) {}
  uint32_t next() {
    a += 0x6d2b79f5u;
    uint32_t t = a;
    t = (t ^ (t >> 15)) * (t | 1u);
    t ^= t + (t ^ (t >> 7)) * (t | 61u);
    return t ^ (t >> 14);
  }
};

}  // namespace panto_test
