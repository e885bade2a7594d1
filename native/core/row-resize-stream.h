// Streaming decode -> resize over any row decoder: the rows of a RowProducer feed stb_image_resize2 through its input
// callback and the resized rows leave through its output callback, so the decoded image never exists as a whole (and,
// with a sink that encodes, neither does the resized one). On builds with threads the producer runs on a helper thread
// that fills a small ring of rows while the caller's thread resizes (a two-stage pipeline in place of the row-split
// parts of resize_pixels); when no thread can start (WebAssembly, one core, set_parts_concurrency off, thread creation
// failing) the resize pulls each row from the producer itself. The bytes are the same either way and the same as
// decoding the whole image and calling resize_pixels (pinned by native/tests/test-png-stream.cpp and
// test-jpeg-stream.cpp). Users: png-resize-stream.cpp (PngRowReader) and jpeg-decode.cpp (libjpeg-turbo scanlines).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "internal.h"

namespace panto {

/** Rows in the decoder -> resize ring (each in_w * channels bytes), fewer for shorter images. */
constexpr uint32_t kStreamRingRows = 64;

/**
 * Narrowest target (pixels) the streaming resize takes. With an output callback stbir converts each row from floats
 * to bytes in place, and its vector loop re-reads the row's last floats after the bytes of the first block have
 * overwritten the start of the row when the row is 9 bytes (4-wide vectors) or 17-19 bytes (8-wide): measured, a
 * 3-pixel RGB row differs from the buffered resize. From 8 pixels (24 bytes) on, the re-read floats are never
 * overwritten; narrower targets take the whole-image path (their memory is negligible anyway).
 */
constexpr uint32_t kStreamMinWidth = 8;

/** Receives the resized rows, in order (y = 0 .. th - 1), each tw * channels bytes; the pointer is valid for the call. */
using ResizedRowSink = std::function<void(const uint8_t* row, uint32_t y)>;

/**
 * A decoder that yields the rows of one image in order, top to bottom. Called from one thread at a time (the helper
 * thread, or the caller's when sequential), with the caller's budget active (BudgetScope) on that thread.
 */
class RowProducer {
 public:
  virtual ~RowProducer() = default;
  /** Writes the next row (the stream's row_bytes) into `dst`. A non-Ok status stops the stream; it is what
   *  row_resize_stream returns (a producer may stop for its own reasons, e.g. PNG's first transparent row, and tell
   *  its caller through its own state, which is visible after row_resize_stream returns). */
  virtual Status next_row(uint8_t* dst) = 0;
  /** After the last row: checks the rest of the stream (trailers, checksums). Called only after every row. */
  virtual Status finish() = 0;
};

/**
 * Resizes the in_w x in_h image of `producer` (`channels` = 3 or 4, 8-bit) to tw x th (Mitchell, clamped edges:
 * resize_pixels' filter; tw >= kStreamMinWidth) into `sink`. Every row of the producer is decoded, and finish()
 * called, even those the resize does not need, so a damaged tail fails as it does for a whole-image decode.
 *
 * Errors: the producer's (its first non-Ok status; its ERR_ABORTED stops the resize at the next row it asks for),
 * ERR_MEDIA_TOO_LARGE (typed `type`) when the ring or stbir's buffers exceed the budget, ERR_INTERNAL if stbir asks
 * for rows out of order. Exceptions thrown by the producer or the sink propagate (the helper thread is joined first);
 * none escapes the helper thread. Memory (budget): the ring (kStreamRingRows rows) and stbir's samplers and buffers
 * (row_resize_stream_bytes).
 */
Status row_resize_stream(RowProducer* producer, uint32_t in_w, uint32_t in_h, int channels, uint32_t tw, uint32_t th,
                         const ResizedRowSink& sink, MediaType type);

/** Bytes row_resize_stream allocates besides the sink's and the producer's: the ring and stbir's buffers (bounded). */
uint64_t row_resize_stream_bytes(uint32_t in_w, uint32_t tw, int channels);

}  // namespace panto
