// EXIF orientation 1..8 -> the same upright picture; lossless metadata stripping keeps pixels and ICC.
#include "test-util.h"

using panto::MediaType;
using panto::ProcessOptions;
using panto::ProcessResult;
using namespace panto_test;

namespace {

// Samples of the upright 64x48 picture (centres of its regions, away from JPEG block edges).
struct Sample {
  uint32_t x, y;
  int r, g, b;
};
const Sample kUpright[] = {
    {6, 6, 255, 0, 0},        // red square, top-left corner
    {40, 24, 255, 255, 0},    // yellow square
    {32, 44, 0, 0, 255},      // blue bar along the bottom
    {56, 6, 200, 200, 200},   // grey, top-right
    {20, 30, 200, 200, 200},  // grey, left-middle
};

}  // namespace

PANTO_TEST(orientation, all_eight_give_the_same_upright_pixels) {
  for (int n = 1; n <= 8; ++n) {
    const std::string name = "jpeg-orient-" + std::to_string(n) + ".jpg";
    const auto in = fixture(name);
    ProcessResult r;
    const auto st = panto::process(in.data(), in.size(), ProcessOptions{}, &r);
    if (!st.ok()) {
      record_failure(__FILE__, __LINE__, name + ": " + st.code + " " + st.message);
      continue;
    }
    PANTO_CHECK(r.type == MediaType::Jpeg);
    if (r.width != 64 || r.height != 48) {
      record_failure(__FILE__, __LINE__, name + " -> " + std::to_string(r.width) + "x" + std::to_string(r.height));
      continue;
    }
    if (n != 1) PANTO_CHECK(has_change(r, "oriented"));
    const auto out = output_bytes(r, in);
    panto::DecodedImage img;
    PANTO_REQUIRE(panto::decode_to_rgba(out.data(), out.size(), 100000000, &img).ok());
    PANTO_REQUIRE(img.width == 64 && img.height == 48);
    for (const auto& s : kUpright) {
      const auto p = pixel_at(img, s.x, s.y);
      if (!near(p, s.r, s.g, s.b, 48))
        record_failure(__FILE__, __LINE__,
                       name + " (" + std::to_string(s.x) + "," + std::to_string(s.y) + ") " + show_rgba(p));
    }
    // The output carries no orientation tag other than 1 (else viewers would rotate twice).
    panto::MediaInfo info;
    PANTO_CHECK(panto::probe(out.data(), out.size(), &info).ok());
    PANTO_CHECK_EQ(info.orientation, 1);
  }
}

PANTO_TEST(metadata, jpeg_privacy_metadata_stripped_losslessly_icc_kept) {
  const auto in = fixture("jpeg-metadata.jpg");
  ProcessResult r;
  PANTO_REQUIRE(panto::process(in.data(), in.size(), ProcessOptions{}, &r).ok());
  PANTO_CHECK(r.type == MediaType::Jpeg);
  PANTO_CHECK(has_change(r, "metadata-stripped"));
  PANTO_CHECK(!has_change(r, "reencoded"));
  const auto out = output_bytes(r, in);
  PANTO_CHECK(out.size() < in.size());
  PANTO_CHECK(!contains(out, std::string("Exif\0\0", 6)));
  PANTO_CHECK(!contains(out, "http://ns.adobe.com/xap/1.0/"));
  PANTO_CHECK(!contains(out, "secret comment"));
  PANTO_CHECK(!contains(out, "Jane Doe"));
  PANTO_CHECK(!contains(out, "PantoCam"));
  PANTO_CHECK(contains(out, "ICC_PROFILE"));
  panto::DecodedImage a, b;
  PANTO_REQUIRE(panto::decode_to_rgba(in.data(), in.size(), 100000000, &a).ok());
  PANTO_REQUIRE(panto::decode_to_rgba(out.data(), out.size(), 100000000, &b).ok());
  PANTO_REQUIRE(a.width == b.width && a.height == b.height);
  PANTO_CHECK(std::equal(a.rgba.data, a.rgba.data + a.rgba.size, b.rgba.data));
}

PANTO_TEST(metadata, png_text_and_exif_chunks_stripped_iccp_kept) {
  const auto in = fixture("png-metadata.png");
  ProcessResult r;
  PANTO_REQUIRE(panto::process(in.data(), in.size(), ProcessOptions{}, &r).ok());
  PANTO_CHECK(r.type == MediaType::Png);
  PANTO_CHECK(has_change(r, "metadata-stripped"));
  const auto out = output_bytes(r, in);
  PANTO_CHECK(!contains(out, "tEXt"));
  PANTO_CHECK(!contains(out, "iTXt"));
  PANTO_CHECK(!contains(out, "eXIf"));
  PANTO_CHECK(!contains(out, "Jane Doe"));
  PANTO_CHECK(contains(out, "iCCP"));
  panto::DecodedImage a, b;
  PANTO_REQUIRE(panto::decode_to_rgba(in.data(), in.size(), 100000000, &a).ok());
  PANTO_REQUIRE(panto::decode_to_rgba(out.data(), out.size(), 100000000, &b).ok());
  PANTO_REQUIRE(a.rgba.size == b.rgba.size);
  PANTO_CHECK(std::equal(a.rgba.data, a.rgba.data + a.rgba.size, b.rgba.data));
}

PANTO_TEST(metadata, keep_metadata_passes_bytes_through) {
  for (const char* name : {"jpeg-metadata.jpg", "png-metadata.png"}) {
    const auto in = fixture(name);
    ProcessOptions o;
    o.keep_metadata = true;
    ProcessResult r;
    PANTO_REQUIRE(panto::process(in.data(), in.size(), o, &r).ok());
    PANTO_CHECK(output_bytes(r, in) == in);
  }
}
