// The PNG encoder's row interface (png-encode.cpp): rows arrive one at a time, top to bottom, and are filtered straight
// into the IDAT data, so the raw image never needs to exist as a whole (the streaming resize's sink,
// png-resize-stream.h). encode_png (internal.h) and this class give the same bytes for the same pixels: the same
// per-row filter choice, the same single libdeflate stream at the same level.
#pragma once

#include <cstddef>
#include <cstdint>

#include "internal.h"

namespace panto {

/**
 * The encoder's row filter: writes the filter type byte then the filtered row of `n` bytes to `dst` (n + 1 bytes);
 * `prev` is the previous raw row (zeros for the first), `bpp` the bytes per pixel (1..8). The type is the one with the
 * minimum sum of absolute signed residuals among None/Sub/Up/Paeth (libpng's heuristic). png_filter_row uses SSE2
 * where the build has it; png_filter_row_scalar is the portable reference it must match byte for byte.
 */
void png_filter_row(const uint8_t* row, const uint8_t* prev, size_t n, int bpp, uint8_t* dst);
void png_filter_row_scalar(const uint8_t* row, const uint8_t* prev, size_t n, int bpp, uint8_t* dst);

/**
 * Usage: begin(w, h, c); put_row() exactly h times; finish(&png). If the PNG is not wanted (over the byte cap), the
 * raw pixels are recovered exactly by take_pixels() (unfiltered in place: no second buffer).
 *
 * Memory (budget): the filtered rows ((w * c + 1) * h bytes) and one raw row, from begin() until the encoder is
 * destroyed or take_pixels(); finish() adds libdeflate's compressor and the worst-case output buffer, shrunk to fit.
 * Errors: ERR_MEDIA_TOO_LARGE (budget, or the compressed stream over 2 GiB), ERR_ABORTED (finish() checks the flag
 * before and after compressing), ERR_INTERNAL (put_row called a wrong number of times).
 */
class PngRowEncoder {
 public:
  Status begin(uint32_t w, uint32_t h, int channels);
  /** Filters the next row (w * channels bytes; not kept). Calls beyond the h-th are ignored and fail finish(). */
  void put_row(const uint8_t* row);
  /** Compresses the h filtered rows into a complete PNG in `out`; the filtered rows stay for take_pixels(). */
  Status finish(OwnedBytes* out);
  /** Unfilters the rows in place into `px` (w x h x channels), after finish() or instead of it. */
  Status take_pixels(Pixels* px);

 private:
  uint32_t w_ = 0, h_ = 0, y_ = 0;
  int c_ = 0;
  bool overflow_ = false;
  OwnedBytes filtered_, prev_;
};

}  // namespace panto
