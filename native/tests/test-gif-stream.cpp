// The GIF resize through the row stream (decoded-resize-stream.h: stb's whole first-frame canvas fed row by row to
// the resize, its pages given back as consumed) against drop_alpha -> resize_pixels, through process(): byte-identical
// outputs for full-canvas and partial first frames, with and without a background colour (stb keeps its per-pixel
// history only then: cdeps/patches/stb/0009), a transparent index, interlacing and a second frame, on the helper
// thread and sequentially, into JPEG, PNG and the byte-cap ladder; abort mid-stream frees everything.
#include <atomic>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "budget.h"
#include "decoded-resize-stream.h"
#include "internal.h"
#include "parallel.h"
#include "test-util.h"

using panto::MediaType;
using panto::ProcessOptions;
using panto::ProcessResult;
using namespace panto_test;

namespace {

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
std::vector<uint8_t> make_gif(const GifSpec& s) {
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

struct Outcome {
  std::string code;
  std::vector<uint8_t> bytes;
  uint32_t w = 0, h = 0;
  MediaType type = MediaType::Unknown;
  std::vector<std::string> changes;
};

Outcome run(const std::vector<uint8_t>& in, const ProcessOptions& o, bool streaming, bool threads = true) {
  const bool prev_s = panto::set_gif_streaming(streaming);
  const bool prev_t = panto::set_parts_concurrency(threads);
  ProcessResult r;
  const panto::Status st = panto::process(in.data(), in.size(), o, &r);
  panto::set_gif_streaming(prev_s);
  panto::set_parts_concurrency(prev_t);
  Outcome out;
  out.code = st.ok() ? "OK" : st.code;
  if (st.ok()) out.bytes = output_bytes(r, in);
  out.w = r.width, out.h = r.height, out.type = r.type, out.changes = r.changes;
  return out;
}

void expect_same(const std::string& what, const std::vector<uint8_t>& in, const ProcessOptions& o) {
  const Outcome whole = run(in, o, false);
  PANTO_CHECK_EQ(whole.code, std::string("OK"));
  for (bool threads : {true, false}) {
    const Outcome s = run(in, o, true, threads);
    const std::string label = what + (threads ? " (threaded)" : " (sequential)");
    if (s.code != whole.code || s.bytes != whole.bytes || s.w != whole.w || s.h != whole.h ||
        s.type != whole.type || s.changes != whole.changes)
      record_failure(__FILE__, __LINE__, label + ": differs from drop_alpha -> resize_pixels (" + s.code + ", " +
                                             std::to_string(s.bytes.size()) + " vs " +
                                             std::to_string(whole.bytes.size()) + " bytes)");
  }
}

std::vector<GifSpec> layouts() {
  return {
      {"full canvas", 613, 411, 0, {{0, 0, 613, 411}}},
      {"partial frame, no background colour", 600, 401, 0, {{37, 21, 500, 300}}},
      {"partial frame, background colour", 600, 401, 9, {{37, 21, 500, 300}}},
      {"transparent index", 517, 389, 0, {{0, 0, 517, 389, false, 3}}},
      {"interlaced, background colour", 433, 611, 5, {{0, 0, 433, 611, true}}},
      {"two frames", 640, 400, 2, {{0, 0, 640, 400}, {10, 10, 100, 100}}},
  };
}

}  // namespace

PANTO_TEST(gif, streamed_resize_matches_drop_alpha_then_resize) {
  for (const GifSpec& s : layouts()) {
    const auto gif = make_gif(s);
    for (uint32_t dim : {uint32_t(300), uint32_t(97), uint32_t(std::max(s.w, s.h) - 5)}) {
      for (panto::OutputFormat f : {panto::OutputFormat::Auto, panto::OutputFormat::Jpeg}) {
        ProcessOptions o;
        o.max_dimension = dim;
        o.format = f;
        expect_same(std::string(s.name) + " -> " + std::to_string(dim) + " format " + std::to_string(int(f)), gif,
                    o);
      }
    }
    // Over the byte cap: the ladder takes the streamed pixels.
    ProcessOptions o;
    o.max_dimension = 400;
    o.max_encoded_bytes = 20000;
    expect_same(std::string(s.name) + " ladder", gif, o);
  }
}

PANTO_TEST(gif, streamed_resize_stops_on_abort_and_frees_everything) {
  const auto gif = make_gif(GifSpec{"big", 1600, 1200, 0, {{0, 0, 1600, 1200}}});
  panto::MediaInfo info;
  PANTO_REQUIRE(panto::probe(gif.data(), gif.size(), &info).ok());
  for (bool threads : {true, false}) {
    const bool prev = panto::set_parts_concurrency(threads);
    std::atomic<int> flag{0};
    panto::Budget budget(256ull << 20, &flag);
    {
      panto::BudgetScope scope(&budget);
      panto::Pixels px;
      PANTO_REQUIRE(panto::decode_image(gif.data(), gif.size(), info, &px).ok());
      PANTO_CHECK_EQ(px.channels, 4);
      flag.store(1);  // raised before the stream: the producer's first poll stops it
      panto::Pixels out;
      const panto::Status s = panto::decoded_resize_stream(&px, true, 800, 600, MediaType::Gif, &out);
      PANTO_CHECK_EQ(s.code, std::string("ERR_ABORTED"));
      PANTO_CHECK(px.data.data == nullptr);  // the canvas is released whatever the outcome
      PANTO_CHECK(out.data.data == nullptr);
    }
    PANTO_CHECK_EQ(budget.used.load(), uint64_t(0));
    panto::set_parts_concurrency(prev);
  }
}
