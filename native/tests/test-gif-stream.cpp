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

#include "abort-sweep.h"
#include "budget.h"
#include "decoded-resize-stream.h"
#include "internal.h"
#include "process-switch-run.h"
#include "gif-writer.h"
#include "test-util.h"

using panto::MediaType;
using panto::ProcessOptions;
using namespace panto_test;

namespace {

void expect_same(const std::string& what, const std::vector<uint8_t>& in, const ProcessOptions& o) {
  const Outcome whole = expect_streamed_same(panto::set_gif_streaming, what, in, o);
  PANTO_CHECK_EQ(whole.code, std::string("OK"));
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
  abort_sweep([&](bool, panto::Budget& budget, std::atomic<int>& flag) {
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
  });
}
