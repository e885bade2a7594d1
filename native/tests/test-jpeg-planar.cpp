// The planar YCbCr JPEG -> JPEG path (jpeg-planar.h) against the RGB stream it replaces for YCbCr files, through
// process(): the same size, type and changes, pixels within a JPEG's rounding of each other, on every sampling
// (4:2:0, 4:2:2, 4:4:4, 4:4:0, 4:1:1), progressive and restart-marker files, odd sizes and each DCT scale; the same
// bytes with the row parts on threads or not; grey, CMYK and YCCK files fall back to the RGB stream (identical
// bytes); damaged, truncated (progressive scans cut short) and aborted files give the RGB path's error codes; a
// memory cap below the estimate refuses the call up front. The pipeline (decoder on a helper thread, planes resized
// and encoded in strips) gives the bytes and errors of the whole planes resized after the decode, threaded or not;
// it stops cleanly on an abort mid-call and under a budget too small at any point.
#include <atomic>
#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "budget-ladder.h"
#include "budget.h"
#include "cost.h"
#include "internal.h"
#include "jpeg-decode.h"
#include "jpeg-maker.h"
#include "jpeg-planar.h"
#include "abort-sweep.h"
#include "process-switch-run.h"
#include "test-util.h"

using panto::ProcessOptions;
using namespace panto_test;

namespace {

Outcome run(const std::vector<uint8_t>& in, const ProcessOptions& o, bool planar, bool threads = true) {
  return run_switched(panto::set_jpeg_planar, in, o, planar, threads);
}

/** The pipeline's run (strips, part threads on or off) against its reference (one strip, no thread: the whole decode,
 *  then each whole plane resized, then the encode): records a failure unless code and bytes are the same. Returns
 *  the reference's outcome. */
Outcome expect_strips_same(const std::string& what, const std::vector<uint8_t>& in, const ProcessOptions& o) {
  const bool prev = panto::set_jpeg_planar_strips(false);
  const Outcome whole = run(in, o, true, false);
  panto::set_jpeg_planar_strips(true);
  if (whole.code == "ERR_INTERNAL") record_failure(__FILE__, __LINE__, what + ": whole planes: ERR_INTERNAL");
  for (bool threads : {true, false}) {
    const Outcome s = run(in, o, true, threads);
    if (s.code != whole.code || s.bytes != whole.bytes || s.w != whole.w || s.h != whole.h)
      record_failure(__FILE__, __LINE__,
                     what + (threads ? " (threaded)" : " (sequential)") + ": " + s.code + ", " +
                         std::to_string(s.bytes.size()) + " bytes vs whole planes " + whole.code + ", " +
                         std::to_string(whole.bytes.size()) + " bytes");
  }
  panto::set_jpeg_planar_strips(prev);
  return whole;
}

/** PSNR (dB) of two JPEGs decoded to RGBA (99 when identical, -1 when either does not decode or sizes differ). */
double psnr(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  panto::DecodedImage x, y;
  if (!panto::decode_to_rgba(a.data(), a.size(), 1u << 30, &x).ok()) return -1;
  if (!panto::decode_to_rgba(b.data(), b.size(), 1u << 30, &y).ok()) return -1;
  if (x.width != y.width || x.height != y.height) return -1;
  double se = 0;
  const size_t n = size_t(x.width) * x.height;
  for (size_t i = 0; i < n; i++)
    for (int c = 0; c < 3; c++) {
      const double d = double(x.rgba.data[i * 4 + c]) - double(y.rgba.data[i * 4 + c]);
      se += d * d;
    }
  const double mse = se / double(n * 3);
  return mse == 0 ? 99 : 10 * std::log10(255.0 * 255.0 / mse);
}

/** Whether process() tries the planar path for `in` at max_dimension `dim` (its header math), and at which scale. */
bool planar_applies(const std::vector<uint8_t>& in, uint32_t dim, int* eighths) {
  panto::MediaInfo info;
  if (!panto::probe(in.data(), in.size(), &info).ok()) return false;
  uint32_t tw = info.width, th = info.height;
  if (tw > dim || th > dim) {
    const double s = double(dim) / double(std::max(tw, th));
    tw = std::max<uint32_t>(1, std::min<uint32_t>(dim, uint32_t(std::lround(info.width * s))));
    th = std::max<uint32_t>(1, std::min<uint32_t>(dim, uint32_t(std::lround(info.height * s))));
  }
  *eighths = panto::jpeg_scale_eighths(info.width, info.height, tw, th);
  return panto::jpeg_planar_applies(info, *eighths, tw, th);
}

std::vector<JSpec> ycc_layouts() {
  std::vector<JSpec> v;
  for (const JSpec& s : layouts())
    if (s.comps == 3) v.push_back(s);
  v.push_back({"baseline-440", 411, 523, 3, 1, 2});
  v.push_back({"baseline-411", 613, 301, 3, 4, 1});
  v.push_back({"progressive-422-restarts", 517, 389, 3, 2, 1, true, 1});
  return v;
}

}  // namespace

PANTO_TEST(jpeg, planar_matches_the_rgb_stream_within_rounding) {
  int planar = 0;
  bool scale_seen[9] = {};
  double worst = 99;
  for (const JSpec& s : ycc_layouts()) {
    const auto jpeg = make_jpeg(s);
    const uint32_t big = std::max(s.w, s.h);
    for (uint32_t dim : {big / 9, big / 5, big / 3, big / 2 - 1, big * 5 / 7, big - 3}) {
      if (dim < 16) continue;
      ProcessOptions o;
      o.max_dimension = dim;
      int e = 8;
      const bool applies = planar_applies(jpeg, dim, &e);
      const Outcome rgb = run(jpeg, o, false);
      const Outcome pl = run(jpeg, o, true);
      const std::string what = std::string(s.name) + " -> " + std::to_string(dim);
      PANTO_REQUIRE(rgb.code == "OK");
      if (pl.code != "OK" || pl.w != rgb.w || pl.h != rgb.h || pl.type != rgb.type || pl.changes != rgb.changes) {
        record_failure(__FILE__, __LINE__, what + ": " + pl.code + " or size/type/changes differ from the RGB stream");
        continue;
      }
      if (!applies) continue;
      planar++;
      scale_seen[e] = true;
      const double q = psnr(pl.bytes, rgb.bytes);
      worst = std::min(worst, q);
      if (q < 36) record_failure(__FILE__, __LINE__, what + ": PSNR " + std::to_string(q) + " dB vs the RGB stream");
    }
  }
  std::printf("  %d planar cases, worst PSNR vs the RGB stream %.1f dB\n", planar, worst);
  PANTO_CHECK(planar >= 40);
  for (int e : {1, 2, 4, 8})
    if (!scale_seen[e]) record_failure(__FILE__, __LINE__, "no planar case at scale " + std::to_string(e) + "/8");
}

PANTO_TEST(jpeg, planar_bytes_do_not_depend_on_threads) {
  for (const JSpec& s : ycc_layouts()) {
    const auto jpeg = make_jpeg(s);
    ProcessOptions o;
    o.max_dimension = std::max(s.w, s.h) * 2 / 3;
    const Outcome a = run(jpeg, o, true, true), b = run(jpeg, o, true, false);
    PANTO_CHECK(a.code == "OK");
    if (a.bytes != b.bytes) record_failure(__FILE__, __LINE__, std::string(s.name) + ": threads change the bytes");
  }
}

PANTO_TEST(jpeg, planar_falls_back_to_the_rgb_stream_for_grey_cmyk_and_ycck) {
  for (const JSpec& s : layouts()) {
    if (s.comps == 3) continue;
    const auto jpeg = make_jpeg(s);
    int e = 8;
    ProcessOptions o;
    o.max_dimension = std::max(s.w, s.h) * 2 / 3;
    PANTO_CHECK(planar_applies(jpeg, o.max_dimension, &e));  // decided from the header: tried, then refused
    const Outcome rgb = run(jpeg, o, false), pl = run(jpeg, o, true);
    PANTO_CHECK(rgb.code == "OK");
    if (pl.code != rgb.code || pl.bytes != rgb.bytes)
      record_failure(__FILE__, __LINE__, std::string(s.name) + ": planar on changed the output");
  }
}

PANTO_TEST(bombs, jpeg_planar_damaged_truncated_and_aborted_fail_like_the_rgb_stream) {
  for (const JSpec& s : ycc_layouts()) {
    const auto jpeg = make_jpeg(s);
    ProcessOptions o;
    o.max_dimension = std::max(s.w, s.h) / 2 - 1;
    // Cut short (inside a progressive file's later scans too), with and without an EOI after the cut.
    for (size_t keep : {jpeg.size() / 5, jpeg.size() / 2, jpeg.size() * 4 / 5, jpeg.size() - 3}) {
      std::vector<uint8_t> cut(jpeg.begin(), jpeg.begin() + static_cast<std::ptrdiff_t>(keep));
      for (bool eoi : {false, true}) {
        if (eoi) cut.insert(cut.end(), {0xFF, 0xD9});
        const Outcome rgb = run(cut, o, false), pl = run(cut, o, true);
        if (pl.code != rgb.code)
          record_failure(__FILE__, __LINE__, std::string(s.name) + " cut at " + std::to_string(keep) +
                                                 (eoi ? " + EOI" : "") + ": " + pl.code + " vs " + rgb.code);
      }
    }
    // Flipped bits in the entropy-coded data: an error or a picture, the same way on both paths.
    Prng r(s.w * 7u + s.h);
    for (int i = 0; i < 12; i++) {
      std::vector<uint8_t> bad = jpeg;
      const size_t at = bad.size() / 3 + r.next() % (bad.size() / 2);
      bad[at] ^= uint8_t(1u << (r.next() % 8));
      const Outcome rgb = run(bad, o, false), pl = run(bad, o, true);
      if (pl.code != rgb.code)
        record_failure(__FILE__, __LINE__,
                       std::string(s.name) + " flipped at " + std::to_string(at) + ": " + pl.code + " vs " + rgb.code);
    }
    // Aborted before any work.
    std::atomic<int> flag{1};
    ProcessOptions ab = o;
    ab.abort_flag = &flag;
    PANTO_CHECK_EQ(run(jpeg, ab, true).code, std::string("ERR_ABORTED"));
  }
  // A memory cap below the call's estimate: refused before any decoding, nothing left reserved.
  const auto big = make_jpeg({"big", 2400, 1800});
  const uint64_t prev = panto::set_memory_cap(8u << 20);
  ProcessOptions o;
  o.max_dimension = 1000;
  PANTO_CHECK_EQ(run(big, o, true).code, std::string("ERR_MEDIA_TOO_LARGE"));
  panto::set_memory_cap(prev);
  PANTO_CHECK_EQ(panto::memory_in_flight(), uint64_t(0));
}

PANTO_TEST(jpeg, planar_strips_give_the_bytes_of_whole_planes) {
  // Every sampling, progressive and restart files, odd sizes, each DCT scale and resize ratios from 1/9 to ~1, tall
  // and wide: the strips (many of them at these heights) on the helper-thread decoder and sequentially.
  std::vector<JSpec> specs = ycc_layouts();
  specs.push_back({"tall-422", 331, 2047, 3, 2, 1});
  specs.push_back({"wide-progressive-411", 2051, 397, 3, 4, 1, true});
  specs.push_back({"big-440", 1203, 1599, 3, 1, 2});
  int cases = 0;
  for (const JSpec& s : specs) {
    const auto jpeg = make_jpeg(s);
    const uint32_t big = std::max(s.w, s.h);
    for (uint32_t dim : {big / 9, big / 5, big / 3, big / 2 - 1, big * 5 / 7, big - 3}) {
      int e = 8;
      if (dim < 16 || !planar_applies(jpeg, dim, &e)) continue;
      ProcessOptions o;
      o.max_dimension = dim;
      const std::string what = std::string(s.name) + " -> " + std::to_string(dim);
      if (expect_strips_same(what, jpeg, o).code != "OK") record_failure(__FILE__, __LINE__, what + ": not OK");
      cases++;
    }
  }
  std::printf("  %d planar cases, strips vs whole planes\n", cases);
  PANTO_CHECK(cases >= 50);
}

PANTO_TEST(bombs, jpeg_planar_pipeline_damaged_and_truncated_fail_like_whole_planes) {
  // Damage the decoder meets on its helper thread, mid-scan: cut short (an EOI put back after the cut, so the walk
  // lets it through) and flipped bits; the same code (and bytes when it decodes) as the whole-plane reference.
  for (const JSpec& s : {JSpec{"baseline-420", 1201, 901}, JSpec{"progressive-422", 1003, 1301, 3, 2, 1, true},
                         JSpec{"restarts-444", 901, 777, 3, 1, 1, false, 1}}) {
    const auto jpeg = make_jpeg(s);
    ProcessOptions o;
    o.max_dimension = std::max(s.w, s.h) * 2 / 3;
    for (size_t keep : {jpeg.size() / 4, jpeg.size() / 2, jpeg.size() * 7 / 8}) {
      std::vector<uint8_t> cut(jpeg.begin(), jpeg.begin() + static_cast<std::ptrdiff_t>(keep));
      cut.insert(cut.end(), {0xFF, 0xD9});
      expect_strips_same(std::string(s.name) + " cut at " + std::to_string(keep) + " + EOI", cut, o);
    }
    Prng r(s.w * 13u + s.h);
    for (int i = 0; i < 10; i++) {
      std::vector<uint8_t> bad = jpeg;
      const size_t at = bad.size() / 4 + r.next() % (bad.size() * 3 / 4 - 2);
      bad[at] ^= uint8_t(1u << (r.next() % 8));
      expect_strips_same(std::string(s.name) + " flipped at " + std::to_string(at), bad, o);
    }
  }
}

PANTO_TEST(budget, jpeg_planar_pipeline_stops_on_abort_mid_call) {
  // The abort flag raised while the call runs (by a watcher, 0, 10 or 30 ms after the call has allocated its
  // encoder: the decoder thread is starting or running, the resize between strips) or before it: ERR_ABORTED (OK
  // only if the call finished first), the decoder thread joined, nothing left charged.
  const auto jpeg = make_jpeg(JSpec{"baseline-422", 3001, 2001, 3, 2, 1});
  panto::MediaInfo info;
  PANTO_REQUIRE(panto::probe(jpeg.data(), jpeg.size(), &info).ok());
  const uint32_t sw = 1600, sh = 1066;
  const int e = panto::jpeg_scale_eighths(info.width, info.height, sw, sh);
  int aborted = 0;
  abort_sweep([&](bool, panto::Budget& budget, std::atomic<int>& flag) {
    for (int delay_ms : {0, 10, 30}) {
      flag.store(0);
      std::atomic<bool> over{false};
      std::thread watcher([&] {
        // Past the encoder's coefficients (1600x1066 at 4:2:0: ~5 MiB): the pipeline is starting.
        while (!over.load() && budget.used.load() < (4u << 20)) std::this_thread::yield();
        for (int i = 0; i < delay_ms && !over.load(); i++) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        flag.store(1);
      });
      panto::Status st;
      {
        panto::BudgetScope scope(&budget);
        panto::OwnedBytes out;
        st = panto::jpeg_planar_encode(jpeg.data(), jpeg.size(), info, e, sw, sh, 80, &out);
      }
      over.store(true);
      watcher.join();
      if (st.code == "ERR_ABORTED") aborted++;
      else if (!st.ok()) record_failure(__FILE__, __LINE__, "abort mid-call: " + st.code + " " + st.message);
      PANTO_CHECK_EQ(budget.used.load(), uint64_t(0));
    }
    flag.store(1);
    {
      panto::BudgetScope scope(&budget);
      panto::OwnedBytes out;
      PANTO_CHECK_EQ(panto::jpeg_planar_encode(jpeg.data(), jpeg.size(), info, e, sw, sh, 80, &out).code,
                     std::string("ERR_ABORTED"));
      PANTO_CHECK(out.data == nullptr);
    }
  });
  std::printf("  %d of 6 mid-call aborts stopped the call\n", aborted);
  PANTO_CHECK(aborted >= 1);
}

PANTO_TEST(budget, jpeg_planar_pipeline_under_a_tight_budget_is_too_large_never_corrupt) {
  // Budgets from far too small to enough, threaded and sequential: every stop (the decoder's setup, the planes,
  // stbir's samplers, the encoder's coefficients or output) is ERR_MEDIA_TOO_LARGE, nothing stays charged, and the
  // budget the call uses stays under the estimate's share for it.
  const auto jpeg = make_jpeg(JSpec{"progressive", 1601, 1201, 3, 2, 2, true});
  panto::MediaInfo info;
  PANTO_REQUIRE(panto::probe(jpeg.data(), jpeg.size(), &info).ok());
  const uint32_t sw = 700, sh = 525;
  const int e = panto::jpeg_scale_eighths(info.width, info.height, sw, sh);
  for (bool threads : {true, false}) {
    const bool prev = panto::set_parts_concurrency(threads);
    budget_ladder(threads ? "planar, threaded" : "planar, sequential", [&] {
      panto::OwnedBytes out;
      return panto::jpeg_planar_encode(jpeg.data(), jpeg.size(), info, e, sw, sh, 80, &out);
    });
    // The call's whole estimate holds what it uses.
    const uint64_t estimate = panto::estimate_process_bytes(jpeg.data(), jpeg.size(), info, e, sw, sh, 1);
    panto::Budget b(estimate);
    {
      panto::BudgetScope scope(&b);
      panto::OwnedBytes out;
      PANTO_CHECK(panto::jpeg_planar_encode(jpeg.data(), jpeg.size(), info, e, sw, sh, 80, &out).ok());
    }
    PANTO_CHECK(b.peak.load() < estimate);
    panto::set_parts_concurrency(prev);
  }
}
