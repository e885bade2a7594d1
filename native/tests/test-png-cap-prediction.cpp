// process() predicts a PNG's size from sample bands (estimate_png_size) and skips the full encode when the PNG surely
// misses the byte cap (png_surely_over_cap): these tests pin that a PNG that fits is never sent to the ladder on a
// prediction, that one clearly over is, and that process() gives the codec that follows. The inputs are BMPs (always
// re-encoded as PNG) at 1280x1024, so the pixels the prediction sees are exactly the ones built here.
#include <algorithm>
#include <string>

#include "internal.h"
#include "test-util.h"

using panto::MediaType;
using panto::Pixels;
using namespace panto_test;

namespace {

constexpr uint32_t kW = 1280, kH = 1024;

Pixels rgb(const std::vector<uint8_t>& v) {
  Pixels px;
  px.width = kW, px.height = kH, px.channels = 3;
  if (!panto::alloc_owned(v.size(), &px.data)) record_failure(__FILE__, __LINE__, "alloc_owned");
  else std::copy(v.begin(), v.end(), px.data.data);
  return px;
}

/** Photo-like, `w` x `h` RGB: gradients plus noise (about 2/3 byte per sample as PNG; the estimate is within 1%). */
std::vector<uint8_t> dense_pixels(uint32_t w = kW, uint32_t h = kH) {
  std::vector<uint8_t> v(size_t(w) * h * 3);
  uint32_t s = 0x2545f491u;
  for (uint32_t y = 0; y < h; y++)
    for (uint32_t x = 0; x < w; x++) {
      s ^= s << 13, s ^= s >> 17, s ^= s << 5;
      const int n = int(s >> 26) - 32;
      uint8_t* p = &v[(size_t(y) * w + x) * 3];
      p[0] = uint8_t(std::clamp(int(x * 255 / w) + n, 0, 255));
      p[1] = uint8_t(std::clamp(int(y * 255 / h) - n / 2, 0, 255));
      p[2] = uint8_t(std::clamp(int((x + y) & 0xff) / 2 + 64 + n, 0, 255));
    }
  return v;
}

/** Grey noise of 64 levels: about 1/2 byte per sample, and the estimate overshoots by several percent (each sample
 *  band's first rows have nothing to match against). */
std::vector<uint8_t> noisy_pixels() {
  std::vector<uint8_t> v(size_t(kW) * kH * 3);
  uint32_t s = 0x6d2b79f5u;
  for (size_t i = 0; i < v.size(); i += 3) {
    s ^= s << 13, s ^= s >> 17, s ^= s << 5;
    v[i] = v[i + 1] = v[i + 2] = uint8_t(s >> 26);
  }
  return v;
}

/** UI-like: flat 16x16 blocks in six colours (a HiDPI screenshot of flat shapes). Each sample band starts without the
 *  rows above it, so the estimate overshoots by far more than 25%. */
std::vector<uint8_t> sparse_pixels() {
  static const uint8_t kColours[6][3] = {{255, 255, 255}, {236, 240, 241}, {44, 62, 80},
                                         {52, 152, 219}, {231, 76, 60},   {46, 204, 113}};
  std::vector<uint8_t> v(size_t(kW) * kH * 3);
  uint32_t s = 0x9e3779b9u;
  std::vector<uint8_t> block((kW / 16) * (kH / 16));
  for (auto& b : block) s ^= s << 13, s ^= s >> 17, s ^= s << 5, b = uint8_t(s % 6);
  for (uint32_t y = 0; y < kH; y++)
    for (uint32_t x = 0; x < kW; x++) {
      const uint8_t* c = kColours[block[(y / 16) * (kW / 16) + x / 16]];
      std::copy(c, c + 3, &v[(size_t(y) * kW + x) * 3]);
    }
  return v;
}

panto::ProcessResult process_bmp(const std::vector<uint8_t>& bmp, uint64_t cap) {
  panto::ProcessOptions o;
  o.max_encoded_bytes = cap;
  panto::ProcessResult r;
  const auto st = panto::process(bmp.data(), bmp.size(), o, &r);
  if (!st.ok()) record_failure(__FILE__, __LINE__, "process: " + st.code + " " + st.message);
  return r;
}

}  // namespace

PANTO_TEST(process, png_that_fits_the_cap_is_never_skipped_on_a_prediction) {
  const uint64_t samples = uint64_t(kW) * kH * 3;
  for (bool dense : {true, false}) {
    const std::vector<uint8_t> v = dense ? noisy_pixels() : sparse_pixels();
    const Pixels px = rgb(v);
    panto::OwnedBytes full;
    PANTO_REQUIRE(panto::encode_png(px.view(), &full).ok());
    const uint64_t estimate = panto::estimate_png_size(px);
    if (dense) {
      // Overshoots by more than 5%: a prediction with a smaller margin would skip this PNG.
      PANTO_CHECK(estimate >= samples / 4);
      PANTO_CHECK(estimate > full.size + full.size / 20);
    } else {
      // Overshoots by more than the 25% margin once used for every image.
      PANTO_CHECK(estimate < samples / 4);
      PANTO_CHECK(estimate > full.size + full.size / 4);
    }
    // A cap the PNG just fits: not predicted over, and process() keeps the PNG (the same bytes).
    PANTO_CHECK(!panto::png_surely_over_cap(px, full.size));
    const auto r = process_bmp(bmp24(kW, kH, v), full.size);
    PANTO_CHECK(r.type == MediaType::Png);
    PANTO_CHECK(!has_change(r, "quality-reduced"));
    PANTO_CHECK_EQ(r.data.size, full.size);
    PANTO_CHECK(r.data.size == full.size && std::equal(full.data, full.data + full.size, r.data.data));
  }
}

PANTO_TEST(process, png_clearly_over_the_cap_goes_to_the_ladder_without_the_full_encode) {
  const std::vector<uint8_t> v = dense_pixels();
  const Pixels px = rgb(v);
  panto::OwnedBytes full;
  PANTO_REQUIRE(panto::encode_png(px.view(), &full).ok());
  // 18% over the cap (under the 25% margin once used for every image): predicted over, so process() never encodes the
  // full PNG and the ladder's JPEG is the output.
  const uint64_t cap = full.size * 100 / 118;
  PANTO_CHECK(panto::png_surely_over_cap(px, cap));
  const auto r = process_bmp(bmp24(kW, kH, v), cap);
  PANTO_CHECK(r.type == MediaType::Jpeg);
  PANTO_CHECK(has_change(r, "quality-reduced"));
  PANTO_CHECK(has_change(r, "converted"));
  PANTO_CHECK(r.data.size <= cap);

  // Sparse pixels need a PNG well over the cap to be predicted over.
  const Pixels ui = rgb(sparse_pixels());
  panto::OwnedBytes ui_full;
  PANTO_REQUIRE(panto::encode_png(ui.view(), &ui_full).ok());
  PANTO_CHECK(panto::png_surely_over_cap(ui, ui_full.size / 4));
}

namespace {

panto::ProcessResult process_png(const panto::OwnedBytes& png, uint64_t cap) {
  panto::ProcessOptions o;
  o.max_encoded_bytes = cap;
  panto::ProcessResult r;
  const auto st = panto::process(png.data, png.size, o, &r);
  if (!st.ok()) record_failure(__FILE__, __LINE__, "process: " + st.code + " " + st.message);
  return r;
}

}  // namespace

PANTO_TEST(process, png_density_predicts_the_resized_png_and_either_path_gives_the_same_bytes) {
  // 2400x1800 -> 2000x1500 (over 1 MP, no shrink-on-load: the streaming resize, fused or not by the density).
  constexpr uint32_t w = 2400, h = 1800;
  Pixels px;
  px.width = w, px.height = h, px.channels = 3;
  const std::vector<uint8_t> v = dense_pixels(w, h);
  PANTO_REQUIRE(panto::alloc_owned(v.size(), &px.data));
  std::copy(v.begin(), v.end(), px.data.data);
  panto::OwnedBytes png;
  PANTO_REQUIRE(panto::encode_png(px.view(), &png).ok());
  panto::MediaInfo info;
  PANTO_REQUIRE(panto::probe(png.data, png.size, &info).ok());

  // A cap far above: fused (the rows go straight into the encoder).
  const auto fused = process_png(png, uint64_t(1) << 40);
  PANTO_REQUIRE(fused.type == MediaType::Png && fused.width == 2000 && fused.height == 1500);
  const uint64_t predicted = panto::png_size_by_density(png.data, png.size, info, 2000, 1500);
  // Same encoder, 0.69x the filtered bytes: the guess (measured 4.5% high) is within 15% of the PNG made.
  PANTO_CHECK(predicted > fused.data.size * 85 / 100 && predicted < fused.data.size * 115 / 100);

  // A cap the PNG just fits, below the guess when the guess is high (or just above it): whichever path the density
  // picks, the PNG is kept and its bytes are the same.
  for (uint64_t cap : {uint64_t(fused.data.size), std::max<uint64_t>(predicted, fused.data.size) + 1}) {
    const auto r = process_png(png, cap);
    PANTO_CHECK(r.type == MediaType::Png);
    PANTO_CHECK(r.data.size == fused.data.size &&
                std::equal(fused.data.data, fused.data.data + fused.data.size, r.data.data));
  }
  // A cap well under the guess: not fused, predicted over, the ladder's JPEG.
  const auto over = process_png(png, predicted / 3);
  PANTO_CHECK(over.type == MediaType::Jpeg);
  PANTO_CHECK(over.data.size <= predicted / 3);
}
