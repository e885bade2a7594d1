// Streaming JPEG decode -> resize: the scaled rows of JpegRowReader (jpeg-decode.h, libjpeg-turbo at the M/8 scale
// process() chose) are the producer of the generic row stream (row-resize-stream.h), so the decoded image never exists
// as a whole; only the resized one does (the orientation and the byte-cap ladder take it as before) — or, when it
// only becomes a JPEG, not even that: its rows go straight into the encoder. The bytes are the same as
// decode_jpeg -> resize_pixels [-> encode_jpeg] (pinned by native/tests/test-jpeg-stream.cpp and
// test/media/jpeg-stream.test.ts).
#pragma once

#include <cstddef>
#include <cstdint>

#include "internal.h"
#include "row-resize-stream.h"

namespace panto {

/**
 * True when process() takes this path for a JPEG decoded at `eighths`/8 and going to sw x sh (stored orientation):
 * streaming is on, the scaled size still needs a resize, and sw >= kStreamMinWidth. From the header alone; the same
 * answer for the cost estimate (cost.cpp) and the pipeline (process.cpp).
 */
bool jpeg_stream_resizes(const MediaInfo& info, int eighths, uint32_t sw, uint32_t sh);

/**
 * Decodes JPEG `d` (probed into `info`, walked by check_structure) at `eighths`/8 and resizes it to sw x sh RGB into
 * `out` (budget memory). Errors: decode_jpeg's (ERR_CORRUPT_MEDIA, ERR_UNSUPPORTED_MEDIA, ERR_MEDIA_TOO_LARGE,
 * ERR_ABORTED) and row_resize_stream's. Memory (budget): libjpeg's, the CMYK row, the stream's ring and stbir's
 * buffers (jpeg_resize_stream_bytes), and `out`.
 */
Status jpeg_resize_stream(const uint8_t* d, size_t len, const MediaInfo& info, int eighths, uint32_t sw, uint32_t sh,
                          Pixels* out);

/**
 * jpeg_resize_stream with the resized rows going straight into the JPEG encoder (jpeg-encode.h; `quality` as
 * encode_jpeg's): the resized image never exists either. `out` gets the same bytes as encode_jpeg of
 * jpeg_resize_stream's pixels. Errors: jpeg_resize_stream's and the encoder's.
 */
Status jpeg_resize_stream_encode(const uint8_t* d, size_t len, const MediaInfo& info, int eighths, uint32_t sw,
                                 uint32_t sh, int quality, OwnedBytes* out);

/** Bytes jpeg_resize_stream allocates besides libjpeg's and `out`: the CMYK row, the ring and stbir's buffers. */
uint64_t jpeg_resize_stream_bytes(uint32_t scaled_w, uint32_t sw);

/** Internal switch (default on, off when PANTO_JPEG_STREAMING=0 at first use) for tests and benchmarks that compare
 *  the streaming path with the whole-image one; returns the previous setting. Process-wide; not part of the API. */
bool set_jpeg_streaming(bool allowed);

}  // namespace panto
