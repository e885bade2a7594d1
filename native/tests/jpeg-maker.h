// Test JPEGs made with libjpeg-turbo (shared by test-jpeg-stream.cpp and test-jpeg-planar.cpp): size, components,
// sampling, progressive coding, restart markers, YCCK, an EXIF orientation; and the set of layouts both suites sweep.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

extern "C" {
#include <jpeglib.h>
}

#include "budget.h"
#include "test-util.h"

namespace panto_test {

/** A JPEG to make: size, components (1 grey, 3 YCbCr, 4 CMYK or YCCK), sampling, coding. */
struct JSpec {
  const char* name;
  uint32_t w, h;
  int comps = 3;
  int hs = 2, vs = 2;  // luma sampling factors (3 components): 2x2 = 4:2:0, 2x1 = 4:2:2, 1x1 = 4:4:4
  bool progressive = false;
  int restart_rows = 0;  // > 0: a restart marker every that many MCU rows
  bool ycck = false;     // 4 components stored as YCCK (Adobe transform 2) rather than CMYK
  int orientation = 1;   // > 1: an EXIF APP1 with this orientation
  int quality = 88;
  int restart_mcus = 0;  // > 0: a restart marker every that many MCUs
  int noise = 4;         // +-noise on every sample (large values: large AC coefficients)
};

/** An EXIF APP1 payload (little-endian TIFF) holding only the orientation tag. */
inline std::vector<uint8_t> exif_orientation(int o) {
  return {'E', 'x', 'i', 'f', 0, 0, 'I', 'I', 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0,
          uint8_t(o), 0, 0, 0, 0, 0, 0, 0};
}

/** Encodes `s` with libjpeg-turbo: smooth gradients, a sharp edge and noise, so scaling and resizing matter. */
inline std::vector<uint8_t> make_jpeg(const JSpec& s) {
  panto::Budget budget(1ull << 30);
  panto::BudgetScope scope(&budget);
  jpeg_compress_struct c;
  jpeg_error_mgr err;
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  unsigned char* mem = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&c, &mem, &size);
  c.image_width = s.w;
  c.image_height = s.h;
  c.input_components = s.comps;
  c.in_color_space = s.comps == 1 ? JCS_GRAYSCALE : s.comps == 3 ? JCS_RGB : JCS_CMYK;
  jpeg_set_defaults(&c);
  if (s.comps == 4) jpeg_set_colorspace(&c, s.ycck ? JCS_YCCK : JCS_CMYK);
  if (s.comps == 3) {
    c.comp_info[0].h_samp_factor = s.hs;
    c.comp_info[0].v_samp_factor = s.vs;
  }
  jpeg_set_quality(&c, s.quality, TRUE);
  if (s.progressive) jpeg_simple_progression(&c);
  if (s.restart_rows > 0) c.restart_in_rows = s.restart_rows;
  if (s.restart_mcus > 0) c.restart_interval = unsigned(s.restart_mcus);
  jpeg_start_compress(&c, TRUE);
  if (s.orientation > 1) {
    const auto app1 = exif_orientation(s.orientation);
    jpeg_write_marker(&c, JPEG_APP0 + 1, app1.data(), unsigned(app1.size()));
  }
  std::vector<uint8_t> row(size_t(s.w) * s.comps);
  Prng r(s.w * 31u + s.h);
  while (c.next_scanline < s.h) {
    const uint32_t y = c.next_scanline;
    for (uint32_t x = 0; x < s.w; x++)
      for (int k = 0; k < s.comps; k++) {
        int v = int((x * (k + 2) * 255) / (s.w + 1) + (y * (3 - k % 3) * 255) / (s.h + 1)) / 2;
        if (x > s.w / 3 && x < s.w / 3 + 9) v = 255 - v;  // a vertical bar: ringing for the resize
        v += int(r.next() % unsigned(2 * s.noise + 1)) - s.noise;
        row[size_t(x) * s.comps + k] = uint8_t(v < 0 ? 0 : v > 255 ? 255 : v);
      }
    JSAMPROW rp = row.data();
    jpeg_write_scanlines(&c, &rp, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  std::vector<uint8_t> out(mem, mem + size);
  std::free(mem);
  return out;
}


inline std::vector<JSpec> layouts() {
  std::vector<JSpec> v;
  v.push_back({"baseline-420", 641, 479});
  v.push_back({"baseline-444", 500, 333, 3, 1, 1});
  v.push_back({"baseline-422", 503, 301, 3, 2, 1});
  v.push_back({"progressive-420", 613, 411, 3, 2, 2, true});
  v.push_back({"progressive-444-odd", 401, 299, 3, 1, 1, true});
  v.push_back({"restart-markers", 577, 389, 3, 2, 2, false, 2});
  v.push_back({"grey", 457, 311, 1});
  v.push_back({"grey-progressive", 389, 457, 1, 1, 1, true});
  v.push_back({"cmyk", 419, 307, 4, 1, 1});
  v.push_back({"ycck-progressive", 401, 333, 4, 1, 1, true, 0, true});
  v.push_back({"tall", 67, 1201});
  v.push_back({"wide", 1301, 71});
  return v;
}


}  // namespace panto_test
