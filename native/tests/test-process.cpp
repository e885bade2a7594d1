// process(): pass-through, conversion, resize, flatten, first frame, byte cap, PDF.
#include <cmath>

#include "budget.h"
#include "internal.h"
#include "jpeg-decode.h"
#include "test-util.h"

using panto::MediaType;
using panto::ProcessOptions;
using panto::ProcessResult;
using namespace panto_test;

namespace {

panto::Status run(const std::vector<uint8_t>& in, const ProcessOptions& opts, ProcessResult* r) {
  return panto::process(in.data(), in.size(), opts, r);
}

bool decode(const std::vector<uint8_t>& bytes, panto::DecodedImage* img) {
  return panto::decode_to_rgba(bytes.data(), bytes.size(), 100000000, img).ok();
}

}  // namespace

PANTO_TEST(process, every_supported_fixture_gives_provider_ready_output) {
  for (const auto& f : all_fixtures()) {
    if (!panto::is_supported(f.type)) continue;
    const auto in = fixture(f.file);
    ProcessResult r;
    const auto st = run(in, ProcessOptions{}, &r);
    if (!st.ok()) {
      // RLE BMP may be refused (documented); nothing else may fail.
      if (std::string(f.file) != "bmp-rle8.bmp" || st.code != "ERR_UNSUPPORTED_MEDIA")
        record_failure(__FILE__, __LINE__, std::string(f.file) + ": " + st.code + " " + st.message);
      continue;
    }
    PANTO_CHECK(r.type == MediaType::Png || r.type == MediaType::Jpeg || r.type == MediaType::Gif ||
                r.type == MediaType::Webp || r.type == MediaType::Pdf);
    PANTO_CHECK(r.original.type == f.type);
    const auto out = output_bytes(r, in);
    PANTO_CHECK(panto::sniff(out.data(), out.size()) == r.type);
    if (r.type == MediaType::Pdf) continue;
    panto::DecodedImage img;
    if (!decode(out, &img)) {
      record_failure(__FILE__, __LINE__, std::string(f.file) + ": output does not decode");
      continue;
    }
    PANTO_CHECK_EQ(img.width, r.width);
    PANTO_CHECK_EQ(img.height, r.height);
  }
}

PANTO_TEST(process, small_png_passes_through_untouched) {
  const auto in = fixture("png-rgb.png");
  ProcessResult r;
  PANTO_REQUIRE(run(in, ProcessOptions{}, &r).ok());
  PANTO_CHECK(r.unchanged);
  PANTO_CHECK(r.changes.empty());
  PANTO_CHECK(r.type == MediaType::Png);
  PANTO_CHECK_EQ(r.width, 64u);
  PANTO_CHECK_EQ(r.height, 48u);
}

PANTO_TEST(process, bmp_always_becomes_png) {
  for (const char* name : {"bmp-24.bmp", "bmp-32-alpha.bmp", "bmp-topdown.bmp", "bmp-4bit-palette.bmp"}) {
    const auto in = fixture(name);
    ProcessResult r;
    const auto st = run(in, ProcessOptions{}, &r);
    if (!st.ok()) {
      record_failure(__FILE__, __LINE__, std::string(name) + ": " + st.code + " " + st.message);
      continue;
    }
    PANTO_CHECK(r.type == MediaType::Png);
    PANTO_CHECK(has_change(r, "converted"));
    panto::DecodedImage img;
    PANTO_REQUIRE(decode(output_bytes(r, in), &img));
    PANTO_REQUIRE(img.width == 64 && img.height == 48);
    // top-down and bottom-up give the same upright picture: red top-left, blue bottom bar
    const auto tl = pixel_at(img, 6, 6);
    const auto bottom = pixel_at(img, 32, 44);
    if (!near(tl, 255, 0, 0, 8)) record_failure(__FILE__, __LINE__, std::string(name) + " (6,6) " + show_rgba(tl));
    if (!near(bottom, 0, 0, 255, 8))
      record_failure(__FILE__, __LINE__, std::string(name) + " (32,44) " + show_rgba(bottom));
  }
}

PANTO_TEST(process, animated_inputs_give_first_frame) {
  for (const char* name : {"gif-animated.gif", "webp-animated.webp"}) {
    const auto in = fixture(name);
    ProcessResult r;
    const auto st = run(in, ProcessOptions{}, &r);
    if (!st.ok()) {
      record_failure(__FILE__, __LINE__, std::string(name) + ": " + st.code + " " + st.message);
      continue;
    }
    PANTO_CHECK(has_change(r, "first-frame"));
    PANTO_CHECK_EQ(r.original.frames, 3u);
    panto::DecodedImage img;
    PANTO_REQUIRE(decode(output_bytes(r, in), &img));
    // frame 1 is the unmirrored picture: red at top-left
    const auto tl = pixel_at(img, 6, 6);
    if (!near(tl, 255, 0, 0, 40)) record_failure(__FILE__, __LINE__, std::string(name) + " (6,6) " + show_rgba(tl));
  }
}

PANTO_TEST(process, resize_fits_inside_and_keeps_codec) {
  struct Case {
    const char* file;
    MediaType out;
  };
  for (const Case& c : {Case{"png-rgb.png", MediaType::Png}, Case{"jpeg-baseline.jpg", MediaType::Jpeg},
                        Case{"jpeg-progressive.jpg", MediaType::Jpeg}, Case{"webp-lossy.webp", MediaType::Webp},
                        Case{"png-16bit.png", MediaType::Png}, Case{"png-interlaced.png", MediaType::Png}}) {
    const auto in = fixture(c.file);
    ProcessOptions o;
    o.max_dimension = 32;
    ProcessResult r;
    const auto st = run(in, o, &r);
    if (!st.ok()) {
      record_failure(__FILE__, __LINE__, std::string(c.file) + ": " + st.code + " " + st.message);
      continue;
    }
    PANTO_CHECK(r.type == c.out);
    PANTO_CHECK_EQ(r.width, 32u);
    PANTO_CHECK_EQ(r.height, 24u);
    PANTO_CHECK(has_change(r, "resized"));
  }
}

PANTO_TEST(process, never_upscales) {
  const auto in = fixture("jpeg-baseline.jpg");
  ProcessOptions o;
  o.max_dimension = 4000;
  ProcessResult r;
  PANTO_REQUIRE(run(in, o, &r).ok());
  PANTO_CHECK_EQ(r.width, 64u);
  PANTO_CHECK_EQ(r.height, 48u);
}

PANTO_TEST(process, transparent_pixels_never_reach_a_jpeg_unflattened) {
  const auto in = fixture("png-rgba.png");
  ProcessOptions o;
  o.format = panto::OutputFormat::Jpeg;
  ProcessResult r;
  const auto st = run(in, o, &r);
  PANTO_REQUIRE(st.ok());
  PANTO_REQUIRE(r.type == MediaType::Jpeg);
  panto::DecodedImage img;
  PANTO_REQUIRE(decode(output_bytes(r, in), &img));
  const auto bg = pixel_at(img, 60, 4);  // fully transparent in the input
  if (!near(bg, 255, 255, 255, 12)) record_failure(__FILE__, __LINE__, "transparent -> " + show_rgba(bg));
  const auto red = pixel_at(img, 6, 6);
  if (!near(red, 255, 0, 0, 40)) record_failure(__FILE__, __LINE__, "opaque red -> " + show_rgba(red));
}

PANTO_TEST(process, alpha_kept_where_the_codec_keeps_it) {
  for (const char* name : {"png-rgba.png", "webp-lossy-alpha.webp", "webp-lossless-alpha.webp"}) {
    const auto in = fixture(name);
    ProcessOptions o;
    o.max_dimension = 32;
    ProcessResult r;
    PANTO_REQUIRE(run(in, o, &r).ok());
    PANTO_CHECK(r.type == MediaType::Png || r.type == MediaType::Webp);
    panto::DecodedImage img;
    PANTO_REQUIRE(decode(output_bytes(r, in), &img));
    const auto bg = pixel_at(img, 30, 2);  // input (60,4): transparent
    if (bg.a > 16) record_failure(__FILE__, __LINE__, std::string(name) + " transparent corner " + show_rgba(bg));
  }
}

PANTO_TEST(process, output_never_exceeds_the_byte_cap) {
  for (const char* name : {"png-16bit.png", "jpeg-metadata.jpg", "bmp-24.bmp", "webp-lossy-alpha.webp"}) {
    const auto in = fixture(name);
    for (uint64_t cap : {300u, 600u, 2000u}) {
      ProcessOptions o;
      o.max_encoded_bytes = cap;
      ProcessResult r;
      const auto st = run(in, o, &r);
      if (st.ok()) {
        const size_t size = r.unchanged ? in.size() : r.data.size;
        if (size > cap)
          record_failure(__FILE__, __LINE__, std::string(name) + " cap " + std::to_string(cap) + " gave " +
                                                 std::to_string(size));
      } else {
        PANTO_CHECK_EQ(st.code, std::string("ERR_MEDIA_TOO_LARGE"));
      }
    }
  }
}

PANTO_TEST(process, pdf_passes_through_and_truncated_pdf_is_corrupt) {
  const auto in = fixture("pdf-2page.pdf");
  ProcessResult r;
  PANTO_REQUIRE(run(in, ProcessOptions{}, &r).ok());
  PANTO_CHECK(r.type == MediaType::Pdf);
  PANTO_CHECK(r.unchanged);
  const std::vector<uint8_t> cut(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(in.size() / 2));
  ProcessResult r2;
  const auto st = run(cut, ProcessOptions{}, &r2);
  PANTO_CHECK_EQ(st.code, std::string("ERR_CORRUPT_MEDIA"));
}

// libjpeg-turbo decodes a shrinking JPEG at M/8 of its size: the smallest M of 1, 2, 4, 8 whose output still covers
// the target.
PANTO_TEST(process, jpeg_dct_scale_is_the_smallest_covering_the_target) {
  PANTO_CHECK_EQ(panto::jpeg_scale_eighths(4032, 3024, 2000, 1500), 4);  // 2016 x 1512
  // Only the scales whose inverse DCT has SIMD code: 6/8 (2001 x 1125) would fit, but full size is cheaper.
  PANTO_CHECK_EQ(panto::jpeg_scale_eighths(2667, 1500, 2000, 1125), 8);
  PANTO_CHECK_EQ(panto::jpeg_scale_eighths(1333, 750, 1000, 563), 8);
  PANTO_CHECK_EQ(panto::jpeg_scale_eighths(6028, 3391, 2000, 1125), 4);  // 3/8 (2261 x 1272) fits; 4/8 is taken
  PANTO_CHECK_EQ(panto::jpeg_scale_eighths(2000, 1500, 2000, 1500), 8);  // no shrink: full size
  PANTO_CHECK_EQ(panto::jpeg_scale_eighths(16000, 9000, 2000, 1125), 1);
  PANTO_CHECK_EQ(panto::jpeg_scale_eighths(15900, 9000, 2000, 1125), 2);  // 1/8: 1988 wide, too small
  PANTO_CHECK_EQ(panto::jpeg_scaled_dim(1333, 6), 1000u);

  // A real 1333 x 750 JPEG (our encoder, q95): decoded at 6/8 it is 1000 x 563, and resized to 800 x 450 it matches
  // the full-size decode resized the same way.
  const uint32_t W = 1333, H = 750;
  panto::Budget budget(1ull << 30);
  panto::BudgetScope scope(&budget);
  panto::OwnedBytes rgb;
  PANTO_REQUIRE(panto::alloc_owned(size_t(W) * H * 3, &rgb));
  for (uint32_t y = 0; y < H; y++)
    for (uint32_t x = 0; x < W; x++) {
      uint8_t* p = rgb.data + (size_t(y) * W + x) * 3;
      p[0] = uint8_t(x * 255 / W);
      p[1] = uint8_t(y * 255 / H);
      p[2] = uint8_t(128 + 100 * std::sin(x / 37.0) * std::cos(y / 23.0));
    }
  panto::OwnedBytes jpeg;
  PANTO_REQUIRE(panto::encode_jpeg(panto::PixelView{W, H, 3, rgb.data}, 95, &jpeg).ok());
  panto::MediaInfo info;
  PANTO_REQUIRE(panto::probe(jpeg.data, jpeg.size, &info).ok());
  panto::Pixels scaled, full, a, b;
  PANTO_REQUIRE(panto::decode_image(jpeg.data, jpeg.size, info, &scaled, 6).ok());
  PANTO_CHECK_EQ(scaled.width, 1000u);
  PANTO_CHECK_EQ(scaled.height, 563u);
  PANTO_REQUIRE(panto::decode_image(jpeg.data, jpeg.size, info, &full).ok());
  PANTO_CHECK_EQ(full.width, W);
  PANTO_REQUIRE(panto::resize_pixels(scaled, 800, 450, &a).ok());
  PANTO_REQUIRE(panto::resize_pixels(full, 800, 450, &b).ok());
  double se = 0;
  for (size_t i = 0; i < a.data.size; i++) {
    const double d = double(a.data.data[i]) - double(b.data.data[i]);
    se += d * d;
  }
  const double psnr = 10 * std::log10(255.0 * 255.0 / (se / double(a.data.size) + 1e-12));
  std::fprintf(stderr, "    6/8 decode + resize vs full decode + resize: PSNR %.1f dB\n", psnr);
  PANTO_CHECK(psnr > 35);
}
