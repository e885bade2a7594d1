// PNG first-frame decoding without stb for the common layouts, optionally shrinking by an integer factor on load.
//
// Two paths, chosen from the header alone (png_plan), so cost.cpp can estimate exactly what the chosen path allocates:
// - WholeBuffer (8-bit RGB/RGBA, no shrink, filtered data <= kPngWholeBufferMax): libdeflate inflates every IDAT in
//   one call into an exact-size buffer, rows are unfiltered and compacted in place. The fastest path when the image
//   is small enough that holding all of its filtered bytes is cheap.
// - Streaming (every other handled layout, any size, and every shrink): zlib inflates one row at a time straight from
//   the IDAT chunks (never concatenated) into a two-row window; each unfiltered row is converted to 8-bit RGB/RGBA and,
//   with a shrink factor k >= 2, box-averaged into k x k blocks (alpha-weighted), so the full-size image never exists:
//   the decode holds the (w/k) x (h/k) result, two filtered rows and zlib's 32 KiB window.
// Rows are unfiltered by png_unfilter_row (png-unfilter.h: SIMD for 3/4/6/8-byte pixels, same bytes as scalar).
// Handled: not interlaced; grey (8/16-bit, no tRNS), RGB (8/16-bit, no tRNS), palette (1/2/4/8-bit, tRNS allowed;
// indices past PLTE are opaque black, as libpng does), grey+alpha and RGBA (8/16-bit). 16-bit samples keep their high
// byte. Everything else (interlaced, sub-byte grey, grey/RGB with tRNS) is left to stb (`*not_handled`).
//
// Errors (never a fallback to stb once a handled path started, so the cost estimate holds): a zlib stream that is
// damaged, short, or produces more data than the image (stopped as soon as it overruns) and unknown filter types are
// ERR_CORRUPT_MEDIA; a refused budget allocation is ERR_MEDIA_TOO_LARGE; the abort flag (polled between rows) is
// ERR_ABORTED.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "internal.h"

namespace panto {

/**
 * Largest filtered image (bytes) the WholeBuffer path takes; above it the Streaming path bounds memory. Measured on a
 * 2880x1800 RGB screenshot -> 2000 px (no shrink): libdeflate whole-buffer ~15% less CPU for the whole call than zlib
 * streaming, at the price of holding the filtered image (15 MB there); past 64 MiB the memory matters more.
 */
constexpr uint64_t kPngWholeBufferMax = 64ull << 20;
/** Largest shrink-on-load factor (keeps the block sums in 32 bits; the resize does the rest). */
constexpr uint32_t kPngMaxShrink = 64;

enum class PngPath { Stb, WholeBuffer, Streaming };

/** The decode of one PNG header: path, shrink and the sizes the decoder (and cost.cpp) works with. */
struct PngPlan {
  PngPath path = PngPath::Stb;
  uint32_t shrink = 1;            // box factor (Streaming only; 1 = none)
  uint32_t out_w = 0, out_h = 0;  // decoded size: ceil(w / shrink) x ceil(h / shrink)
  int channels = 0;               // of the decoded pixels: 3 (RGB) or 4 (RGBA)
  uint64_t rowbytes = 0;          // bytes of one unfiltered row in the file's layout
  uint64_t raw_bytes = 0;         // all filtered rows: (rowbytes + 1) * h
};

/**
 * The shrink-on-load factor for a w x h image going to a tw x th target (same orientation): floor(min(w/tw, h/th)),
 * capped at kPngMaxShrink; 1 when that is below 2. The shrunk image is never smaller than the target.
 */
uint32_t png_shrink_factor(uint32_t w, uint32_t h, uint32_t tw, uint32_t th);

/**
 * Plans the decode of `d` (a probed PNG) with the requested shrink factor (ignored by the WholeBuffer/Stb paths).
 * With `streaming`, a layout the WholeBuffer path would take is planned Streaming instead (PngRowReader).
 */
PngPlan png_plan(const uint8_t* d, size_t len, const MediaInfo& info, uint32_t shrink, bool streaming = false);

/**
 * The Streaming path as a row source: rows of the decoded image (box-shrunk by plan().shrink), top to bottom, in
 * 8-bit RGB/RGBA (plan().channels), each plan().out_w * channels bytes, so a consumer (the streaming resize,
 * png-resize-stream.h) never needs the whole image. Memory (budget): one block of two filtered rows, one converted
 * row and the box sums, plus zlib's state and window; see cost.cpp. Not thread-safe; one thread at a time.
 *
 * Errors are those of decode_png's Streaming path, in the same order: open() fails with ERR_CORRUPT_MEDIA (no IDAT,
 * palette without PLTE), ERR_MEDIA_TOO_LARGE (budget) or ERR_INTERNAL (a layout png_plan gives to stb: the caller
 * checks the plan first); next_row() with ERR_CORRUPT_MEDIA / ERR_MEDIA_TOO_LARGE / ERR_ABORTED (polled every 16
 * input rows); finish(), called after the last row, with ERR_CORRUPT_MEDIA when the zlib stream does not end exactly
 * there. After an error the reader must not be used again.
 */
class PngRowReader {
 public:
  PngRowReader();
  ~PngRowReader();
  PngRowReader(const PngRowReader&) = delete;
  PngRowReader& operator=(const PngRowReader&) = delete;

  Status open(const uint8_t* d, size_t len, const MediaInfo& info, uint32_t shrink);
  /** The plan (valid after open() returned Ok; path is Streaming). */
  const PngPlan& plan() const;
  /** Writes the next output row to `dst` (plan().out_w * plan().channels bytes). At most plan().out_h calls. */
  Status next_row(uint8_t* dst);
  /** Checks that the zlib stream ends right after the last row. */
  Status finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/**
 * Decodes per png_plan(d, len, info, shrink) into `out` (out->width/height = plan.out_w/out_h). When the plan is Stb,
 * returns Ok with `*not_handled` set and `out` untouched.
 */
Status decode_png(const uint8_t* d, size_t len, const MediaInfo& info, uint32_t shrink, Pixels* out,
                  bool* not_handled);

}  // namespace panto
