// JPEG decode through libjpeg-turbo with DCT-domain scaling (shrink-on-load): a JPEG whose target is smaller than the
// image is decoded straight at M/8 of its size (M = 1..8), the smallest scale still at least the target in both
// dimensions; the resize step then makes the exact target from there.
#pragma once

#include <cstddef>
#include <cstdint>

#include "internal.h"

namespace panto {

/** Side of a `dim`-pixel JPEG decoded at `eighths`/8 (libjpeg's rounding: ceil(dim * eighths / 8)). */
inline uint32_t jpeg_scaled_dim(uint32_t dim, int eighths) { return uint32_t((uint64_t(dim) * eighths + 7) / 8); }

/**
 * The smallest scale in eighths (1..8) at which a `w` x `h` JPEG decodes to at least `min_w` x `min_h`; 8 (full size)
 * when the target is not smaller or is 0.
 */
int jpeg_scale_eighths(uint32_t w, uint32_t h, uint32_t min_w, uint32_t min_h);

/**
 * Decodes JPEG `d` (already probed into `info` and walked by check_structure: the scan limits hold) to RGB at
 * `eighths`/8 of its size into `out` (memory from the active budget). Grayscale is expanded to RGB; CMYK and YCCK
 * (Adobe, inverted) are converted to RGB. Polls should_abort() between rows and scans, and refuses more than 256
 * scans on its own too. Errors: ERR_CORRUPT_MEDIA (libjpeg's reason; also for corrupt-data warnings such as a bad
 * Huffman code or a lost restart marker, which libjpeg would paper over with grey), ERR_UNSUPPORTED_MEDIA (e.g.
 * 12-bit), ERR_MEDIA_TOO_LARGE (the budget refused an allocation), ERR_ABORTED.
 */
Status decode_jpeg(const uint8_t* d, size_t len, const MediaInfo& info, int eighths, Pixels* out);

}  // namespace panto
