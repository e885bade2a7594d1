// JPEG encode through libjpeg-turbo, row by row (the whole-image encode_jpeg of internal.h is built on it): baseline,
// 4:2:0, ISLOW DCT (bit-exact between the SIMD and C builds), optimised Huffman tables (as sharp's default). The
// same rows give the same bytes whether they come one at a time (a streamed resize's sink) or 16 at a time.
#pragma once

#include <cstddef>
#include <cstdint>

#include "internal.h"

namespace panto {

struct EncodeJob;

/**
 * begin() starts the compressor for a w x h image of `channels` (3 RGB, or 4 RGBX: the fourth byte is ignored) at
 * `quality` (clamped to 1..100); put_rows() takes the rows top to bottom (not kept: libjpeg's optimised-Huffman pass
 * keeps the image's DCT coefficients, 128 bytes per 8x8 block, until finish()); finish() writes the file into `out`.
 * After any error the encoder is spent: later put_rows() do nothing and finish() returns the first error
 * (ERR_MEDIA_TOO_LARGE when the budget refused memory, ERR_ABORTED from abort(), ERR_INTERNAL for a libjpeg error or
 * a wrong number of rows). Memory: libjpeg's and the output (budget; the output's unwritten tail is not resident).
 * One thread at a time.
 */
class JpegRowEncoder {
 public:
  JpegRowEncoder() = default;
  ~JpegRowEncoder();
  JpegRowEncoder(const JpegRowEncoder&) = delete;
  JpegRowEncoder& operator=(const JpegRowEncoder&) = delete;

  Status begin(uint32_t w, uint32_t h, int channels, int quality);
  /** The next `n` rows (n <= 16; w * channels bytes each). */
  void put_rows(const uint8_t* const* rows, uint32_t n);
  /**
   * begin() for planar YCbCr 4:2:0 input (libjpeg's raw data: no colour conversion, no downsampling); rows then come
   * through put_planes, 16 luma rows and 8 rows of each chroma plane per call, each row padded to whole 16-pixel
   * MCUs (luma: a multiple of 16 samples, chroma: of 8), the last call's rows past the image repeating its last row.
   */
  Status begin_planar(uint32_t w, uint32_t h, int quality);
  void put_planes(const uint8_t* const* y, const uint8_t* const* cb, const uint8_t* const* cr);
  /** Stops the encoder: finish() then returns ERR_ABORTED. */
  void abort();
  Status finish(OwnedBytes* out);

 private:
  void fail_from_job();
  EncodeJob* job_ = nullptr;
  bool planar_ = false;
  uint32_t h_ = 0, y_ = 0;
  Status failed_;
};

}  // namespace panto
