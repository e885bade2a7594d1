// A still, opaque WebP that shrinks is decoded straight at its target size by libwebp's own rescaler (decode.cpp,
// webp_scales_on_decode): the full-size RGB image never exists and no Mitchell resize runs. These tests pin that the
// path is taken only where it should be, that its pixels are libwebp's single-threaded scaled decode (native and wasm
// agree), that process() gives the exact target through it, and that damaged, truncated or aborted input still ends
// in a typed error.
#include <webp/decode.h>
#include <webp/encode.h>

#include <atomic>
#include <string>

#include "budget.h"
#include "internal.h"
#include "test-util.h"

using namespace panto_test;

namespace {

/** A photo-like RGB image (gradients plus noise: every macroblock costs real work). */
std::vector<uint8_t> rgb_photo(uint32_t w, uint32_t h, uint32_t seed) {
  std::vector<uint8_t> v(size_t(w) * h * 3);
  uint32_t s = seed;
  for (uint32_t y = 0; y < h; y++)
    for (uint32_t x = 0; x < w; x++) {
      s ^= s << 13;
      s ^= s >> 17;
      s ^= s << 5;
      uint8_t* p = &v[(size_t(y) * w + x) * 3];
      const int n = int(s >> 27) - 16;
      p[0] = uint8_t(std::min(255, std::max(0, int(x * 255 / w) + n)));
      p[1] = uint8_t(std::min(255, std::max(0, int(y * 255 / h) - n)));
      p[2] = uint8_t(std::min(255, std::max(0, int((x ^ y) & 0xff) / 2 + 64 + n)));
    }
  return v;
}

std::vector<uint8_t> lossy_webp(uint32_t w, uint32_t h, int channels = 3) {
  std::vector<uint8_t> px = rgb_photo(w, h, 0x1234567u ^ w);
  if (channels == 4) {
    std::vector<uint8_t> rgba(size_t(w) * h * 4);
    for (size_t i = 0; i < size_t(w) * h; i++) {
      for (int c = 0; c < 3; c++) rgba[i * 4 + c] = px[i * 3 + c];
      rgba[i * 4 + 3] = uint8_t(i % 7 == 0 ? 0 : 255);
    }
    px = std::move(rgba);
  }
  panto::OwnedBytes out;
  const auto st = panto::encode_webp({w, h, channels, px.data()}, false, 80, &out);
  if (!st.ok()) record_failure(__FILE__, __LINE__, "encode_webp: " + st.message);
  return {out.data, out.data + out.size};
}

/** The still WebP's VP8 chunk wrapped as the only frame of an animation container (VP8X + ANIM + one ANMF). */
std::vector<uint8_t> one_frame_animation(const std::vector<uint8_t>& still, uint32_t w, uint32_t h) {
  auto le = [](std::vector<uint8_t>* v, uint32_t x, int n) {
    for (int i = 0; i < n; i++) v->push_back(uint8_t(x >> (8 * i)));
  };
  const std::vector<uint8_t> vp8(still.begin() + 12, still.end());  // after "RIFF" size "WEBP"
  std::vector<uint8_t> body{'W', 'E', 'B', 'P', 'V', 'P', '8', 'X'};
  le(&body, 10, 4);
  body.push_back(0x02);  // animation flag
  le(&body, 0, 3);
  le(&body, w - 1, 3);
  le(&body, h - 1, 3);
  body.insert(body.end(), {'A', 'N', 'I', 'M'});
  le(&body, 6, 4);
  le(&body, 0, 4);  // background colour
  le(&body, 0, 2);  // loop count
  body.insert(body.end(), {'A', 'N', 'M', 'F'});
  le(&body, uint32_t(16 + vp8.size()), 4);
  le(&body, 0, 3), le(&body, 0, 3);  // frame offset
  le(&body, w - 1, 3), le(&body, h - 1, 3);
  le(&body, 100, 3);   // duration
  body.push_back(0);  // blend, keep
  body.insert(body.end(), vp8.begin(), vp8.end());
  if (vp8.size() & 1) body.push_back(0);
  std::vector<uint8_t> file{'R', 'I', 'F', 'F'};
  le(&file, uint32_t(body.size()), 4);
  file.insert(file.end(), body.begin(), body.end());
  return file;
}

/** libwebp's own single-threaded scaled decode (advanced API, no helper thread). */
std::vector<uint8_t> reference_scaled(const std::vector<uint8_t>& webp, int w, int h) {
  WebPDecoderConfig config;
  if (!WebPInitDecoderConfig(&config)) return {};
  std::vector<uint8_t> out(size_t(w) * size_t(h) * 3);
  config.options.use_scaling = 1;
  config.options.scaled_width = w;
  config.options.scaled_height = h;
  config.output.colorspace = MODE_RGB;
  config.output.is_external_memory = 1;
  config.output.u.RGBA.rgba = out.data();
  config.output.u.RGBA.stride = w * 3;
  config.output.u.RGBA.size = out.size();
  if (WebPDecode(webp.data(), webp.size(), &config) != VP8_STATUS_OK) return {};
  return out;
}

panto::Status decode_scaled(const std::vector<uint8_t>& in, uint32_t tw, uint32_t th, panto::Pixels* px,
                            const std::atomic<int>* flag = nullptr) {
  panto::MediaInfo info;
  const auto st = panto::probe(in.data(), in.size(), &info);
  if (!st.ok()) return st;
  panto::Budget b(1ull << 30, flag);
  panto::BudgetScope scope(&b);
  return panto::decode_image(in.data(), in.size(), info, px, 8, 1, tw, th);
}

}  // namespace

PANTO_TEST(webp, scaled_decode_is_libwebps_single_threaded_scaled_decode) {
  // >= 512 px wide (libwebp's threaded row pipeline), odd sizes and partial macroblocks, a 1-row target.
  struct Case {
    uint32_t w, h, tw, th;
  };
  const Case cases[] = {{1200, 900, 500, 375}, {1201, 899, 1000, 749}, {640, 480, 639, 480}, {333, 517, 17, 1}};
  for (const auto& c : cases) {
    const auto webp = lossy_webp(c.w, c.h);
    PANTO_REQUIRE(!webp.empty());
    panto::Pixels px;
    const auto st = decode_scaled(webp, c.tw, c.th, &px);
    PANTO_REQUIRE(st.ok());
    PANTO_CHECK_EQ(px.width, c.tw);
    PANTO_CHECK_EQ(px.height, c.th);
    PANTO_CHECK_EQ(px.channels, 3);
    const auto ref = reference_scaled(webp, int(c.tw), int(c.th));
    PANTO_REQUIRE(!ref.empty());
    if (std::vector<uint8_t>(px.data.data, px.data.data + px.data.size) != ref)
      record_failure(__FILE__, __LINE__, std::to_string(c.w) + "x" + std::to_string(c.h) + " -> " +
                                             std::to_string(c.tw) + "x" + std::to_string(c.th) +
                                             ": differs from libwebp's single-threaded scaled decode");
  }
}

PANTO_TEST(webp, scaled_decode_only_for_opaque_stills_that_shrink) {
  panto::MediaInfo info;
  info.type = panto::MediaType::Webp;
  info.width = 1000;
  info.height = 800;
  info.frames = 1;
  PANTO_CHECK(panto::webp_scales_on_decode(info, 500, 400));
  PANTO_CHECK(panto::webp_scales_on_decode(info, 1000, 799));
  PANTO_CHECK(!panto::webp_scales_on_decode(info, 1000, 800));  // no shrink
  PANTO_CHECK(!panto::webp_scales_on_decode(info, 0, 0));        // no target
  PANTO_CHECK(!panto::webp_scales_on_decode(info, 1001, 400));   // never upscales
  info.has_alpha = true;  // libwebp's rescaler does not premultiply RGBA: the Mitchell resize does
  PANTO_CHECK(!panto::webp_scales_on_decode(info, 500, 400));
  info.has_alpha = false;
  info.frames = 3;  // the first frame of an animation is composed on the canvas first
  PANTO_CHECK(!panto::webp_scales_on_decode(info, 500, 400));
  info.frames = 1;
  info.type = panto::MediaType::Jpeg;
  PANTO_CHECK(!panto::webp_scales_on_decode(info, 500, 400));
  // With alpha, decode_image ignores the target: full size.
  const auto alpha = lossy_webp(600, 400, 4);
  panto::Pixels px;
  PANTO_REQUIRE(decode_scaled(alpha, 300, 200, &px).ok());
  PANTO_CHECK_EQ(px.width, 600u);
  PANTO_CHECK_EQ(px.channels, 4);
}

PANTO_TEST(webp, process_shrinks_an_opaque_webp_through_the_scaled_decode) {
  const auto webp = lossy_webp(1601, 1203);
  panto::ProcessOptions o;
  o.max_dimension = 800;
  panto::ProcessResult r;
  PANTO_REQUIRE(panto::process(webp.data(), webp.size(), o, &r).ok());
  PANTO_CHECK(r.type == panto::MediaType::Webp);
  PANTO_CHECK_EQ(r.width, 800u);
  PANTO_CHECK_EQ(r.height, 601u);
  bool resized = false;
  for (const auto& c : r.changes) resized = resized || c == "resized";
  PANTO_CHECK(resized);
  // Forced JPEG output takes the same decode.
  o.format = panto::OutputFormat::Jpeg;
  panto::ProcessResult j;
  PANTO_REQUIRE(panto::process(webp.data(), webp.size(), o, &j).ok());
  PANTO_CHECK(j.type == panto::MediaType::Jpeg);
  PANTO_CHECK_EQ(j.width, 800u);
}

PANTO_TEST(webp, a_one_frame_animation_is_not_taken_for_a_still) {
  // The probe counts one frame, yet the file is an animation container: decoded through the canvas like any
  // animation (found by fuzz_process: the YUV path used to refuse it with ERR_INTERNAL).
  const auto anim = one_frame_animation(lossy_webp(640, 480), 640, 480);
  panto::MediaInfo info;
  PANTO_REQUIRE(panto::probe(anim.data(), anim.size(), &info).ok());
  PANTO_CHECK_EQ(info.frames, 1u);
  PANTO_CHECK(info.animated);
  PANTO_CHECK(!panto::webp_scales_on_decode(info, 320, 240));
  for (auto f : {panto::OutputFormat::Auto, panto::OutputFormat::Webp, panto::OutputFormat::Jpeg}) {
    panto::ProcessOptions o;
    o.max_dimension = 320;
    o.format = f;
    panto::ProcessResult r;
    const auto st = panto::process(anim.data(), anim.size(), o, &r);
    if (!st.ok()) record_failure(__FILE__, __LINE__, st.code + " " + st.message);
    PANTO_CHECK_EQ(r.width, 320u);
    PANTO_CHECK_EQ(r.height, 240u);
  }
}

PANTO_TEST(bombs, webp_scaled_decode_of_damaged_or_truncated_data_is_an_error) {
  const auto webp = lossy_webp(1200, 900);
  PANTO_REQUIRE(webp.size() > 1000);
  // Cut anywhere past the header: never OK (the image ends before its last row), never a crash.
  for (size_t cut : {size_t(40), size_t(200), webp.size() / 3, webp.size() / 2, webp.size() - 10}) {
    std::vector<uint8_t> t(webp.begin(), webp.begin() + static_cast<std::ptrdiff_t>(cut));
    panto::Pixels px;
    const auto st = decode_scaled(t, 400, 300, &px);
    if (st.ok()) record_failure(__FILE__, __LINE__, "truncated at " + std::to_string(cut) + " decoded");
    else if (st.code != "ERR_CORRUPT_MEDIA")
      record_failure(__FILE__, __LINE__, "truncated at " + std::to_string(cut) + ": " + st.code);
    PANTO_CHECK(px.data.data == nullptr);
  }
  // Flipped bytes in the partitions: an error or a picture, typed, through process() with its checks.
  uint64_t seed = 77;
  for (int i = 0; i < 40; i++) {
    std::vector<uint8_t> bad = webp;
    for (int k = 0; k < 8; k++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      const size_t at = 64 + size_t(seed >> 33) % (bad.size() - 64);
      bad[at] ^= uint8_t(1u << ((seed >> 20) & 7));
    }
    panto::ProcessOptions o;
    o.max_dimension = 333;
    panto::ProcessResult r;
    const auto st = panto::process(bad.data(), bad.size(), o, &r);
    if (!st.ok() && st.code != "ERR_CORRUPT_MEDIA")
      record_failure(__FILE__, __LINE__, "flipped bytes: " + st.code + " " + st.message);
    if (st.ok()) PANTO_CHECK(r.width == 333u && r.height == 250u);
  }
  // Aborted before and while decoding.
  std::atomic<int> flag{1};
  panto::Pixels px;
  PANTO_CHECK_EQ(decode_scaled(webp, 400, 300, &px, &flag).code, std::string("ERR_ABORTED"));
}
