// The PNG encoder's row interface (png-encode.cpp): rows arrive one at a time, top to bottom, and are filtered straight
// into the IDAT data, so the raw image never needs to exist as a whole (the streaming resize's sink,
// png-resize-stream.h). encode_png (internal.h) and this class give the same bytes for the same pixels: the same
// per-row filter choice, the same chunks of filtered bytes compressed by libdeflate at the same level.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

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

/** Filtered bytes per libdeflate call (png-encode.cpp): the PNG's zlib stream is these chunks, each compressed on its
 *  own and ended by a sync flush, so the encoder never holds more filtered data than one chunk and a row. */
constexpr size_t kPngDeflateChunk = size_t(512) << 10;

/**
 * Usage: begin(w, h, c); put_row() exactly h times; finish(&png). The rows are filtered into a chunk buffer and each
 * full chunk is compressed (kPngDeflateChunk; the same chunks encode_png makes, so the same bytes), so the filtered
 * image never exists. An image of more than one chunk is compressed on a helper thread (parallel.h's conditions),
 * chunk by chunk in order, while the caller filters the next chunk; without one, inline. If the PNG is not wanted
 * (over the byte cap), take_pixels(png) recovers the raw pixels exactly from it (inflate + unfilter).
 *
 * Memory (budget): from begin() until finish(): one chunk plus a row of filtered bytes (two with the helper), one raw
 * row, libdeflate's compressor and the output buffer (sized by the worst case, sparse: only what is written is
 * resident), which finish() hands over shrunk to fit. take_pixels() allocates the filtered image ((w * c + 1) * h
 * bytes), which becomes the pixels.
 * Errors: ERR_MEDIA_TOO_LARGE (budget, or the compressed stream over 2 GiB), ERR_ABORTED (polled before each chunk;
 * put_row stops compressing and finish() reports it, after the chunk in flight), ERR_INTERNAL (put_row called a wrong
 * number of times). After an error nothing is written to `out`: a partial PNG is never produced. Destroying the
 * encoder before finish() waits for the chunk in flight and ends the helper.
 */
class PngRowEncoder {
 public:
  PngRowEncoder();
  ~PngRowEncoder();
  PngRowEncoder(const PngRowEncoder&) = delete;
  PngRowEncoder& operator=(const PngRowEncoder&) = delete;

  Status begin(uint32_t w, uint32_t h, int channels);
  /** Filters the next row (w * channels bytes; not kept) and compresses each chunk it completes. Calls beyond the
   *  h-th are ignored and fail finish(). */
  void put_row(const uint8_t* row);
  /** Completes the PNG in `out` (after the h-th row, whose chunk was compressed by put_row). */
  Status finish(OwnedBytes* out);
  /** Rebuilds the raw pixels (w x h x channels) from `png`, which finish() made: exact (lossless). */
  Status take_pixels(const OwnedBytes& png, Pixels* px);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace panto
