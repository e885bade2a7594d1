// Streaming PNG decode -> resize: the rows of PngRowReader (png-decode.h) are the producer of the generic row stream
// (row-resize-stream.h: a decoder helper thread, a ring of rows, stb_image_resize2 pulling them), so neither the
// decoded image nor (with a PngRowEncoder sink) the raw resized image ever exists as a whole. This file keeps what is
// PNG's own: the plan check, and the opaque-RGB resize of an RGBA image that restarts as RGBA at its first
// transparent row. The bytes are the same as decode_png -> [drop_alpha] -> resize_pixels (pinned by
// native/tests/test-png-stream.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "internal.h"
#include "row-resize-stream.h"

namespace panto {

/**
 * Decodes `d` (a PNG whose png_plan(d, len, info, shrink, true) is Streaming) shrunk by `shrink` on load, and resizes
 * it to tw x th (Mitchell, clamped edges: resize_pixels' filter) into `sink`.
 *
 * `opaque_rgb` (only meaningful when the plan has 4 channels): the rows are resized as RGB while every decoded row is
 * opaque, which is what drop_alpha before resize_pixels gives; at the first row with an alpha below 255 the call
 * stops at once and returns Ok with `*transparent` set (the rows already sent are to be discarded: call again with
 * `opaque_rgb` false). `*channels` is set before the first row reaches the sink: 3, or 4 for a 4-channel plan without
 * `opaque_rgb`. `begin(channels)` is called once before any row (the sink's setup; a non-Ok status stops the call).
 *
 * Errors: those of PngRowReader (ERR_CORRUPT_MEDIA, ERR_MEDIA_TOO_LARGE, ERR_ABORTED — polled every 16 decoded rows,
 * and the resize stops at the next row it asks for), ERR_MEDIA_TOO_LARGE when stbir's buffers exceed the budget.
 * Exceptions thrown by the sink propagate (the helper thread is joined first); none escapes the helper thread.
 * Memory (budget): the reader's (cost.cpp), the ring (kStreamRingRows rows) and stbir's samplers and row buffers.
 */
Status png_resize_stream(const uint8_t* d, size_t len, const MediaInfo& info, uint32_t shrink, uint32_t tw,
                         uint32_t th, bool opaque_rgb, const std::function<Status(int channels)>& begin,
                         const ResizedRowSink& sink, bool* transparent);

/**
 * True when process() takes this path for a PNG going to sw x sh (stored orientation) with shrink-on-load `shrink`:
 * png-decode.cpp handles the layout (not stb's) and the decoded size still needs a resize. The same answer for the
 * cost estimate (cost.cpp) and the pipeline (process.cpp), from the header alone.
 */
bool png_stream_resizes(const uint8_t* d, size_t len, const MediaInfo& info, uint32_t shrink, uint32_t sw,
                        uint32_t sh);

/** Internal switch (default on) for tests that compare the streaming path with the whole-image one (decode_png ->
 *  drop_alpha -> resize_pixels -> encode_png); returns the previous setting. Process-wide; not part of the API. */
bool set_png_streaming(bool allowed);

/** Bytes png_resize_stream allocates besides the sink's and the reader's: the ring and stbir's buffers (bounded). */
uint64_t png_resize_stream_bytes(uint32_t out_w, uint32_t tw, int channels);

}  // namespace panto
