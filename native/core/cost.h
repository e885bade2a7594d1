// Header-derived cost estimates: how many bytes a call may allocate, per format and decoder path, computed before any
// pixel allocation. The estimate is the call's allocation budget (a decoder that needs more fails with
// ERR_MEDIA_TOO_LARGE) and the size of its reservation from the process-wide pool (budget.h), so it must be an upper
// bound of what a well-formed file of that header needs — and no more, or parallel calls queue for nothing.
#pragma once

#include <cstddef>
#include <cstdint>

#include "media-core.h"

namespace panto {

/** Bytes the first-frame decode of `info` allocates at its peak (decoder intermediates + the decoded pixels), for
 *  the decode_image call with the same `jpeg_eighths` (a JPEG decoded at jpeg_eighths/8 of its size, jpeg-decode.h)
 *  and `png_shrink` (png-decode.h). */
uint64_t estimate_decode_bytes(const uint8_t* d, size_t len, const MediaInfo& info, int jpeg_eighths = 8,
                               uint32_t png_shrink = 1);

/**
 * Bytes a whole `process` call may allocate: the decode, plus resize/orient/encode of a `tw` x `th` result (the
 * byte-cap ladder included), plus a fixed allowance for codec tables and scratch. A PNG that process() decodes and
 * resizes row by row (png_stream_resizes, png-resize-stream.h) counts the row decoder, its ring and stbir's buffers
 * in place of the decoded image (which never exists on that path).
 */
uint64_t estimate_process_bytes(const uint8_t* d, size_t len, const MediaInfo& info, int jpeg_eighths, uint32_t tw,
                                uint32_t th, uint32_t png_shrink = 1);

}  // namespace panto
