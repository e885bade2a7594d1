// The planar YCbCr JPEG -> JPEG path (jpeg-planar.h) against the RGB stream it replaces for YCbCr files, through
// process(): the same size, type and changes, pixels within a JPEG's rounding of each other, on every sampling
// (4:2:0, 4:2:2, 4:4:4, 4:4:0, 4:1:1), progressive and restart-marker files, odd sizes and each DCT scale; the same
// bytes with the row parts on threads or not; grey, CMYK and YCCK files fall back to the RGB stream (identical
// bytes); damaged, truncated (progressive scans cut short) and aborted files give the RGB path's error codes; a
// memory cap below the estimate refuses the call up front.
#include <atomic>
#include <cmath>
#include <string>
#include <vector>

#include "budget.h"
#include "internal.h"
#include "jpeg-decode.h"
#include "jpeg-maker.h"
#include "jpeg-planar.h"
#include "process-switch-run.h"
#include "test-util.h"

using panto::ProcessOptions;
using namespace panto_test;

namespace {

Outcome run(const std::vector<uint8_t>& in, const ProcessOptions& o, bool planar, bool threads = true) {
  return run_switched(panto::set_jpeg_planar, in, o, planar, threads);
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
