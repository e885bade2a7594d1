// sniff + probe over every committed fixture (headers only, no pixel decode).
#include <cstring>

#include "test-util.h"

using panto::MediaInfo;
using panto::MediaType;
using namespace panto_test;

PANTO_TEST(sniff, every_fixture_by_magic_bytes) {
  for (const auto& f : all_fixtures()) {
    const auto bytes = fixture(f.file);
    const MediaType got = panto::sniff(bytes.data(), bytes.size());
    if (got != f.type) record_failure(__FILE__, __LINE__, std::string("sniff ") + f.file + " -> " + panto::mime_of(got));
  }
}

PANTO_TEST(sniff, unknown_and_short_inputs) {
  const uint8_t text[] = "hello, this is plain text and no image at all";
  PANTO_CHECK(panto::sniff(text, sizeof text - 1) == MediaType::Unknown);
  PANTO_CHECK(panto::sniff(nullptr, 0) == MediaType::Unknown);
  const uint8_t png_prefix[] = {0x89, 'P', 'N'};
  PANTO_CHECK(panto::sniff(png_prefix, sizeof png_prefix) == MediaType::Unknown);
  const uint8_t riff_not_webp[] = {'R', 'I', 'F', 'F', 4, 0, 0, 0, 'W', 'A', 'V', 'E'};
  PANTO_CHECK(panto::sniff(riff_not_webp, sizeof riff_not_webp) == MediaType::Unknown);
}

PANTO_TEST(sniff, mime_round_trip) {
  PANTO_CHECK_EQ(std::string(panto::mime_of(MediaType::Png)), std::string("image/png"));
  PANTO_CHECK_EQ(std::string(panto::mime_of(MediaType::Pdf)), std::string("application/pdf"));
  PANTO_CHECK_EQ(std::string(panto::mime_of(MediaType::Tiff)), std::string("image/tiff"));
  PANTO_CHECK(panto::media_type_from_mime("image/jpg") == MediaType::Jpeg);
  PANTO_CHECK(panto::media_type_from_mime("IMAGE/PNG; charset=binary") == MediaType::Png);
  PANTO_CHECK(panto::media_type_from_mime("text/plain") == MediaType::Unknown);
  PANTO_CHECK(panto::is_supported(MediaType::Webp));
  PANTO_CHECK(!panto::is_supported(MediaType::Heic));
}

PANTO_TEST(probe, dimensions_of_the_picture) {
  for (const auto& f : all_fixtures()) {
    if (!panto::is_supported(f.type) || f.type == MediaType::Pdf || std::strcmp(f.file, "bmp-rle8.bmp") == 0) continue;
    const auto bytes = fixture(f.file);
    MediaInfo info;
    const auto st = panto::probe(bytes.data(), bytes.size(), &info);
    if (!st.ok()) {
      record_failure(__FILE__, __LINE__, std::string("probe ") + f.file + ": " + st.code + " " + st.message);
      continue;
    }
    PANTO_CHECK(info.type == f.type);
    // Orientations 5..8 are stored 48x64; a probe may report stored or displayed size, never anything else.
    const bool ok = (info.width == 64 && info.height == 48) || (info.width == 48 && info.height == 64);
    if (!ok) record_failure(__FILE__, __LINE__, std::string(f.file) + " " + std::to_string(info.width) + "x" +
                                                    std::to_string(info.height));
  }
}

PANTO_TEST(probe, frames_alpha_orientation) {
  MediaInfo info;
  auto probe = [&](const char* name) {
    info = MediaInfo{};
    const auto bytes = fixture(name);
    return panto::probe(bytes.data(), bytes.size(), &info);
  };
  PANTO_CHECK(probe("gif-animated.gif").ok());
  PANTO_CHECK_EQ(info.frames, 3u);
  PANTO_CHECK(probe("webp-animated.webp").ok());
  PANTO_CHECK_EQ(info.frames, 3u);
  PANTO_CHECK(probe("gif-still.gif").ok());
  PANTO_CHECK_EQ(info.frames, 1u);
  PANTO_CHECK(probe("png-rgba.png").ok());
  PANTO_CHECK(info.has_alpha);
  PANTO_CHECK(probe("png-rgb.png").ok());
  PANTO_CHECK(!info.has_alpha);
  PANTO_CHECK_EQ(info.orientation, 1);
  PANTO_CHECK(probe("png-palette-trns.png").ok());
  PANTO_CHECK(info.has_alpha);
  PANTO_CHECK(probe("webp-lossy-alpha.webp").ok());
  PANTO_CHECK(info.has_alpha);
  PANTO_CHECK(probe("webp-lossy.webp").ok());
  PANTO_CHECK(!info.has_alpha);
  PANTO_CHECK(probe("webp-lossless-alpha.webp").ok());
  PANTO_CHECK(info.has_alpha);
  PANTO_CHECK(probe("pdf-2page.pdf").ok());
  PANTO_CHECK(info.type == MediaType::Pdf);
  PANTO_CHECK(info.frames == 2u || info.frames == 0u);
  for (int n = 1; n <= 8; ++n) {
    const std::string name = "jpeg-orient-" + std::to_string(n) + ".jpg";
    PANTO_CHECK(probe(name.c_str()).ok());
    if (info.orientation != n) record_failure(__FILE__, __LINE__, name + " orientation " + std::to_string(info.orientation));
  }
}

PANTO_TEST(probe, recognised_types_are_unsupported_and_named) {
  for (const auto& f : all_fixtures()) {
    if (panto::is_supported(f.type)) continue;
    const auto bytes = fixture(f.file);
    MediaInfo info;
    const auto st = panto::probe(bytes.data(), bytes.size(), &info);
    PANTO_CHECK_EQ(st.code, std::string("ERR_UNSUPPORTED_MEDIA"));
    PANTO_CHECK(st.media_type == f.type);
  }
}

// The walk to EOI through entropy-coded data: stuffed 0xFF00, restart markers and fill 0xFF are skipped at every
// offset, EOI is found exactly, and every truncation fails.
PANTO_TEST(probe, jpeg_walk_finds_eoi_past_stuffing_restarts_and_fill) {
  const auto src = fixture("jpeg-baseline.jpg");
  panto::JpegLayout head;
  PANTO_REQUIRE(panto::jpeg_walk(src.data(), src.size(), false, &head).ok());
  const size_t scan = head.first_sos + 2 + ((size_t(src[head.first_sos + 2]) << 8) | src[head.first_sos + 3]);
  for (size_t shift = 0; shift < 40; shift++) {
    std::vector<uint8_t> j(src.begin(), src.begin() + long(scan));
    j.insert(j.end(), shift, 0x12);
    for (int k = 0; k < 8; k++) {
      const uint8_t run[] = {0xFF, 0x00, 0x34, 0xFF, uint8_t(0xD0 + k), 0x56, 0xFF, 0xFF, 0x00, 0x78};
      j.insert(j.end(), run, run + sizeof run);
      j.insert(j.end(), size_t(k) * 3, 0x9A);
    }
    j.push_back(0xFF);
    j.push_back(0xD9);
    panto::JpegLayout l;
    const panto::Status s = panto::jpeg_walk(j.data(), j.size(), true, &l);
    PANTO_CHECK(s.ok());
    PANTO_CHECK_EQ(l.end, j.size());
    for (size_t n = scan; n < j.size(); n++) {
      panto::JpegLayout t;
      const panto::Status e = panto::jpeg_walk(j.data(), n, true, &t);
      PANTO_CHECK_EQ(e.code, std::string("ERR_CORRUPT_MEDIA"));
      PANTO_CHECK(e.message.find("no end-of-image marker") != std::string::npos);
    }
  }
}
