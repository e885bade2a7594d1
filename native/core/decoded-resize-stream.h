// Resizing a decoded image that exists whole (stb's GIF canvas) through the generic row stream (row-resize-stream.h),
// giving its pages back as its rows are consumed: the decoded image and the resized one are never both resident in
// full. The bytes are the same as [drop_alpha] -> resize_pixels (pinned by native/tests/test-jpeg-stream.cpp's GIF
// cases and test/media/jpeg-stream.test.ts).
#pragma once

#include <cstdint>

#include "internal.h"

namespace panto {

/**
 * Resizes `px` (3 or 4 channels; with `drop_alpha` a 4-channel image is resized as its RGB, as drop_alpha() would
 * leave it) to sw x sh (sw >= kStreamMinWidth) into `out` (budget memory), and releases `px`: its whole pages are
 * returned to the system (Linux: MADV_DONTNEED) as soon as their rows are copied into the stream's ring, and the
 * block is freed at the end, whatever the outcome. Errors: row_resize_stream's (ERR_MEDIA_TOO_LARGE, ERR_ABORTED
 * polled every 16 rows), typed `type`.
 */
Status decoded_resize_stream(Pixels* px, bool drop_alpha, uint32_t sw, uint32_t sh, MediaType type, Pixels* out);

/** True when process() resizes a decoded GIF of `w` x `h` to sw x sh this way: the internal switch is on, the size
 *  changes and sw >= kStreamMinWidth. */
bool gif_stream_resizes(uint32_t w, uint32_t h, uint32_t sw, uint32_t sh);

/** Internal switch (default on, off when PANTO_GIF_STREAMING=0 at first use) for tests that compare this path with
 *  drop_alpha -> resize_pixels; returns the previous setting. Process-wide; not part of the API. */
bool set_gif_streaming(bool allowed);

}  // namespace panto
