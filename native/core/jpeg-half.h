// JPEG decode at half size (like libjpeg's 1/2 scaled decode): each IDCT block is box-averaged 2x2 into a
// half-resolution plane per component and the YCbCr->RGB conversion runs at half resolution, skipping 3/4 of the
// colour conversion, upsampling and resize work. Used when the target is at most half the stored size.
#pragma once

#include <cstddef>
#include <cstdint>

#include "internal.h"

namespace panto {

/**
 * Decodes JPEG `d` to RGB at ceil(w/2) x ceil(h/2) into `out` (memory from the active budget). Sets `*unsupported`
 * (and returns OK with `out` empty) for layouts this path does not handle (CMYK/YCCK, non-power-of-two sampling): the
 * caller then uses the full-size decoder. Errors: ERR_CORRUPT_MEDIA (the decoder's reason), ERR_MEDIA_TOO_LARGE (out
 * of budget), ERR_ABORTED.
 */
Status decode_jpeg_half(const uint8_t* d, size_t len, const MediaInfo& info, Pixels* out, bool* unsupported);

}  // namespace panto
