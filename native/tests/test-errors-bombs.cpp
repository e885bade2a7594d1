// Error codes for bad input, corrupt/truncated variants of every fixture, pixel bombs, and the allocation budget.
#include <chrono>

#include "budget.h"
#include "cost.h"
#include "internal.h"
#include "test-util.h"

using panto::MediaType;
using panto::ProcessOptions;
using panto::ProcessResult;
using namespace panto_test;

namespace {

panto::Status run(const std::vector<uint8_t>& in, const ProcessOptions& opts = ProcessOptions{}) {
  ProcessResult r;
  return panto::process(in.data(), in.size(), opts, &r);
}

}  // namespace

PANTO_TEST(errors, unrecognised_bytes_are_unsupported) {
  const std::string text = "just some text, not a picture";
  const std::vector<uint8_t> in(text.begin(), text.end());
  PANTO_CHECK_EQ(run(in).code, std::string("ERR_UNSUPPORTED_MEDIA"));
  const auto empty = run({});
  PANTO_CHECK(empty.code == "ERR_UNSUPPORTED_MEDIA" || empty.code == "ERR_INVALID_ARGUMENT" ||
              empty.code == "ERR_CORRUPT_MEDIA");
}

PANTO_TEST(errors, recognised_types_are_named) {
  const auto st = run(fixture("tiff-rgb.tiff"));
  PANTO_CHECK_EQ(st.code, std::string("ERR_UNSUPPORTED_MEDIA"));
  PANTO_CHECK(st.media_type == MediaType::Tiff);
  PANTO_CHECK(st.message.find("image/tiff") != std::string::npos);
  for (const char* name : {"heic-rgb.heic", "avif-rgb.avif", "jxl-rgb.jxl", "ico-32.ico", "svg-rgb.svg"})
    PANTO_CHECK_EQ(run(fixture(name)).code, std::string("ERR_UNSUPPORTED_MEDIA"));
}

PANTO_TEST(errors, input_over_max_input_bytes) {
  const auto in = fixture("jpeg-metadata.jpg");
  ProcessOptions o;
  o.max_input_bytes = 1000;
  PANTO_CHECK_EQ(run(in, o).code, std::string("ERR_MEDIA_TOO_LARGE"));
  const auto pdf = fixture("pdf-2page.pdf");
  o = ProcessOptions{};
  o.max_pdf_bytes = 1000;
  PANTO_CHECK_EQ(run(pdf, o).code, std::string("ERR_MEDIA_TOO_LARGE"));
}

PANTO_TEST(errors, truncated_headers_are_corrupt) {
  for (const char* name : {"png-rgb.png", "jpeg-baseline.jpg", "gif-still.gif", "bmp-24.bmp", "webp-lossy.webp"}) {
    const auto in = fixture(name);
    for (size_t cut : {20u, 30u}) {
      const std::vector<uint8_t> t(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(cut));
      const auto st = run(t);
      if (st.code != "ERR_CORRUPT_MEDIA")
        record_failure(__FILE__, __LINE__, std::string(name) + " cut at " + std::to_string(cut) + ": '" + st.code + "'");
    }
  }
}

// Every prefix length at a stride, and seeded byte flips: any outcome but a crash/UB (ASan/UBSan) or ERR_INTERNAL.
PANTO_TEST(errors, truncations_and_byte_flips_of_every_fixture) {
  size_t cases = 0, rejected = 0;
  for (const auto& f : all_fixtures()) {
    const auto in = fixture(f.file);
    auto check = [&](const std::vector<uint8_t>& v, const std::string& what) {
      ProcessResult r;
      const auto st = panto::process(v.data(), v.size(), ProcessOptions{}, &r);
      ++cases;
      if (!st.ok()) {
        ++rejected;
        if (!is_input_error(st.code))
          record_failure(__FILE__, __LINE__, std::string(f.file) + " " + what + ": " + st.code + " " + st.message);
      } else if (!r.unchanged && r.data.size > ProcessOptions{}.max_encoded_bytes) {
        record_failure(__FILE__, __LINE__, std::string(f.file) + " " + what + ": output over the cap");
      }
    };
    const size_t stride = in.size() > 600 ? in.size() / 150 : 1;
    for (size_t cut = 1; cut < in.size(); cut += stride)
      check(std::vector<uint8_t>(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(cut)),
            "truncated@" + std::to_string(cut));
    Prng rng(0x9e3779b9u ^ static_cast<uint32_t>(in.size()));
    for (int i = 0; i < 40; ++i) {
      auto v = in;
      for (int k = 0; k < 4; ++k) {
        const size_t at = 4 + rng.next() % (v.size() - 4);
        v[at] = static_cast<uint8_t>(v[at] ^ (1 + rng.next() % 255));
      }
      check(v, "flipped#" + std::to_string(i));
    }
  }
  std::fprintf(stderr, "    %zu corrupt cases, %zu rejected\n", cases, rejected);
  PANTO_CHECK(rejected > 0);
}

PANTO_TEST(bombs, declared_pixels_over_the_cap_are_too_large_before_allocation) {
  struct Case {
    const char* name;
    std::vector<uint8_t> bytes;
  };
  const std::vector<Case> cases = {
      {"gif 35 bytes 20000x20000", gif_bomb()},
      {"png 20000x20000", png_bomb()},
      {"png 65535x65535", png_bomb(65535, 65535)},
      {"bmp 20000x20000", bmp_bomb()},
      {"bmp top-down 20000x20000", bmp_bomb(20000, -20000)},
      {"webp 16384x16384", webp_bomb()},
      {"jpeg 60000x60000", jpeg_with_dimensions(fixture("jpeg-baseline.jpg"), 60000, 60000)},
  };
  PANTO_CHECK_EQ(gif_bomb().size(), static_cast<size_t>(35));
  for (const auto& c : cases) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto st = run(c.bytes);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    if (st.code != "ERR_MEDIA_TOO_LARGE")
      record_failure(__FILE__, __LINE__, std::string(c.name) + ": '" + st.code + "' " + st.message);
    std::fprintf(stderr, "    %s -> %s in %lld ms\n", c.name, st.code.c_str(), static_cast<long long>(ms));
    panto::DecodedImage img;
    const auto d = panto::decode_to_rgba(c.bytes.data(), c.bytes.size(), 100000000, &img);
    if (d.code != "ERR_MEDIA_TOO_LARGE")
      record_failure(__FILE__, __LINE__, std::string("decode_to_rgba ") + c.name + ": '" + d.code + "'");
  }
}

PANTO_TEST(bombs, webp_encode_past_the_format_limit_is_too_large) {
  // WebP sizes are 14-bit: a 16973x49 picture (a JPEG the fuzzer found decodes to it) is refused by name, as is a
  // 49x16384 one; 16383 wide still encodes.
  struct Case {
    uint32_t w, h;
    bool fits;
  };
  for (const Case c : {Case{16973, 49, false}, Case{49, 16384, false}, Case{16383, 2, true}}) {
    std::vector<uint8_t> px(size_t(c.w) * c.h * 3, 0x80);
    for (bool lossless : {false, true}) {
      panto::OwnedBytes out;
      const auto st = panto::encode_webp({c.w, c.h, 3, px.data()}, lossless, 80, &out);
      if (c.fits) {
        PANTO_CHECK(st.ok());
        PANTO_CHECK(out.size > 0);
      } else {
        PANTO_CHECK_EQ(st.code, std::string("ERR_MEDIA_TOO_LARGE"));
        PANTO_CHECK(st.message.find("16383") != std::string::npos);
        PANTO_CHECK(out.size == 0);
      }
    }
  }
}

PANTO_TEST(bombs, max_pixels_option_applies) {
  ProcessOptions o;
  o.max_pixels = 1000000;
  PANTO_CHECK_EQ(run(png_bomb(2000, 2000), o).code, std::string("ERR_MEDIA_TOO_LARGE"));
  PANTO_CHECK_EQ(run(gif_bomb(1001, 1000), o).code, std::string("ERR_MEDIA_TOO_LARGE"));
  // under the cap the header check lets it through (a structurally valid PNG may pass through undecoded)
  const auto st = run(png_bomb(500, 500), o);
  PANTO_CHECK(st.code != "ERR_MEDIA_TOO_LARGE");
  panto::DecodedImage img;
  PANTO_CHECK_EQ(panto::decode_to_rgba(png_bomb(500, 500).data(), png_bomb(500, 500).size(), 1000000, &img).code,
                 std::string("ERR_CORRUPT_MEDIA"));
}

PANTO_TEST(budget, refuses_allocations_past_the_limit) {
  panto::Budget b(1000);
  {
    panto::BudgetScope scope(&b);
    void* p = panto_budget_malloc(600);
    PANTO_REQUIRE(p != nullptr);
    PANTO_CHECK_EQ(b.used.load(), uint64_t(600u));
    PANTO_CHECK(panto_budget_malloc(600) == nullptr);
    PANTO_CHECK(b.exceeded.load());
    PANTO_CHECK(panto_budget_realloc(p, 2000) == nullptr);  // refused; p stays valid
    void* q = panto_budget_realloc(p, 300);
    PANTO_REQUIRE(q != nullptr);
    PANTO_CHECK_EQ(b.used.load(), uint64_t(300u));
    panto_budget_free(q);
    PANTO_CHECK_EQ(b.used.load(), uint64_t(0u));
    PANTO_CHECK(b.peak >= 600u && b.peak <= 1000u);
  }
  void* outside = panto_budget_malloc(1 << 20);  // no scope: unbudgeted
  PANTO_CHECK(outside != nullptr);
  panto_budget_free(outside);
}

namespace {

std::vector<uint8_t> jpeg_segment(uint8_t marker, const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> s;
  s.reserve(payload.size() + 4);
  s.push_back(0xFF);
  s.push_back(marker);
  s.push_back(uint8_t((payload.size() + 2) >> 8));
  s.push_back(uint8_t(payload.size() + 2));
  for (uint8_t b : payload) s.push_back(b);
  return s;
}

/** A progressive grey JPEG header (SOF2 w x h, flat DQT, one-code DC/AC tables), as test/helpers/media-hostile.ts. */
std::vector<uint8_t> progressive_header(uint16_t w, uint16_t h) {
  std::vector<uint8_t> out{0xFF, 0xD8};
  std::vector<uint8_t> dqt(65, 1);
  dqt[0] = 0;
  auto add = [&](const std::vector<uint8_t>& s) { out.insert(out.end(), s.begin(), s.end()); };
  add(jpeg_segment(0xDB, dqt));
  add(jpeg_segment(0xC2, {8, uint8_t(h >> 8), uint8_t(h), uint8_t(w >> 8), uint8_t(w), 1, 1, 0x11, 0}));
  std::vector<uint8_t> dht;
  for (uint8_t tc : {uint8_t(0x00), uint8_t(0x10)}) {
    dht.push_back(tc);
    dht.push_back(1);
    dht.insert(dht.end(), 15, 0);
    dht.push_back(0);
  }
  add(jpeg_segment(0xC4, dht));
  return out;
}

void add_scan(std::vector<uint8_t>* out, int ss, int se, int ah, int al) {
  auto s = jpeg_segment(0xDA, {1, 1, 0, uint8_t(ss), uint8_t(se), uint8_t((ah << 4) | al)});
  out->insert(out->end(), s.begin(), s.end());
  out->insert(out->end(), 4, 0);
}

}  // namespace

PANTO_TEST(bombs, progressive_scan_work_is_capped_and_progressions_checked) {
  // 253 consistent scans over a 10000x10000 image: ~250x its blocks -> refused from the headers.
  auto bomb = progressive_header(10000, 10000);
  add_scan(&bomb, 0, 0, 0, 0);
  for (int k = 1; k <= 63; k++) {
    add_scan(&bomb, k, k, 0, 3);
    for (int al = 2; al >= 0; al--) add_scan(&bomb, k, k, al + 1, al);
  }
  bomb.push_back(0xFF);
  bomb.push_back(0xD9);
  const auto t0 = std::chrono::steady_clock::now();
  const auto st = run(bomb);
  PANTO_CHECK_EQ(st.code, std::string("ERR_CORRUPT_MEDIA"));
  PANTO_CHECK(st.message.find("decoding cost") != std::string::npos);
  PANTO_CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20));  // generous: a sanitizer build

  // The same DC scan twice: redundant.
  auto redundant = progressive_header(64, 64);
  add_scan(&redundant, 0, 0, 0, 0);
  add_scan(&redundant, 0, 0, 0, 0);
  redundant.push_back(0xFF);
  redundant.push_back(0xD9);
  PANTO_CHECK(run(redundant).message.find("redundant progression") != std::string::npos);

  // A refinement before the first scan of that coefficient: inconsistent.
  auto out_of_order = progressive_header(64, 64);
  add_scan(&out_of_order, 0, 0, 0, 0);
  add_scan(&out_of_order, 1, 63, 1, 0);
  out_of_order.push_back(0xFF);
  out_of_order.push_back(0xD9);
  PANTO_CHECK(run(out_of_order).message.find("inconsistent progression") != std::string::npos);

  // A consistent two-scan file decodes.
  auto ok = progressive_header(64, 64);
  add_scan(&ok, 0, 0, 0, 0);
  add_scan(&ok, 1, 63, 0, 0);
  ok.push_back(0xFF);
  ok.push_back(0xD9);
  panto::DecodedImage img;
  PANTO_CHECK(panto::decode_to_rgba(ok.data(), ok.size(), 100000000, &img).ok());
}

PANTO_TEST(bombs, jpeg_decoder_refuses_too_many_scans_itself) {
  // decode_image straight (no check_structure walk before it): libjpeg-turbo's own decoding must still stop a file
  // of hundreds of scans (our progress monitor counts them; a repeated scan is also a bogus progression to libjpeg).
  auto bomb = progressive_header(2000, 2000);
  add_scan(&bomb, 0, 0, 0, 0);
  for (int i = 0; i < 300; i++) add_scan(&bomb, 1, 63, 0, 0);
  bomb.push_back(0xFF);
  bomb.push_back(0xD9);
  expect_decoder_refuses(bomb, [](const uint8_t* d, size_t len, const panto::MediaInfo& info, panto::Pixels* px) {
    return panto::decode_image(d, len, info, px);
  });
}

PANTO_TEST(budget, abort_flag_stops_the_decoders_between_rows) {
  // The flag is polled inside stb's JPEG MCU-row loop and PNG row loop (cdeps/patches/stb/0005): decode_image, which
  // has no check of its own before stb runs for these, must stop with ERR_ABORTED.
  std::atomic<int> flag{1};
  for (const char* name : {"jpeg-progressive.jpg", "jpeg-baseline.jpg", "png-16bit.png", "png-interlaced.png"}) {
    const auto in = fixture(name);
    panto::MediaInfo info;
    PANTO_REQUIRE(panto::probe(in.data(), in.size(), &info).ok());
    panto::Budget b(1ull << 30, &flag);
    panto::BudgetScope scope(&b);
    panto::Pixels px;
    const auto st = panto::decode_image(in.data(), in.size(), info, &px);
    if (st.code != "ERR_ABORTED") record_failure(__FILE__, __LINE__, std::string(name) + ": '" + st.code + "'");
  }
  // Through process(): the pipeline stops before decoding too.
  ProcessOptions o;
  o.abort_flag = &flag;
  o.max_dimension = 16;
  PANTO_CHECK_EQ(run(fixture("png-rgb.png"), o).code, std::string("ERR_ABORTED"));
}

PANTO_TEST(budget, running_out_of_memory_is_too_large_never_corrupt) {
  for (const char* name : {"png-rgb.png", "png-palette-trns.png", "jpeg-progressive.jpg", "jpeg-baseline.jpg",
                           "jpeg-cmyk.jpg", "gif-animated.gif",
                           "bmp-24.bmp", "webp-lossy.webp", "webp-animated.webp"}) {
    const auto in = fixture(name);
    panto::MediaInfo info;
    PANTO_REQUIRE(panto::probe(in.data(), in.size(), &info).ok());
    panto::Budget b(4096);
    panto::BudgetScope scope(&b);
    panto::Pixels px;
    const auto st = panto::decode_image(in.data(), in.size(), info, &px);
    if (st.code != "ERR_MEDIA_TOO_LARGE") record_failure(__FILE__, __LINE__, std::string(name) + ": '" + st.code + "'");
  }
}

PANTO_TEST(budget, png_decode_peak_stays_within_the_header_estimate) {
  // cost.cpp plans the PNG decode from the header exactly as png-decode.cpp does (whole buffer, streaming, shrink on
  // load, stb): the estimate is the call's budget and pool reservation, so the real peak must never exceed it. Small
  // fixed codec state (stb's decoder structs, a few KiB) is covered by the process estimate's fixed allowance, hence
  // the 64 KiB of slack here on fixtures this small.
  for (const char* name : {"png-rgb.png", "png-rgba.png", "png-16bit.png", "png-16bit-rgba.png", "png-gray.png",
                           "png-palette-trns.png", "png-interlaced.png"}) {
    const auto in = fixture(name);
    panto::MediaInfo info;
    PANTO_REQUIRE(panto::probe(in.data(), in.size(), &info).ok());
    for (uint32_t shrink : {1u, 2u, 3u}) {
      const uint64_t estimate = panto::estimate_decode_bytes(in.data(), in.size(), info, false, shrink);
      panto::Budget b(1ull << 30);
      panto::Pixels px;
      {
        panto::BudgetScope scope(&b);
        const auto st = panto::decode_image(in.data(), in.size(), info, &px, false, shrink);
        if (!st.ok()) record_failure(__FILE__, __LINE__, std::string(name) + ": " + st.message);
      }
      if (b.peak.load() > estimate + (64u << 10))
        record_failure(__FILE__, __LINE__,
                       std::string(name) + " shrink " + std::to_string(shrink) + ": peak " +
                           std::to_string(b.peak.load()) + " > estimate " + std::to_string(estimate));
      // Shrunk on load: ceil(w/k) x ceil(h/k) (stb's paths ignore the factor).
      const bool shrunk = px.width != info.width;
      if (shrunk) {
        PANTO_CHECK_EQ(px.width, (info.width + shrink - 1) / shrink);
        PANTO_CHECK_EQ(px.height, (info.height + shrink - 1) / shrink);
      }
    }
  }
}

PANTO_TEST(budget, process_wide_cap_refuses_or_reports_busy) {
  const uint64_t previous = panto::set_memory_cap(8ull << 20);
  const auto big = fixture("jpeg-progressive.jpg");
  ProcessOptions o;
  o.format = panto::OutputFormat::Png;
  const auto st = run(big, o);
  PANTO_CHECK_EQ(st.code, std::string("ERR_MEDIA_TOO_LARGE"));
  PANTO_CHECK(st.message.find("process-wide limit") != std::string::npos);
  panto::set_memory_cap(1ull << 30);
  panto::MemoryReservation held;
  PANTO_REQUIRE(held.try_reserve((1ull << 30) - (1ull << 20)));
  PANTO_CHECK_EQ(run(big, o).code, std::string(panto::kBusyCode));
  held.release();
  PANTO_CHECK(run(big, o).ok());
  PANTO_CHECK_EQ(panto::memory_in_flight(), uint64_t(0));
  panto::set_memory_cap(previous);
}
