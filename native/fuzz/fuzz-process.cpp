// libFuzzer target over the whole native media API, with small caps so each input stays fast and bounded.
//
// Input: the whole input is the file (so a fixture seed corpus is exercised as is); its last two bytes (the last one
// alone for a 1-byte input) also form a 16-bit selector, so the fuzzer explores the options as it mutates:
//   bits 0-1   output format: Auto, Jpeg, Png, Webp
//   bits 2-3   max_dimension: 2000, 40, 12 (streaming resizes need >= 8), 5 (below the stream minimum)
//   bits 4-5   byte cap: default, 150 + 97 * q-nibble (the quality/size ladder), 1200, 40 (ladder exhausted)
//   bit 6      keep_metadata (the pass-through strip with privacy off)
//   bit 7      streaming resizes off (set_png/jpeg/gif_streaming(false): the whole-image decode + resize instead)
//   bits 8-11  q-nibble: jpeg_quality = 1 + 6.6 * nibble; also scales the ladder cap; its bit 1 (0x200) turns the
//              planar YCbCr JPEG path off (set_jpeg_planar(false): the RGB stream instead)
//   bit 12     input_discardable (the input copied into a panto_budget_malloc_input block, as the binding does)
//   bit 13     part threads off (set_parts_concurrency(false))
//   bit 14     media_type_hint "image/png" (else "image/jpeg"), so hint-corrected is reached both ways
//   bit 15     codec mode: the internal stages (decode_image at every JPEG scale / PNG shrink, resize_pixels,
//              orient_pixels, every encoder, strip_metadata both ways) under a per-call Budget whose limit comes
//              from the q-nibble (allocation failure paths), and once more with the abort flag already raised
//
// Invariants (each broken one is a crash, i.e. a finding):
//   - no call returns ERR_INTERNAL; every error code is one of the stable codes (or kBusyCode) with a message;
//   - process() OK: the output is at most max_encoded_bytes (a PDF passes through whatever its size); a re-encoded
//     output is non-empty, probes as the reported type with the reported width x height;
//   - nothing stays reserved after a call (memory_in_flight() == 0) and nothing stays charged to a per-call Budget;
//   - decode_to_rgba OK: width x height x 4 bytes, the probed size;
//   - plus everything ASan + UBSan check (PANTO_FUZZ=ON builds with both), libFuzzer's -rss_limit_mb (a budget bug)
//     and -timeout (a scan-cost bug).
//
// Build: CC=clang CXX=clang++ cmake -S . -B /tmp/fuzz -DPANTO_FUZZ=ON && cmake --build /tmp/fuzz --target fuzz_process
// Run:   scripts/fuzz-native.sh [seconds-per-target] (per-format corpora and dictionaries, native/fuzz/dict/)
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "budget.h"
#include "decoded-resize-stream.h"
#include "internal.h"
#include "jpeg-planar.h"
#include "jpeg-resize-stream.h"
#include "media-core.h"
#include "parallel.h"
#include "png-resize-stream.h"

namespace {

[[noreturn]] void broken(const char* what, const panto::Status& s = {}) {
  std::fprintf(stderr, "fuzz_process invariant broken: %s (code '%s': %s)\n", what, s.code.c_str(),
               s.message.c_str());
  std::abort();
}

void check_status(const panto::Status& s, const char* where) {
  if (s.ok()) return;
  static const char* const kCodes[] = {"ERR_UNSUPPORTED_MEDIA", "ERR_CORRUPT_MEDIA", "ERR_MEDIA_TOO_LARGE",
                                       "ERR_INVALID_ARGUMENT", "ERR_ABORTED", panto::kBusyCode};
  for (const char* c : kCodes)
    if (s.code == c) {
      if (s.message.empty()) broken(where, s);
      return;
    }
  broken(where, s);
}

void check_in_flight(const char* where) {
  if (panto::memory_in_flight() != 0) broken(where);
}

/** The internal stages one by one under `budget` (already in scope). Only statuses and the budget are checked: a
 *  stage may fail anywhere for lack of budget or for an abort. */
void run_stages(const uint8_t* img, size_t len, const panto::MediaInfo& info, uint16_t sel) {
  const int nibble = (sel >> 8) & 15;
  panto::Pixels px;
  // JPEG: 1..8 eighths; PNG: shrink 1..4 (the box-averaging decode); others ignore both.
  const int eighths = 1 + (nibble & 7);
  const uint32_t shrink = 1 + (nibble & 3);
  panto::Status s = panto::decode_image(img, len, info, &px, eighths, shrink);
  check_status(s, "decode_image");
  if (!s.ok()) return;
  if (px.width == 0 || px.height == 0 || (px.channels != 3 && px.channels != 4) ||
      px.data.size < size_t(px.width) * px.height * px.channels)
    broken("decode_image returned an inconsistent image");
  (void)panto::has_transparency(px);
  panto::Pixels small;
  s = panto::resize_pixels(px, 1 + px.width / 3, 1 + px.height / 2, &small);
  check_status(s, "resize_pixels");
  if (s.ok() && px.width >= 8 && panto::gif_stream_resizes(px.width, px.height, small.width, small.height)) {
    panto::Pixels copy, streamed;
    copy.width = px.width, copy.height = px.height, copy.channels = px.channels;
    if (panto::alloc_owned(px.data.size, &copy.data)) {
      std::memcpy(copy.data.data, px.data.data, px.data.size);
      check_status(panto::decoded_resize_stream(&copy, (nibble & 1) != 0, small.width, small.height, info.type,
                                                &streamed),
                   "decoded_resize_stream");
    }
  }
  panto::Pixels upright;
  check_status(panto::orient_pixels(px, 1 + (nibble & 7), &upright), "orient_pixels");
  panto::OwnedBytes out;
  check_status(panto::encode_png(px.view(), &out), "encode_png");
  out.reset();
  check_status(panto::encode_webp(px.view(), (nibble & 1) != 0, 1 + nibble * 6, &out, (nibble & 2) != 0),
               "encode_webp");
  out.reset();
  if (px.channels == 4) panto::flatten_on_white(&px);
  check_status(panto::encode_jpeg(px.view(), 1 + nibble * 6, &out), "encode_jpeg");
  out.reset();
  for (bool privacy : {true, false}) {
    panto::Status err;
    panto::OwnedBytes stripped;
    if (!panto::strip_metadata(info.type, img, len, &stripped, &err, privacy)) check_status(err, "strip_metadata");
  }
}

void codec_mode(const uint8_t* img, size_t len, uint16_t sel) {
  panto::MediaInfo info;
  if (!panto::probe(img, len, &info).ok() || info.type == panto::MediaType::Pdf) return;
  if (uint64_t(info.width) * info.height > (1u << 20)) return;  // stages are uncapped by design (process caps)
  // decode_image's callers check the structure first (process, decode_to_rgba): the stages run only on inputs that
  // pass decode_to_rgba.
  {
    panto::DecodedImage whole;
    if (!panto::decode_to_rgba(img, len, 1u << 20, &whole).ok()) return;
  }
  const int nibble = (sel >> 8) & 15;
  for (int pass = 0; pass < 2; pass++) {
    std::atomic<int> flag{pass};
    // 16 limits from 4 KiB to 48 MiB: the small ones fail inside the decoders and encoders.
    const uint64_t limit = nibble == 15 ? (48ull << 20) : (4096ull << nibble);
    panto::Budget budget(limit, &flag);
    {
      panto::BudgetScope scope(&budget);
      run_stages(img, len, info, sel);
    }
    if (budget.used.load() != 0) broken("a stage left bytes charged to its budget");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint16_t sel = size >= 2 ? uint16_t(data[size - 1] | (data[size - 2] << 8)) : data[0];
  const int nibble = (sel >> 8) & 15;

  (void)panto::mime_of(panto::sniff(data, size));
  panto::MediaInfo info;
  const panto::Status ps = panto::probe(data, size, &info);
  check_status(ps, "probe");
  (void)panto::is_supported(info.type);

  if (sel & 0x8000) {
    codec_mode(data, size, sel);
    check_in_flight("codec mode");
    return 0;
  }

  panto::ProcessOptions o;
  o.max_pixels = 4u << 20;  // 4 MP keeps every iteration fast; the header check is exercised at this cap
  o.max_input_bytes = 1u << 20;
  o.max_pdf_bytes = (nibble & 1) ? 512 : (1u << 20);
  static const panto::OutputFormat kFormats[] = {panto::OutputFormat::Auto, panto::OutputFormat::Jpeg,
                                                 panto::OutputFormat::Png, panto::OutputFormat::Webp};
  o.format = kFormats[sel & 3];
  static const uint32_t kDims[] = {2000, 40, 12, 5};
  o.max_dimension = kDims[(sel >> 2) & 3];
  switch ((sel >> 4) & 3) {
    case 1: o.max_encoded_bytes = 150 + 97 * uint64_t(nibble); break;
    case 2: o.max_encoded_bytes = 1200; break;
    case 3: o.max_encoded_bytes = 40; break;
    default: break;
  }
  o.keep_metadata = (sel & 0x40) != 0;
  o.jpeg_quality = 1 + (nibble * 66) / 10;
  o.media_type_hint = (sel & 0x4000) ? "image/png" : "image/jpeg";
  const bool streaming = (sel & 0x80) == 0;
  panto::set_png_streaming(streaming);
  panto::set_jpeg_streaming(streaming);
  panto::set_jpeg_planar((nibble & 2) == 0);
  panto::set_gif_streaming(streaming);
  panto::set_parts_concurrency((sel & 0x2000) == 0);

  // The binding hands process() a private copy it owns (budget input memory) and marks it discardable.
  const uint8_t* img = data;
  uint8_t* owned = nullptr;
  if (sel & 0x1000) {
    owned = static_cast<uint8_t*>(panto_budget_malloc_input(size));
    if (!owned) broken("panto_budget_malloc_input failed");
    std::memcpy(owned, data, size);
    img = owned;
    o.input_discardable = true;
  }

  {
    panto::ProcessResult r;
    const panto::Status st = panto::process(img, size, o, &r);
    check_status(st, "process");
    check_in_flight("process");
    if (st.ok()) {
      const size_t out_size = r.unchanged ? size : r.data.size;
      if (out_size > o.max_encoded_bytes && r.type != panto::MediaType::Pdf) broken("output over the byte cap");
      if (!r.unchanged) {
        if (r.data.data == nullptr || r.data.size == 0) broken("empty re-encoded output");
        panto::MediaInfo oi;
        const panto::Status os = panto::probe(r.data.data, r.data.size, &oi);
        if (!os.ok()) broken("the output does not probe", os);
        if (oi.type != r.type || oi.width != r.width || oi.height != r.height)
          broken("the output's header disagrees with the result");
      }
    }
  }
  if (owned) panto_budget_free(owned);  // (its pages may read as zeros now: not read again)

  panto::DecodedImage d;
  const panto::Status ds = panto::decode_to_rgba(data, size, o.max_pixels, &d);
  check_status(ds, "decode_to_rgba");
  check_in_flight("decode_to_rgba");
  if (ds.ok()) {
    if (d.rgba.size != static_cast<size_t>(d.width) * d.height * 4) broken("decode_to_rgba size");
    if (!ps.ok() || d.width != info.width || d.height != info.height) broken("decode_to_rgba disagrees with probe");
  }
  return 0;
}
