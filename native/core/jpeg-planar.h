// JPEG -> JPEG without leaving YCbCr: libjpeg-turbo decodes the components as stored (raw data, at the M/8 scale
// process() chose: no chroma upsampling, no colour conversion), each plane is resized on its own (Mitchell, luma to
// the target, chroma to half the target: 4:2:0) and the planes go straight into the encoder's raw-data input (no
// colour conversion, no downsampling). Compared with the RGB stream (jpeg-resize-stream.h) it resizes 1.5 samples per
// output pixel instead of 3 and skips four conversions: measured on real photos, 7-24% fewer instructions per call.
// A pipeline: the decoder writes iMCU rows into a ring of rows per plane on a helper thread while the caller resizes
// the planes in strips of output rows (strip j = stbir split j of each plane, run once the decoder has given the rows
// it reads) into a ring of output rows per plane, and gives each 16-row MCU row to the encoder as it completes.
// Without a thread (WebAssembly, one core, set_parts_concurrency off) the resize reads the iMCU rows it needs itself.
// The bytes are the same either way, and the same as resizing the whole planes after the decode (pinned by
// native/tests/test-jpeg-planar.cpp). Neither the decoded nor the resized planes exist whole: the rings hold about
// two strips of rows.
#pragma once

#include <cstddef>
#include <cstdint>

#include "internal.h"

namespace panto {

/** True when process() tries this path for a JPEG going to sw x sh (stored orientation) as a JPEG with no
 *  orientation to apply, decoded at `eighths`/8 (from the header alone; a file that turns out not to be 3-component
 *  YCbCr falls back to the RGB stream). */
bool jpeg_planar_applies(const MediaInfo& info, int eighths, uint32_t sw, uint32_t sh);

/** Bytes this path allocates besides libjpeg's own and the output: its rings and stbir's buffers, bounded above by
 *  the whole decoded and resized planes. */
uint64_t jpeg_planar_bytes(const MediaInfo& info, int eighths, uint32_t sw, uint32_t sh);

/**
 * Decodes JPEG `d` (probed into `info`, walked by check_structure) at `eighths`/8 as YCbCr planes, resizes them to
 * sw x sh (chroma to ceil(sw/2) x ceil(sh/2)) and encodes them as a baseline 4:2:0 JPEG at `quality` into `out`.
 * Errors: kNotPlanarCode (jpeg-decode.h; the file is not 3-component YCbCr: nothing was decoded), the decoder's
 * (ERR_CORRUPT_MEDIA, ERR_UNSUPPORTED_MEDIA, ERR_MEDIA_TOO_LARGE, ERR_ABORTED) and the encoder's.
 */
Status jpeg_planar_encode(const uint8_t* d, size_t len, const MediaInfo& info, int eighths, uint32_t sw, uint32_t sh,
                          int quality, OwnedBytes* out);

/** Internal switch (default on, off when PANTO_JPEG_PLANAR=0 at first use) for tests and benchmarks that compare this
 *  path with the RGB stream; returns the previous setting. Process-wide; not part of the API. */
bool set_jpeg_planar(bool allowed);

/** Internal switch (default on) for tests: off, the planes are resized in one strip (rings as tall as the planes:
 *  the whole decode, then each plane, then the encode), the reference the strips' bytes are pinned to. Returns the
 *  previous setting. Process-wide; not part of the API. */
bool set_jpeg_planar_strips(bool allowed);

}  // namespace panto
