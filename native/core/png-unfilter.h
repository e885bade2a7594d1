// PNG row unfiltering (the five filter types of PNG 1.2 section 6), with SIMD for 3- and 4-byte pixels.
//
// png_unfilter_row is what the decoder calls: for bpp 3 and 4 the Sub, Average and Paeth filters run one pixel per
// vector step (SSE2 on x86, NEON on arm64, both baseline there, so no runtime check); Up, None, other pixel sizes
// and builds without either (wasm) use the scalar code. Every path gives the same bytes as png_unfilter_row_scalar
// (exact integer arithmetic; pinned by native/tests/test-png-unfilter.cpp on random rows of every filter and bpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace panto {

/**
 * Unfilters one row in place. `cur` holds the row's `n` filtered bytes (without the filter-type byte); `prev` is the
 * previous row already unfiltered, or nullptr for the first row of the image (a row of zeros). `bpp` is the filter
 * unit (bytes per complete pixel, at least 1). The two rows must not overlap. Returns false for a filter type > 4
 * (the row is then untouched).
 */
bool png_unfilter_row(uint8_t filter, uint8_t* cur, const uint8_t* prev, size_t n, size_t bpp);

/** The portable reference png_unfilter_row must match byte for byte (same contract). */
bool png_unfilter_row_scalar(uint8_t filter, uint8_t* cur, const uint8_t* prev, size_t n, size_t bpp);

/** The vector code compiled into png_unfilter_row: "sse2", "neon" or "none". */
const char* png_unfilter_simd();

}  // namespace panto
