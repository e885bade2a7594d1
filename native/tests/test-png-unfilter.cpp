// png_unfilter_row (the SIMD paths where the build has them) against png_unfilter_row_scalar, byte for byte: random
// rows and rows of extreme values (0/255, where Paeth's ties and Average's rounding matter) for every filter type,
// every pixel size 1..8, first rows (no previous row) and widths around the vector paths' wide-load edge.
#include <cstdio>
#include <cstring>
#include <vector>

#include "png-unfilter.h"
#include "test-util.h"

namespace {

struct Lcg {
  uint32_t s;
  uint8_t next() {
    s = s * 1103515245u + 12345u;
    return uint8_t(s >> 16);
  }
};

/** Fills a row: random bytes, or (extreme) mostly 0/255 with some random ones. */
void fill(Lcg& r, std::vector<uint8_t>& v, bool extreme) {
  for (auto& b : v) {
    const uint8_t x = r.next();
    b = extreme && (x & 3) ? ((x & 4) ? 255 : 0) : r.next();
  }
}

}  // namespace

PANTO_TEST(png, unfilter_simd_matches_scalar_for_every_filter_and_pixel_size) {
  std::printf("  png_unfilter_row vector code: %s\n", panto::png_unfilter_simd());
  Lcg r{20261201};
  int compared = 0;
  for (size_t bpp = 1; bpp <= 8; bpp++) {
    for (size_t w : {1, 2, 3, 5, 16, 17, 255, 1001}) {
      const size_t n = w * bpp;
      for (uint8_t f = 0; f <= 4; f++) {
        for (int first = 0; first < 2; first++) {
          for (int rep = 0; rep < 12; rep++) {
            std::vector<uint8_t> prev(n), simd(n), scalar(n);
            fill(r, prev, rep & 1);
            fill(r, simd, rep & 2);
            scalar = simd;
            const uint8_t* p = first ? nullptr : prev.data();
            const bool a = panto::png_unfilter_row(f, simd.data(), p, n, bpp);
            const bool b = panto::png_unfilter_row_scalar(f, scalar.data(), p, n, bpp);
            PANTO_CHECK(a && b);
            if (simd != scalar) {
              panto_test::record_failure(__FILE__, __LINE__,
                                         "rows differ: bpp " + std::to_string(bpp) + " width " + std::to_string(w) +
                                             " filter " + std::to_string(f) + (first ? " (first row)" : ""));
              return;
            }
            compared++;
          }
        }
      }
    }
  }
  PANTO_CHECK_EQ(compared, 8 * 8 * 5 * 2 * 12);
}

PANTO_TEST(png, unfilter_scalar_is_the_png_definition) {
  // One RGB row of 3 pixels under each filter, from PNG 1.2 section 6 (prev = the row above, already unfiltered);
  // the Paeth row picks the left, the above and the upper-left byte each at least once.
  const uint8_t prev[9] = {32, 246, 247, 45, 176, 34, 210, 77, 10};
  const uint8_t filt[9] = {150, 218, 212, 60, 22, 23, 193, 169, 142};
  struct Case {
    uint8_t f;
    uint8_t want[9];
  };
  const Case cases[] = {
      {0, {150, 218, 212, 60, 22, 23, 193, 169, 142}},
      {1, {150, 218, 212, 210, 240, 235, 147, 153, 121}},  // + left
      {2, {182, 208, 203, 105, 198, 57, 147, 246, 152}},   // + above
      {3, {166, 85, 79, 165, 152, 79, 124, 27, 186}},      // + floor((left + above) / 2)
      {4, {182, 208, 203, 242, 198, 57, 179, 246, 176}},   // + Paeth(left, above, upper left): b b b a b b a b c
  };
  for (const Case& c : cases) {
    for (int simd = 0; simd < 2; simd++) {
      uint8_t row[9];
      std::memcpy(row, filt, 9);
      const bool ok = simd ? panto::png_unfilter_row(c.f, row, prev, 9, 3)
                           : panto::png_unfilter_row_scalar(c.f, row, prev, 9, 3);
      PANTO_CHECK(ok);
      for (int i = 0; i < 9; i++) PANTO_CHECK_EQ(int(row[i]), int(c.want[i]));
    }
  }
  uint8_t row[3] = {1, 2, 3};
  PANTO_CHECK(!panto::png_unfilter_row(5, row, prev, 3, 3));
  PANTO_CHECK(!panto::png_unfilter_row_scalar(5, row, prev, 3, 3));
  PANTO_CHECK(row[0] == 1 && row[1] == 2 && row[2] == 3);
}
