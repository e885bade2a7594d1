// The streaming JPEG path (jpeg-resize-stream.h: libjpeg-turbo scanlines at the chosen M/8 scale -> resize, row by
// row) against the whole-image path it replaces (decode_jpeg -> resize_pixels), through process(): byte-identical
// outputs for baseline, progressive, restart-marker, grayscale, CMYK and YCCK files, 4:4:4 / 4:2:0 / 4:2:2 sampling,
// every EXIF orientation, odd sizes, every DCT scale (1/8 .. 8/8), forced output formats and the byte-cap ladder,
// with the decoder on a helper thread and sequentially; the same error codes for damaged and truncated streams; a
// tight budget (ERR_MEDIA_TOO_LARGE, nothing left charged);
// abort mid-stream; the decoder's own scan-count limit; and the cost estimate that no longer counts a decoded image.
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include <jpeglib.h>
}

#include "abort-sweep.h"
#include "budget-ladder.h"
#include "budget.h"
#include "cost.h"
#include "internal.h"
#include "jpeg-decode.h"
#include "jpeg-maker.h"
#include "jpeg-planar.h"
#include "jpeg-resize-stream.h"
#include "parallel.h"
#include "process-switch-run.h"
#include "row-resize-stream.h"
#include "test-util.h"

using panto::MediaType;
using panto::ProcessOptions;
using namespace panto_test;

namespace {

/** The planar YCbCr path (jpeg-planar.h) off while it lives: these tests pin the RGB stream, whose bytes are the
 *  whole-image path's (test-jpeg-planar.cpp pins the planar one). */
struct PlanarOff {
  bool prev = panto::set_jpeg_planar(false);
  ~PlanarOff() { panto::set_jpeg_planar(prev); }
};

Outcome run(const std::vector<uint8_t>& in, const ProcessOptions& o, bool streaming, bool threads = true) {
  PlanarOff off;
  return run_switched(panto::set_jpeg_streaming, in, o, streaming, threads);
}

/** process()'s target for `in` under `o`, in stored orientation, and the DCT scale it decodes at. */
bool plan_of(const std::vector<uint8_t>& in, const ProcessOptions& o, panto::MediaInfo* info, uint32_t* sw,
             uint32_t* sh, int* eighths) {
  if (!panto::probe(in.data(), in.size(), info).ok()) return false;
  const bool swap = info->orientation >= 5;
  const uint32_t ow = swap ? info->height : info->width, oh = swap ? info->width : info->height;
  uint32_t tw = ow, th = oh;
  if (tw > o.max_dimension || th > o.max_dimension) {
    const double s = double(o.max_dimension) / double(std::max(ow, oh));
    tw = std::max<uint32_t>(1, std::min<uint32_t>(o.max_dimension, uint32_t(std::lround(ow * s))));
    th = std::max<uint32_t>(1, std::min<uint32_t>(o.max_dimension, uint32_t(std::lround(oh * s))));
  }
  *sw = swap ? th : tw;
  *sh = swap ? tw : th;
  *eighths = panto::jpeg_scale_eighths(info->width, info->height, *sw, *sh);
  return true;
}

/** Whether process() takes the streaming path for `in` under `o` (same header math as process.cpp). */
bool streams(const std::vector<uint8_t>& in, const ProcessOptions& o, int* eighths_out = nullptr) {
  panto::MediaInfo info;
  uint32_t sw = 0, sh = 0;
  int e = 8;
  if (!plan_of(in, o, &info, &sw, &sh, &e)) return false;
  if (eighths_out) *eighths_out = e;
  return panto::jpeg_stream_resizes(info, e, sw, sh);
}

/** Streaming (threaded and sequential) against the whole-image path: same code, bytes, size, type and changes. */
void expect_same(const std::string& what, const std::vector<uint8_t>& in, const ProcessOptions& o) {
  PlanarOff off;
  expect_streamed_same(panto::set_jpeg_streaming, what, in, o);
}

}  // namespace

PANTO_TEST(jpeg, streaming_matches_whole_image_on_every_layout_and_scale) {
  int streamed = 0;
  bool scale_seen[9] = {};
  for (const JSpec& s : layouts()) {
    const auto jpeg = make_jpeg(s);
    const uint32_t big = std::max(s.w, s.h);
    // Targets between every DCT scale libjpeg-turbo has (big/9 .. big - 3): process() decodes them at 1/8, 2/8, 4/8
    // or 8/8 (jpeg_scale_eighths), the others falling to the next of these.
    for (uint32_t dim : {big / 9, big / 5, big / 3, big / 2 - 1, big * 3 / 5, big * 5 / 7, big * 6 / 7, big - 3}) {
      if (dim < 8) continue;
      ProcessOptions o;
      o.max_dimension = dim;
      int e = 8;
      const bool st = streams(jpeg, o, &e);
      if (st) {
        streamed++;
        scale_seen[e] = true;
      }
      expect_same(std::string(s.name) + " -> " + std::to_string(dim), jpeg, o);
    }
  }
  std::printf("  %d streamed cases over %zu layouts\n", streamed, layouts().size());
  PANTO_CHECK(streamed >= 70);
  for (int e : {1, 2, 4, 8})
    if (!scale_seen[e]) record_failure(__FILE__, __LINE__, "no streamed case at scale " + std::to_string(e) + "/8");
}

PANTO_TEST(jpeg, streaming_matches_whole_image_for_every_orientation_and_format) {
  for (int orientation = 1; orientation <= 8; orientation++) {
    JSpec s{"oriented", 523, 347};
    s.orientation = orientation;
    const auto jpeg = make_jpeg(s);
    for (panto::OutputFormat f : {panto::OutputFormat::Auto, panto::OutputFormat::Png, panto::OutputFormat::Webp}) {
      ProcessOptions o;
      o.max_dimension = 300;
      o.format = f;
      PANTO_CHECK(streams(jpeg, o));
      const Outcome r = run(jpeg, o, true);
      bool oriented = false;
      for (const std::string& c : r.changes) oriented = oriented || c == "oriented";
      PANTO_CHECK_EQ(oriented, orientation != 1);
      expect_same("orientation " + std::to_string(orientation) + " format " + std::to_string(int(f)), jpeg, o);
    }
  }
}

PANTO_TEST(jpeg, streaming_matches_whole_image_through_the_byte_cap_ladder) {
  const auto jpeg = make_jpeg(JSpec{"ladder", 1203, 901, 3, 1, 1, false, 0, false, 6, 97});
  for (uint64_t cap : {uint64_t(60000), uint64_t(20000), uint64_t(3000), uint64_t(200)}) {
    ProcessOptions o;
    o.max_dimension = 700;
    o.max_encoded_bytes = cap;
    o.jpeg_quality = 95;
    PANTO_CHECK(streams(jpeg, o));
    expect_same("ladder cap " + std::to_string(cap), jpeg, o);
  }
}

PANTO_TEST(jpeg, damaged_and_truncated_streams_fail_alike) {
  ProcessOptions o;
  o.max_dimension = 260;
  // (libjpeg-turbo's fast Huffman path decodes a bad code of a baseline scan as 0 without a warning, so only some
  // damage is detectable; the damaged outputs that decode must still be identical.)
  int total_failures = 0;
  for (const JSpec& s : {JSpec{"baseline", 641, 479}, JSpec{"progressive", 613, 411, 3, 2, 2, true},
                         JSpec{"restart", 577, 389, 3, 2, 2, false, 1}}) {
    const auto good = make_jpeg(s);
    PANTO_REQUIRE(streams(good, o));
    size_t sos = 0;
    for (size_t i = 2; i + 1 < good.size(); i++)
      if (good[i] == 0xFF && good[i + 1] == 0xDA) {
        sos = i;
        break;
      }
    PANTO_REQUIRE(sos > 0);
    // Byte flips over the entropy-coded data (start, middle, near the end), several seeds each.
    Prng r(7u + s.w);
    int failures_seen = 0;
    for (int k = 0; k < 24; k++) {
      std::vector<uint8_t> bad = good;
      const size_t span = good.size() - 2 - (sos + 20);
      const size_t at = sos + 20 + (k % 3 == 0 ? r.next() % 64 : k % 3 == 1 ? span / 2 : span - 1 - r.next() % 64);
      for (int j = 0; j < 4; j++) bad[at + j] ^= uint8_t(1 + r.next() % 255);
      const Outcome whole = run(bad, o, false);
      if (whole.code != "OK") failures_seen++;
      expect_same(std::string(s.name) + " flipped at " + std::to_string(at), bad, o);
    }
    // Sixteen 1-bits (0xFF 0x00 stuffed) are no Huffman code of the standard tables: a bad code at the start, the
    // middle and in the last rows; and, with restart markers, an RST out of sequence in the middle (must resync).
    const size_t span = good.size() - 2 - (sos + 20);
    for (size_t at : {sos + 40, sos + 20 + span / 2, good.size() - 2 - 64}) {
      std::vector<uint8_t> bad = good;
      for (int j = 0; j < 16; j += 2) bad[at + size_t(j)] = 0xFF, bad[at + size_t(j) + 1] = 0x00;
      const Outcome whole = run(bad, o, false);
      if (whole.code != "OK") failures_seen++;
      expect_same(std::string(s.name) + " bad Huffman code at " + std::to_string(at), bad, o);
    }
    if (s.restart_rows > 0) {
      std::vector<uint8_t> bad = good;
      size_t rst = 0;
      for (size_t i = sos + 20 + span / 2; i + 1 < good.size(); i++)
        if (good[i] == 0xFF && good[i + 1] >= 0xD0 && good[i + 1] <= 0xD7) {
          rst = i;
          break;
        }
      PANTO_REQUIRE(rst > 0);
      bad[rst + 1] = uint8_t(0xD0 + ((bad[rst + 1] - 0xD0 + 3) & 7));
      const Outcome whole = run(bad, o, false);
      PANTO_CHECK_EQ(whole.code, std::string("ERR_CORRUPT_MEDIA"));
      expect_same(std::string(s.name) + " RST out of sequence", bad, o);
    }
    std::printf("  %s: %d of 27 damaged variants fail\n", s.name, failures_seen);
    total_failures += failures_seen;
    // Cut short (with and without an EOI put back after the cut): the walk, or the decoder, refuses alike.
    for (size_t keep : {good.size() / 3, good.size() / 2, good.size() - 40}) {
      std::vector<uint8_t> cut(good.begin(), good.begin() + long(keep));
      expect_same(std::string(s.name) + " cut at " + std::to_string(keep), cut, o);
      PANTO_CHECK(run(cut, o, true).code != "OK");
      cut.push_back(0xFF);
      cut.push_back(0xD9);
      expect_same(std::string(s.name) + " cut at " + std::to_string(keep) + " + EOI", cut, o);
    }
  }
  PANTO_CHECK(total_failures >= 8);
}

PANTO_TEST(jpeg, streaming_resize_stops_on_abort_mid_stream) {
  // JpegRowReader as the producer of the row stream; the sink raises the abort flag at the 10th resized row. The
  // decoder (at most a ring ahead) sees it at its next row and the resize stops at the next row it asks for:
  // ERR_ABORTED, on the helper thread and sequentially, with every block freed and the helper joined.
  struct Producer final : panto::RowProducer {
    panto::JpegRowReader* reader;
    std::vector<uint8_t> cmyk;
    panto::Status next_row(uint8_t* dst) override {
      if (reader->channels() == 3) return reader->read_rows(&dst, 1);
      uint8_t* row = cmyk.data();
      panto::Status s = reader->read_rows(&row, 1);
      if (s.ok()) panto::cmyk_row_to_rgb(row, dst, reader->width());
      return s;
    }
    panto::Status finish() override { return reader->finish(); }
  };
  for (const JSpec& s : {JSpec{"baseline", 1601, 1201}, JSpec{"progressive-cmyk", 1203, 905, 4, 1, 1, true}}) {
    const auto jpeg = make_jpeg(s);
    panto::MediaInfo info;
    PANTO_REQUIRE(panto::probe(jpeg.data(), jpeg.size(), &info).ok());
    abort_sweep([&](bool threads, panto::Budget& budget, std::atomic<int>& flag) {
      uint32_t rows_seen = 0;
      {
        panto::BudgetScope scope(&budget);
        panto::JpegRowReader reader;
        PANTO_REQUIRE(reader.open(jpeg.data(), jpeg.size(), info, 4).ok());
        Producer p;
        p.reader = &reader;
        p.cmyk.resize(size_t(reader.width()) * 4);
        const uint32_t sw = 700, sh = uint32_t(std::lround(700.0 * s.h / s.w));
        const panto::Status st = panto::row_resize_stream(
            &p, reader.width(), reader.height(), 3, sw, sh,
            [&](const uint8_t*, uint32_t y) {
              rows_seen = y + 1;
              if (y == 10) flag.store(1);
            },
            MediaType::Jpeg);
        PANTO_CHECK_EQ(st.code, std::string("ERR_ABORTED"));
        PANTO_CHECK(rows_seen < sh / 2);
      }
      // Straight into the encoder: an abort seen by the decoder (here already raised at its first row) stops the
      // stream and releases the encoder and the decoder, with nothing left charged.
      {
        std::atomic<int> raised{1};
        panto::Budget b2(256ull << 20, &raised);
        {
          panto::BudgetScope scope(&b2);
          panto::OwnedBytes encoded;
          const panto::Status st = panto::jpeg_resize_stream_encode(jpeg.data(), jpeg.size(), info, 4, 700,
                                                                    uint32_t(std::lround(700.0 * s.h / s.w)), 80,
                                                                    &encoded);
          PANTO_CHECK_EQ(st.code, std::string("ERR_ABORTED"));
          PANTO_CHECK(encoded.data == nullptr);
        }
        PANTO_CHECK_EQ(b2.used.load(), uint64_t(0));
      }
      // And through process(): an abort flag already raised stops the call before any pixel work.
      ProcessOptions o;
      o.max_dimension = 700;
      std::atomic<int> raised{1};
      o.abort_flag = &raised;
      PANTO_CHECK_EQ(run(jpeg, o, true, threads).code, std::string("ERR_ABORTED"));
    });
  }
}

PANTO_TEST(jpeg, streaming_decoder_refuses_too_many_scans_itself) {
  // jpeg_resize_stream straight (no check_structure walk before it): libjpeg-turbo's own decoding still stops a file
  // of hundreds of scans, and process() still refuses a scan bomb from the headers.
  const auto base = make_jpeg(JSpec{"progressive", 640, 480, 3, 1, 1, true});
  // Repeat the last scan (its SOS .. EOI) 300 times: a bogus progression, and past the 256-scan limit.
  size_t last_sos = 0;
  for (size_t i = 2; i + 1 < base.size(); i++)
    if (base[i] == 0xFF && base[i + 1] == 0xDA) last_sos = i;
  PANTO_REQUIRE(last_sos > 0);
  std::vector<uint8_t> bomb(base.begin(), base.end() - 2);
  const std::vector<uint8_t> scan(base.begin() + long(last_sos), base.end() - 2);
  for (int i = 0; i < 300; i++) bomb.insert(bomb.end(), scan.begin(), scan.end());
  bomb.push_back(0xFF);
  bomb.push_back(0xD9);
  expect_decoder_refuses(bomb, [](const uint8_t* d, size_t len, const panto::MediaInfo& info, panto::Pixels* px) {
    return panto::jpeg_resize_stream(d, len, info, 4, 300, 225, px);
  });
  ProcessOptions o;
  o.max_dimension = 300;
  PANTO_CHECK(streams(bomb, o));
  expect_same("scan bomb", bomb, o);
  PANTO_CHECK(run(bomb, o, true).code == "ERR_CORRUPT_MEDIA");
}

PANTO_TEST(jpeg, streaming_estimate_holds_no_decoded_image) {
  // A 4032x3024 photo-sized JPEG going to 2000 px decodes at 4/8 (2016x1512): the estimate no longer counts the
  // scaled decode, and the budget the call really uses stays below the estimate and under the whole-image peak minus
  // most of the decoded image.
  for (bool progressive : {false, true}) {
    JSpec s{"photo", 4032, 3024};
    s.progressive = progressive;
    const auto jpeg = make_jpeg(s);
    panto::MediaInfo info;
    PANTO_REQUIRE(panto::probe(jpeg.data(), jpeg.size(), &info).ok());
    const int e = panto::jpeg_scale_eighths(4032, 3024, 2000, 1500);
    PANTO_CHECK_EQ(e, 4);
    const uint64_t decoded = uint64_t(2016) * 1512 * 3;
    const bool prev = panto::set_jpeg_streaming(false);
    const uint64_t whole = panto::estimate_process_bytes(jpeg.data(), jpeg.size(), info, e, 2000, 1500, 1);
    panto::set_jpeg_streaming(true);
    const uint64_t streamed = panto::estimate_process_bytes(jpeg.data(), jpeg.size(), info, e, 2000, 1500, 1);
    panto::set_jpeg_streaming(prev);
    PANTO_CHECK(whole - streamed >= decoded * 3 / 4);
    for (bool threads : {true, false}) {
      const bool prev_t = panto::set_parts_concurrency(threads);
      panto::Budget budget(streamed);
      {
        panto::BudgetScope scope(&budget);
        panto::Pixels px;
        PANTO_CHECK(panto::jpeg_resize_stream(jpeg.data(), jpeg.size(), info, e, 2000, 1500, &px).ok());
      }
      const uint64_t resized = uint64_t(2000) * 1500 * 3;
      std::printf("  %s (%s): estimate whole %llu MiB, streaming %llu MiB; budget peak %llu KiB (resized %llu KiB)\n",
                  progressive ? "progressive" : "baseline", threads ? "threaded" : "sequential",
                  (unsigned long long)(whole >> 20), (unsigned long long)(streamed >> 20),
                  (unsigned long long)(budget.peak.load() >> 10), (unsigned long long)(resized >> 10));
      PANTO_CHECK(budget.peak.load() < streamed);
      // Besides the resized image: libjpeg's state (full-size coefficients when progressive), ring and stbir.
      const uint64_t coefs = progressive ? uint64_t(4032) * 3024 * 2 * 3 / 2 + (1u << 20) : 0;
      PANTO_CHECK(budget.peak.load() - resized < decoded / 4 + coefs);
      PANTO_CHECK_EQ(budget.used.load(), uint64_t(0));
      // Straight into the encoder: neither the decoded nor the resized image exists. What is left is libjpeg's
      // (the encoder's optimised-Huffman coefficients: 128 bytes per 8x8 block of 2000x1500 at 4:2:0, 70500 blocks;
      // the decoder's coefficients when progressive), the output and the stream's ring and stbir buffers.
      panto::Budget fused_budget(streamed);
      panto::OwnedBytes encoded;
      {
        panto::BudgetScope scope(&fused_budget);
        PANTO_CHECK(panto::jpeg_resize_stream_encode(jpeg.data(), jpeg.size(), info, e, 2000, 1500, 80, &encoded).ok());
      }
      const uint64_t enc_coefs = 70500ull * 128;
      std::printf("  %s (%s): fused budget peak %llu KiB (encoder coefficients %llu KiB, output %llu KiB)\n",
                  progressive ? "progressive" : "baseline", threads ? "threaded" : "sequential",
                  (unsigned long long)(fused_budget.peak.load() >> 10), (unsigned long long)(enc_coefs >> 10),
                  (unsigned long long)(encoded.size >> 10));
      PANTO_CHECK(fused_budget.peak.load() < enc_coefs + coefs + resized / 2);
      // The same bytes as encoding the streamed pixels whole.
      {
        panto::Budget b2(streamed);
        panto::BudgetScope scope(&b2);
        panto::Pixels px;
        PANTO_REQUIRE(panto::jpeg_resize_stream(jpeg.data(), jpeg.size(), info, e, 2000, 1500, &px).ok());
        panto::OwnedBytes whole_enc;
        PANTO_REQUIRE(panto::encode_jpeg(px.view(), 80, &whole_enc).ok());
        PANTO_CHECK(whole_enc.size == encoded.size &&
                    std::memcmp(whole_enc.data, encoded.data, encoded.size) == 0);
      }
      panto::set_parts_concurrency(prev_t);
    }
  }
}

PANTO_TEST(jpeg, streaming_under_a_tight_budget_is_too_large_never_corrupt) {
  // Budgets from far too small to enough: every stop (the decoder's setup, the ring, stbir, the encoder's
  // coefficients or output) is ERR_MEDIA_TOO_LARGE, and nothing stays charged; both streamed paths.
  const auto jpeg = make_jpeg(JSpec{"progressive", 1601, 1201, 3, 2, 2, true});
  panto::MediaInfo info;
  PANTO_REQUIRE(panto::probe(jpeg.data(), jpeg.size(), &info).ok());
  budget_ladder("streamed resize", [&] {
    panto::Pixels px;
    return panto::jpeg_resize_stream(jpeg.data(), jpeg.size(), info, 4, 700, 525, &px);
  });
  budget_ladder("streamed resize into the encoder", [&] {
    panto::OwnedBytes out;
    return panto::jpeg_resize_stream_encode(jpeg.data(), jpeg.size(), info, 4, 700, 525, 80, &out);
  });
}
