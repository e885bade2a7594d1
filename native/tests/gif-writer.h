// A GIF writer for tests: literal-code LZW frames over a fixed 256-colour table, so what a decoder yields is exactly
// the indices written (used by the GIF stream and input-discard ctests).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "test-util.h"

namespace panto_test {

struct Frame {
  uint16_t x, y, w, h;
  bool interlaced = false;
  int transparent = -1;  // a transparent colour index (graphic control extension), or none
};

struct GifSpec {
  const char* name;
  uint16_t w, h;
  uint8_t bgindex;
  std::vector<Frame> frames;
};

/** LSB-first bit packer for GIF's LZW codes. */
struct Bits {
  std::vector<uint8_t> out;
  uint32_t acc = 0;
  int n = 0;
  void put(uint32_t code, int size) {
    acc |= code << n;
    n += size;
    while (n >= 8) {
      out.push_back(uint8_t(acc));
      acc >>= 8;
      n -= 8;
    }
  }
  void flush() {
    if (n > 0) out.push_back(uint8_t(acc));
    acc = 0;
    n = 0;
  }
};

/** A GIF whose frames' LZW data holds only literal codes (a clear code every 254 of them keeps the code size at 9
 *  bits): valid for every decoder, and what stb decodes is exactly the indices written. */
inline std::vector<uint8_t> make_gif(const GifSpec& s) {
  std::vector<uint8_t> g{'G', 'I', 'F', '8', '9', 'a'};
  auto le16 = [&](uint16_t v) {
    g.push_back(uint8_t(v));
    g.push_back(uint8_t(v >> 8));
  };
  le16(s.w);
  le16(s.h);
  g.push_back(0xF7);  // global colour table of 256 entries
  g.push_back(s.bgindex);
  g.push_back(0);
  for (int i = 0; i < 256; i++) {
    g.push_back(uint8_t(i * 7));
    g.push_back(uint8_t(255 - i));
    g.push_back(uint8_t((i * 13) ^ 0x5A));
  }
  Prng r(s.w * 17u + s.h);
  for (const Frame& f : s.frames) {
    if (f.transparent >= 0) {
      g.insert(g.end(), {0x21, 0xF9, 4, 0x01, 10, 0, uint8_t(f.transparent), 0});
    }
    g.push_back(0x2C);
    le16(f.x);
    le16(f.y);
    le16(f.w);
    le16(f.h);
    g.push_back(f.interlaced ? 0x40 : 0);
    g.push_back(8);  // LZW minimum code size
    Bits b;
    int since_clear = 0;
    b.put(256, 9);
    for (uint32_t y = 0; y < f.h; y++)
      for (uint32_t x = 0; x < f.w; x++) {
        // Smooth index gradients with noise and a sharp bar; the transparent index where (x + y) % 11 == 0.
        uint32_t v = ((x * 200) / f.w + (y * 50) / f.h + (r.next() % 5)) % 256;
        if (x > f.w / 3u && x < f.w / 3u + 7u) v = 255 - v;
        if (f.transparent >= 0) v = (x + y) % 11 == 0 ? uint32_t(f.transparent) : (v == uint32_t(f.transparent) ? v ^ 1 : v);
        if (since_clear == 254) {
          b.put(256, 9);
          since_clear = 0;
        }
        b.put(v, 9);
        since_clear++;
      }
    b.put(257, 9);  // end of information
    b.flush();
    for (size_t o = 0; o < b.out.size(); o += 255) {
      const size_t n = std::min<size_t>(255, b.out.size() - o);
      g.push_back(uint8_t(n));
      g.insert(g.end(), b.out.begin() + long(o), b.out.begin() + long(o + n));
    }
    g.push_back(0);
  }
  g.push_back(0x3B);
  return g;
}

}  // namespace panto_test
