// libwebp's decoder functions that cdeps/patches/libwebp adds or replaces must give libwebp's bytes: the decoder's
// output (and native/wasm identity: the wasm build runs libwebp's C code) rests on it.
//   - 0003: the DC-only inverse transform in SSE2 (x86; libwebp runs it in C there): every pixel is
//     clip(pixel + ((in[0] + 4) >> 3)) (RFC 6386 14.4 for a block whose only coefficient is the DC), checked for every
//     int16 DC against every pixel value.
extern "C" {
#include "src/dsp/dsp.h"
}

#include <cstring>
#include <string>

#include "test-util.h"

using namespace panto_test;

PANTO_TEST(webp, dc_only_inverse_transform_gives_the_formula_s_pixels) {
  VP8DspInit();
  uint8_t block[4 * BPS + 8];
  int mismatches = 0;
  for (int dc = -32768; dc <= 32767; dc++) {
    for (int base = 0; base < 256; base += 16) {
      int16_t in[16] = {int16_t(dc)};
      std::memset(block, 0xA5, sizeof(block));
      for (int j = 0; j < 4; j++)
        for (int i = 0; i < 4; i++) block[j * BPS + i] = uint8_t(base + j * 4 + i);
      VP8TransformDC(in, block);
      for (int j = 0; j < 4; j++) {
        for (int i = 0; i < 4; i++) {
          const int v = base + j * 4 + i + ((dc + 4) >> 3);
          if (block[j * BPS + i] != uint8_t(v < 0 ? 0 : v > 255 ? 255 : v)) mismatches++;
        }
        for (int i = 4; i < 8; i++) mismatches += block[j * BPS + i] != 0xA5;  // nothing past the 4 columns
      }
    }
  }
  if (mismatches) record_failure(__FILE__, __LINE__, std::to_string(mismatches) + " pixels differ from the formula");
}
