// The streaming PNG path (png-resize-stream.h: decode -> resize row by row, filtered straight into the PNG encoder)
// against the whole-image path it replaces (decode_png -> drop_alpha -> resize_pixels -> encode_png), through
// process(): byte-identical outputs for every layout png-decode.cpp streams (RGB, RGBA opaque / transparent at the
// top / only at the bottom, grey, grey+alpha, palette with and without tRNS, 1/2/4/8/16-bit, odd sizes, several IDAT
// chunks), with the decoder on a helper thread and sequentially, through the byte-cap ladder and forced formats; the
// same error codes for truncated and overrunning zlib streams; abort mid-stream; and the cost estimate that no longer
// counts a decoded image.
#include <libdeflate.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "abort-sweep.h"
#include "budget.h"
#include "cost.h"
#include "internal.h"
#include "parallel.h"
#include "process-switch-run.h"
#include "png-decode.h"
#include "png-encode.h"
#include "png-resize-stream.h"
#include "test-util.h"

using panto::ProcessOptions;
using namespace panto_test;

namespace {

struct Lcg {
  uint32_t s;
  uint32_t next() {
    s = s * 1103515245u + 12345u;
    return s >> 8;
  }
};

/** A PNG image description: colour type, depth, and how to fill it. */
struct Spec {
  const char* name;
  uint32_t w, h;
  unsigned ct, depth;
  // Alpha: 0 = opaque everywhere, 1 = a transparent row at the top, 2 = only the last row transparent.
  int alpha = 0;
  bool trns = false;      // palette: with a tRNS chunk (entries all 255 unless `alpha` says otherwise)
  size_t idat_split = 0;  // > 0: IDAT chunks of at most this many bytes
};

unsigned samples_of(unsigned ct) { return ct == 0 ? 1 : ct == 2 ? 3 : ct == 3 ? 1 : ct == 4 ? 2 : 4; }

/** The raw (unfiltered) rows of `s` in the file's layout: smooth gradients with noise, so filters and resize matter. */
std::vector<uint8_t> raw_rows(const Spec& s, size_t* rowbytes) {
  const unsigned n = samples_of(s.ct);
  *rowbytes = (size_t(s.w) * n * s.depth + 7) / 8;
  std::vector<uint8_t> raw(*rowbytes * s.h, 0);
  Lcg r{s.w * 7919u + s.h};
  const unsigned maxv = (1u << s.depth) - 1;
  for (uint32_t y = 0; y < s.h; y++) {
    uint8_t* row = raw.data() + *rowbytes * y;
    for (uint32_t x = 0; x < s.w; x++) {
      for (unsigned c = 0; c < n; c++) {
        const bool is_alpha = (s.ct == 4 && c == 1) || (s.ct == 6 && c == 3);
        unsigned v;
        if (s.ct == 3) {
          // With `alpha`, the last entry (transparent in tRNS) only in the chosen row.
          const bool clear = (s.alpha == 1 && y == 0) || (s.alpha == 2 && y == s.h - 1);
          v = ((x / 3 + y / 5) + (r.next() & 3)) % (s.alpha ? maxv : maxv + 1);
          if (clear && x % 7 == 0) v = maxv;
        } else if (is_alpha) {
          const bool clear = (s.alpha == 1 && y == 0) || (s.alpha == 2 && y == s.h - 1);
          v = clear ? (x * 5) % (maxv + 1) : maxv;
        } else {
          const unsigned base = ((x * (c + 1) * 3 + y * 2) % 256) * maxv / 255;
          v = std::min(maxv, base + (r.next() % 7));
        }
        if (s.depth == 16) {
          row[(size_t(x) * n + c) * 2] = uint8_t(v >> 8);
          row[(size_t(x) * n + c) * 2 + 1] = uint8_t(v);
        } else if (s.depth == 8) {
          row[size_t(x) * n + c] = uint8_t(v);
        } else {
          const size_t bit = size_t(x) * s.depth;
          row[bit >> 3] |= uint8_t(v << (8 - s.depth - (bit & 7)));
        }
      }
    }
  }
  return raw;
}

/** Encodes `s` as a PNG: per-row filters cycling None/Sub/Up/Average/Paeth (a real encoder's variety). */
std::vector<uint8_t> make_png(const Spec& s) {
  size_t rb = 0;
  const std::vector<uint8_t> raw = raw_rows(s, &rb);
  const size_t bpp = std::max<size_t>(1, samples_of(s.ct) * s.depth / 8);
  std::vector<uint8_t> filtered;
  filtered.reserve((rb + 1) * s.h);
  for (uint32_t y = 0; y < s.h; y++) {
    const uint8_t* cur = raw.data() + rb * y;
    const uint8_t* up = y ? cur - rb : nullptr;
    const uint8_t f = uint8_t(y % 5);
    filtered.push_back(f);
    for (size_t i = 0; i < rb; i++) {
      const int a = i >= bpp ? cur[i - bpp] : 0, b = up ? up[i] : 0, c = (up && i >= bpp) ? up[i - bpp] : 0;
      int pred = 0;
      if (f == 1) pred = a;
      if (f == 2) pred = b;
      if (f == 3) pred = (a + b) / 2;
      if (f == 4) {
        const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
        pred = (pa <= pb && pa <= pc) ? a : pb <= pc ? b : c;
      }
      filtered.push_back(uint8_t(cur[i] - pred));
    }
  }
  libdeflate_compressor* c = libdeflate_alloc_compressor(6);
  std::vector<uint8_t> z(libdeflate_zlib_compress_bound(c, filtered.size()));
  z.resize(libdeflate_zlib_compress(c, filtered.data(), filtered.size(), z.data(), z.size()));
  libdeflate_free_compressor(c);

  std::vector<uint8_t> out = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  std::vector<uint8_t> ihdr;
  put_be32(ihdr, s.w);
  put_be32(ihdr, s.h);
  ihdr.insert(ihdr.end(), {uint8_t(s.depth), uint8_t(s.ct), 0, 0, 0});
  png_chunk(out, "IHDR", ihdr);
  if (s.ct == 3) {
    std::vector<uint8_t> plte;
    const unsigned entries = 1u << s.depth;
    for (unsigned k = 0; k < entries; k++)
      plte.insert(plte.end(), {uint8_t(k * 37), uint8_t(255 - k * 11), uint8_t(k * 5)});
    png_chunk(out, "PLTE", plte);
    if (s.trns) {
      // Every entry opaque, except (alpha == 1 or 2) the last one, used only where raw_rows puts it.
      std::vector<uint8_t> t(entries, 255);
      if (s.alpha) t[entries - 1] = 0;
      png_chunk(out, "tRNS", t);
    }
  }
  const size_t step = s.idat_split ? s.idat_split : z.size();
  for (size_t o = 0; o < z.size(); o += step)
    png_chunk(out, "IDAT", std::vector<uint8_t>(z.begin() + long(o), z.begin() + long(std::min(z.size(), o + step))));
  png_chunk(out, "IEND", {});
  return out;
}

Outcome run(const std::vector<uint8_t>& in, const ProcessOptions& o, bool streaming, bool threads = true) {
  return run_switched(panto::set_png_streaming, in, o, streaming, threads);
}

/** Whether process() takes the streaming path for `in` under `o` (same header math as process.cpp). */
bool streams(const std::vector<uint8_t>& in, const ProcessOptions& o) {
  panto::MediaInfo info;
  if (!panto::probe(in.data(), in.size(), &info).ok()) return false;
  uint32_t tw = info.width, th = info.height;
  if (tw > o.max_dimension || th > o.max_dimension) {
    const double s = double(o.max_dimension) / double(std::max(tw, th));
    tw = std::max<uint32_t>(1, std::min<uint32_t>(o.max_dimension, uint32_t(std::lround(info.width * s))));
    th = std::max<uint32_t>(1, std::min<uint32_t>(o.max_dimension, uint32_t(std::lround(info.height * s))));
  }
  const uint32_t k = panto::png_shrink_factor(info.width, info.height, tw, th);
  return panto::png_stream_resizes(in.data(), in.size(), info, k, tw, th);
}

void expect_same(const std::string& what, const std::vector<uint8_t>& in, const ProcessOptions& o) {
  expect_streamed_same(panto::set_png_streaming, what, in, o);
}

std::vector<Spec> layouts() {
  return {
      {"rgb8", 301, 203, 2, 8},
      {"rgb8-split-idat", 257, 190, 2, 8, 0, false, 997},
      {"rgba8-opaque", 300, 211, 6, 8},
      {"rgba8-transparent-top", 299, 180, 6, 8, 1},
      {"rgba8-transparent-bottom", 310, 177, 6, 8, 2},
      {"rgb16", 233, 301, 2, 16},
      {"rgba16-transparent-bottom", 241, 205, 6, 16, 2},
      {"grey8", 277, 199, 0, 8},
      {"grey16", 205, 260, 0, 16},
      {"grey-alpha8-opaque", 263, 201, 4, 8},
      {"grey-alpha8-transparent-top", 263, 201, 4, 8, 1},
      {"palette8", 320, 213, 3, 8},
      {"palette4", 321, 203, 3, 4},
      {"palette2", 203, 321, 3, 2},
      {"palette1", 333, 207, 3, 1},
      {"palette8-trns-opaque", 300, 200, 3, 8, 0, true},
      {"palette4-trns", 301, 201, 3, 4, 0, true},
      {"palette8-trns-bottom", 300, 200, 3, 8, 2, true},
      {"palette4-trns-top", 301, 201, 3, 4, 1, true},
      {"palette2-trns-bottom", 255, 255, 3, 2, 2, true},
      {"rgb8-tall", 40, 977, 2, 8},
      {"rgb8-one-row", 999, 1, 2, 8},
  };
}

/** Offset of the first IDAT chunk of `png` (its length field) and its payload length; offset 0 when there is none. */
std::pair<size_t, uint32_t> first_idat(const std::vector<uint8_t>& png) {
  for (size_t i = 8; i + 8 < png.size();) {
    const uint32_t n = (uint32_t(png[i]) << 24) | (png[i + 1] << 16) | (png[i + 2] << 8) | png[i + 3];
    if (!std::memcmp(&png[i + 4], "IDAT", 4)) return {i, n};
    i += 12 + n;
  }
  return {0, 0};
}

}  // namespace

PANTO_TEST(png, streaming_resize_gives_the_same_bytes_as_the_whole_image_path) {
  ProcessOptions o;
  o.max_dimension = 200;  // every layout above resizes by 0.5 .. 1 (no shrink-on-load): the fused PNG path
  int streamed = 0;
  for (const Spec& s : layouts()) {
    const auto png = make_png(s);
    if (streams(png, o)) streamed++;
    else if (s.h > 1) record_failure(__FILE__, __LINE__, std::string(s.name) + ": not on the streaming path");
    expect_same(s.name, png, o);
  }
  PANTO_CHECK(streamed >= int(layouts().size()) - 1);
}

PANTO_TEST(png, encoder_filter_row_matches_the_scalar_reference) {
  // png_filter_row (SSE2 on x86-64) against png_filter_row_scalar: random rows and rows of extreme values (0/255,
  // where Paeth's ties and the signed residuals' 128 matter), every pixel size the encoder uses and more, first rows
  // (zeros above) and widths around the 16-byte vector steps.
  Lcg r{424242};
  int compared = 0;
  for (int bpp : {1, 2, 3, 4, 6, 8}) {
    for (size_t w : {1, 5, 6, 7, 16, 17, 21, 33, 100, 667}) {
      const size_t n = w * size_t(bpp);
      for (int rep = 0; rep < 24; rep++) {
        std::vector<uint8_t> row(n), prev(n), a(n + 1), b(n + 1);
        for (size_t i = 0; i < n; i++) {
          const uint32_t x = r.next();
          row[i] = (rep & 1) && (x & 3) ? ((x & 4) ? 255 : 0) : uint8_t(x >> 3);
          const uint32_t y = r.next();
          prev[i] = rep % 6 == 5 ? 0 : (rep & 2) && (y & 3) ? ((y & 4) ? 255 : 0) : uint8_t(y >> 5);
        }
        if (rep % 4 == 3)  // smooth rows, where the filters compete
          for (size_t i = 0; i < n; i++) row[i] = uint8_t(prev[i] + (r.next() % 5));
        panto::png_filter_row(row.data(), prev.data(), n, bpp, a.data());
        panto::png_filter_row_scalar(row.data(), prev.data(), n, bpp, b.data());
        if (a != b)
          record_failure(__FILE__, __LINE__, "bpp " + std::to_string(bpp) + " width " + std::to_string(w) +
                                                 " rep " + std::to_string(rep) + ": filter " + std::to_string(a[0]) +
                                                 " vs " + std::to_string(b[0]));
        compared++;
      }
    }
  }
  PANTO_CHECK(compared == 6 * 10 * 24);
}

PANTO_TEST(png, streaming_resize_gives_the_same_bytes_for_narrow_targets) {
  // stbir's in-place float -> byte conversion with an output callback is wrong for 9- and 17..19-byte rows
  // (kStreamMinWidth): every target width from 1 to 24 pixels, RGB and RGBA, stays identical.
  ProcessOptions o;
  o.max_dimension = 200;
  for (uint32_t w = 2; w <= 40; w += 1) {
    for (unsigned ct : {2u, 6u}) {
      const Spec s{"narrow", w, 300, ct, 8};
      const auto png = make_png(s);
      expect_same("narrow " + std::to_string(w) + (ct == 6 ? " rgba" : " rgb"), png, o);
    }
  }
}

PANTO_TEST(png, streaming_resize_with_shrink_on_load_and_other_outputs_gives_the_same_bytes) {
  // Shrink-on-load (box by 3, then resize), JPEG/WebP outputs (resized pixels, not the fused encoder) and a PNG with
  // a forced small max dimension.
  for (const Spec& s : {Spec{"rgb8-shrink", 613, 411, 2, 8}, Spec{"rgba8-shrink-top", 617, 409, 6, 8, 1},
                        Spec{"palette8-shrink", 640, 431, 3, 8}, Spec{"grey16-shrink", 700, 333, 0, 16}}) {
    const auto png = make_png(s);
    ProcessOptions o;
    o.max_dimension = 200;
    PANTO_CHECK(streams(png, o));
    expect_same(std::string(s.name) + " auto", png, o);
    o.format = panto::OutputFormat::Jpeg;
    expect_same(std::string(s.name) + " jpeg", png, o);
    o.format = panto::OutputFormat::Webp;
    expect_same(std::string(s.name) + " webp", png, o);
  }
}

PANTO_TEST(png, streaming_resize_over_the_byte_cap_recovers_the_pixels_for_the_ladder) {
  // Noisy RGB: the fused PNG is over the cap, so the resized pixels are unfiltered back for the JPEG ladder; with PNG
  // forced the ladder steps the size down from them; RGBA with transparency goes to lossy WebP.
  const auto rgb = make_png(Spec{"rgb8-noisy", 640, 480, 2, 8});
  const auto rgba = make_png(Spec{"rgba8-noisy", 640, 480, 6, 8, 1});
  for (const auto* in : {&rgb, &rgba}) {
    ProcessOptions o;
    o.max_dimension = 500;
    o.max_encoded_bytes = uint64_t(in->size()) * 2;  // the input is under half the cap: no prediction, fused path
    PANTO_CHECK(streams(*in, o));
    o.max_encoded_bytes = 60000;
    expect_same("ladder auto", *in, o);
    const Outcome s = run(*in, o, true);
    PANTO_CHECK(s.code == "OK");
    PANTO_CHECK(s.bytes.size() <= o.max_encoded_bytes);
    o.format = panto::OutputFormat::Png;
    expect_same("ladder png", *in, o);
  }
}

PANTO_TEST(png, streaming_resize_reports_damaged_streams_like_the_whole_image_path) {
  const auto good = make_png(Spec{"rgb8", 401, 300, 2, 8});
  ProcessOptions o;
  o.max_dimension = 300;
  PANTO_REQUIRE(streams(good, o));
  // The IDAT payload: cut it short (and fix the chunk length and CRC so only the zlib stream is damaged).
  const size_t idat = first_idat(good).first;
  const uint32_t n = first_idat(good).second;
  PANTO_REQUIRE(idat > 0);
  auto with_idat = [&](const std::vector<uint8_t>& payload) {
    std::vector<uint8_t> out(good.begin(), good.begin() + long(idat));
    png_chunk(out, "IDAT", payload);
    png_chunk(out, "IEND", {});
    return out;
  };
  const std::vector<uint8_t> z(good.begin() + long(idat) + 8, good.begin() + long(idat) + 8 + n);
  for (size_t cut : {size_t(2), z.size() / 3, z.size() / 2, z.size() - 5}) {
    const auto truncated = with_idat(std::vector<uint8_t>(z.begin(), z.begin() + long(cut)));
    expect_same("truncated IDAT at " + std::to_string(cut), truncated, o);
    PANTO_CHECK(run(truncated, o, true).code == "ERR_CORRUPT_MEDIA");
  }
  // A wrong Adler-32 trailer (the decoder checks it itself, with libdeflate's), whole and split over tiny IDAT chunks
  // so that the trailer straddles chunk boundaries; the same stream intact in tiny chunks decodes.
  {
    std::vector<uint8_t> bad_adler = z;
    bad_adler.back() ^= 0x01;
    const auto whole = with_idat(bad_adler);
    expect_same("wrong Adler-32", whole, o);
    PANTO_CHECK(run(whole, o, true).code == "ERR_CORRUPT_MEDIA");
    for (size_t step : {size_t(1), size_t(2), size_t(3)}) {
      auto split = [&](const std::vector<uint8_t>& payload) {
        std::vector<uint8_t> out(good.begin(), good.begin() + long(idat));
        for (size_t o2 = 0; o2 < payload.size(); o2 += step)
          png_chunk(out, "IDAT",
                    std::vector<uint8_t>(payload.begin() + long(o2),
                                         payload.begin() + long(std::min(payload.size(), o2 + step))));
        png_chunk(out, "IEND", {});
        return out;
      };
      // Only the tail in tiny chunks (the rest whole) keeps the chunk count small.
      const size_t head = z.size() - 9;
      auto tail_split = [&](const std::vector<uint8_t>& payload) {
        std::vector<uint8_t> out(good.begin(), good.begin() + long(idat));
        png_chunk(out, "IDAT", std::vector<uint8_t>(payload.begin(), payload.begin() + long(head)));
        const auto rest = split(std::vector<uint8_t>(payload.begin() + long(head), payload.end()));
        out.insert(out.end(), rest.begin() + long(idat), rest.end());
        return out;
      };
      const auto ok_split = tail_split(z);
      expect_same("tail in " + std::to_string(step) + "-byte IDATs", ok_split, o);
      PANTO_CHECK(run(ok_split, o, true).code == "OK");
      const auto bad_split = tail_split(bad_adler);
      expect_same("wrong Adler-32 in " + std::to_string(step) + "-byte IDATs", bad_split, o);
      PANTO_CHECK(run(bad_split, o, true).code == "ERR_CORRUPT_MEDIA");
    }
  }
  // A zlib stream with one more row than the image: it overruns.
  {
    Spec taller{"rgb8", 401, 301, 2, 8};
    const auto t = make_png(taller);
    const size_t ti = first_idat(t).first;
    const uint32_t m = first_idat(t).second;
    PANTO_REQUIRE(ti > 0);
    const auto overrun = with_idat(std::vector<uint8_t>(t.begin() + long(ti) + 8, t.begin() + long(ti) + 8 + m));
    expect_same("overrunning zlib stream", overrun, o);
    PANTO_CHECK(run(overrun, o, true).code == "ERR_CORRUPT_MEDIA");
  }
  // A bad filter type in the middle.
  {
    std::vector<uint8_t> raw;
    // Rebuild: every row filter 0 except one with type 9.
    Spec s{"rgb8", 401, 300, 2, 8};
    size_t rb = 0;
    const auto rows = raw_rows(s, &rb);
    for (uint32_t y = 0; y < s.h; y++) {
      raw.push_back(y == 150 ? 9 : 0);
      raw.insert(raw.end(), rows.begin() + long(rb * y), rows.begin() + long(rb * (y + 1)));
    }
    libdeflate_compressor* c = libdeflate_alloc_compressor(1);
    std::vector<uint8_t> zz(libdeflate_zlib_compress_bound(c, raw.size()));
    zz.resize(libdeflate_zlib_compress(c, raw.data(), raw.size(), zz.data(), zz.size()));
    libdeflate_free_compressor(c);
    const auto bad = with_idat(zz);
    expect_same("bad filter type", bad, o);
    PANTO_CHECK(run(bad, o, true).code == "ERR_CORRUPT_MEDIA");
  }
}

PANTO_TEST(png, streaming_resize_stops_on_abort_mid_stream) {
  // The sink raises the abort flag at the 10th resized row; the decoder (at most a ring ahead) sees it within 16 rows
  // and the resize stops at its next row: ERR_ABORTED, on the helper thread and sequentially.
  const auto png = make_png(Spec{"rgb8", 1200, 900, 2, 8});
  panto::MediaInfo info;
  PANTO_REQUIRE(panto::probe(png.data(), png.size(), &info).ok());
  // abort_sweep checks that everything is freed (the helper thread joined) after each setting.
  abort_sweep([&](bool, panto::Budget& budget, std::atomic<int>& flag) {
    uint32_t rows_seen = 0;
    {
      panto::BudgetScope scope(&budget);
      bool transparent = false;
      const panto::Status s = panto::png_resize_stream(
          png.data(), png.size(), info, 1, 800, 600, false, [](int) { return panto::Status::Ok(); },
          [&](const uint8_t*, uint32_t y) {
            rows_seen = y + 1;
            if (y == 10) flag.store(1);
          },
          &transparent);
      PANTO_CHECK_EQ(s.code, std::string("ERR_ABORTED"));
      PANTO_CHECK(!transparent);
    }
    PANTO_CHECK(rows_seen < 600);
  });
}

PANTO_TEST(png, streaming_resize_estimate_holds_no_decoded_image) {
  // A 2880x1800 RGB screenshot-like PNG going to 2000 px: the estimate no longer counts the decoded (or filtered)
  // image, and the budget the call really uses stays below the estimate.
  Spec s{"screenshot", 2880, 1800, 2, 8};
  const auto png = make_png(s);
  panto::MediaInfo info;
  PANTO_REQUIRE(panto::probe(png.data(), png.size(), &info).ok());
  const uint64_t decoded = uint64_t(2880) * 1800 * 3;
  const bool prev = panto::set_png_streaming(false);
  const uint64_t whole = panto::estimate_process_bytes(png.data(), png.size(), info, 8, 2000, 1250, 1);
  panto::set_png_streaming(true);
  const uint64_t streamed = panto::estimate_process_bytes(png.data(), png.size(), info, 8, 2000, 1250, 1);
  panto::set_png_streaming(prev);
  std::printf("  estimate 2880x1800 -> 2000x1250: whole-image %llu MiB, streaming %llu MiB (decoded image %llu MiB)\n",
              (unsigned long long)(whole >> 20), (unsigned long long)(streamed >> 20),
              (unsigned long long)(decoded >> 20));
  PANTO_CHECK(whole - streamed >= decoded);  // the decoded (and filtered) image is gone from the estimate

  // Measured: the budget of the streaming pipeline (decoder, ring, stbir, the encoder's chunk of filtered rows and
  // its output buffer, compressing as the rows come) on the helper thread and sequentially: apart from the output
  // buffer (charged at libdeflate's worst case, of which only what is written becomes resident), it holds under 1/8
  // of the decoded image, and the whole stays under the estimate.
  const uint64_t filtered = uint64_t(2000 * 3 + 1) * 1250;
  const uint64_t chunks = (filtered + panto::kPngDeflateChunk - 1) / panto::kPngDeflateChunk;
  const uint64_t out_bound = chunks * libdeflate_deflate_compress_bound(nullptr, panto::kPngDeflateChunk) + 64;
  for (bool threads : {true, false}) {
    const bool prev_t = panto::set_parts_concurrency(threads);
    panto::Budget budget(streamed);
    uint64_t peak_streaming = 0;
    {
      panto::BudgetScope scope(&budget);
      panto::PngRowEncoder enc;
      bool transparent = false;
      const panto::Status st = panto::png_resize_stream(
          png.data(), png.size(), info, 1, 2000, 1250, true, [&](int ch) { return enc.begin(2000, 1250, ch); },
          [&](const uint8_t* row, uint32_t) { enc.put_row(row); }, &transparent);
      PANTO_CHECK(st.ok());
      PANTO_CHECK(!transparent);
      peak_streaming = budget.peak.load();
      panto::OwnedBytes out;
      PANTO_CHECK(enc.finish(&out).ok());
    }
    panto::set_parts_concurrency(prev_t);
    std::printf("  budget peak (%s): streaming + compression %llu KiB (of which the output bound %llu KiB; the "
                "filtered image would be %llu KiB), with finish %llu KiB\n",
                threads ? "threaded" : "sequential", (unsigned long long)(peak_streaming >> 10),
                (unsigned long long)(out_bound >> 10), (unsigned long long)(filtered >> 10),
                (unsigned long long)(budget.peak.load() >> 10));
    PANTO_CHECK(peak_streaming > out_bound);
    PANTO_CHECK(peak_streaming - out_bound < decoded / 8);
    PANTO_CHECK(budget.peak.load() < streamed);
    PANTO_CHECK_EQ(budget.used.load(), uint64_t(0));
  }
}

namespace {

/** Noise over gradients, `w` x `h` x `c`: several libdeflate chunks once filtered, for most sizes below. */
panto::Pixels noisy(uint32_t w, uint32_t h, int c) {
  panto::Pixels px;
  px.width = w, px.height = h, px.channels = c;
  if (!panto::alloc_owned(size_t(w) * h * c, &px.data)) record_failure(__FILE__, __LINE__, "alloc_owned");
  uint32_t s = 0x1234567u + w * 31 + h;
  for (size_t i = 0; i < size_t(w) * h * c; i++) {
    s ^= s << 13, s ^= s >> 17, s ^= s << 5;
    px.data.data[i] = uint8_t((i / c) % w / 4 + (s >> 28));
  }
  return px;
}

/** The PNG of `px` through PngRowEncoder (row by row), or the error of begin()/finish(). */
panto::Status row_encode(const panto::Pixels& px, panto::OwnedBytes* out, uint32_t abort_at_row = UINT32_MAX,
                         std::atomic<int>* flag = nullptr) {
  panto::PngRowEncoder enc;
  panto::Status s = enc.begin(px.width, px.height, px.channels);
  if (!s.ok()) return s;
  const size_t n = size_t(px.width) * px.channels;
  for (uint32_t y = 0; y < px.height; y++) {
    if (y == abort_at_row && flag) flag->store(1);
    enc.put_row(px.data.data + y * n);
  }
  return enc.finish(out);
}

}  // namespace

PANTO_TEST(png, row_encoder_helper_thread_gives_the_bytes_of_the_whole_image_encode) {
  // Filtered sizes around the chunk (kPngDeflateChunk, 512 KiB): one chunk exactly, one byte over, several, and rows
  // wider than a chunk; compressed on the helper thread and inline, both equal to encode_png.
  static_assert(panto::kPngDeflateChunk == 16384 * 32, "the first size below is one chunk exactly");
  struct Size {
    uint32_t w, h;
    int c;
  };
  const Size sizes[] = {
      {5461, 32, 3},  // (n + 1) * h == 16384 * 32 == chunk: exactly one chunk
      {5461, 32, 3},  // (the same plus one row, below: one byte row over)
      {1000, 750, 3},                           // 2.25 MB: five chunks, the last short
      {997, 613, 4},
      {200000, 3, 3},  // a row of 600,001 filtered bytes: each row completes a chunk and more
  };
  for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
    const Size& z = sizes[k];
    const panto::Pixels px = noisy(z.w, z.h + (k == 1 ? 1 : 0), z.c);
    panto::OwnedBytes want;
    PANTO_REQUIRE(panto::encode_png(px.view(), &want).ok());
    for (bool threads : {true, false}) {
      const bool prev = panto::set_parts_concurrency(threads);
      panto::OwnedBytes got;
      const panto::Status s = row_encode(px, &got);
      panto::set_parts_concurrency(prev);
      PANTO_CHECK_EQ(s.code, std::string(""));
      PANTO_CHECK(got.size == want.size && std::equal(want.data, want.data + want.size, got.data));
    }
  }
}

PANTO_TEST(png, row_encoder_stops_on_abort_with_the_helper_thread_and_frees_everything) {
  // The flag goes up a third of the way in: the chunk in flight finishes, the next put() sees it, finish() reports
  // ERR_ABORTED; abort_sweep checks that nothing stays charged (the helper joined, both chunk buffers freed).
  const panto::Pixels px = noisy(1000, 750, 3);
  abort_sweep([&](bool, panto::Budget& budget, std::atomic<int>& flag) {
    panto::BudgetScope scope(&budget);
    panto::OwnedBytes out;
    const panto::Status s = row_encode(px, &out, 250, &flag);
    PANTO_CHECK_EQ(s.code, std::string("ERR_ABORTED"));
    PANTO_CHECK(out.data == nullptr);
  });
  // Destroyed mid-image (the caller's stream failed): the helper is joined and nothing leaks.
  abort_sweep([&](bool, panto::Budget& budget, std::atomic<int>&) {
    panto::BudgetScope scope(&budget);
    panto::PngRowEncoder enc;
    PANTO_REQUIRE(enc.begin(px.width, px.height, px.channels).ok());
    for (uint32_t y = 0; y < 400; y++) enc.put_row(px.data.data + size_t(y) * px.width * 3);
  });
}
