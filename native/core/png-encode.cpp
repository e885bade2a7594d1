// PNG encoder: adaptive per-row filter (None/Sub/Up/Paeth by minimum sum of absolute signed residuals, libpng's
// heuristic) + one zlib stream from libdeflate, written straight into the final buffer (no copy of the IDAT data).
//
// Abort: the flag is polled every 64 filtered rows and before and after compression. The compression itself is one
// libdeflate call and cannot be stopped: libdeflate has no streaming interface, and independently compressed pieces
// do not concatenate into one valid zlib stream (each ends with a final block), which PNG requires across its IDAT
// chunks. That step is bounded by the output size, i.e. by the output dimension cap (max_dimension^2 pixels).
#include <libdeflate.h>

#include <cstdlib>
#include <cstring>

#include "budget.h"
#include "codec-handles.h"
#include "internal.h"

namespace panto {
namespace {

constexpr int kDeflateLevel = 5;

/** Sum of |residual| with residuals read as signed bytes (libpng's filter heuristic). */
inline uint32_t cost_sum(const uint8_t* __restrict r, size_t n) {
  uint32_t s = 0;
  for (size_t i = 0; i < n; i++) s += uint32_t(std::abs(int(int8_t(r[i]))));
  return s;
}

/**
 * Writes the filtered `row` (filter byte first) into `dst`; `prev` is the previous raw row (zeros for the first).
 * `scratch` holds 3 rows. Loops are branch-free past the first pixel so the compiler vectorises them.
 */
void filter_row(const uint8_t* __restrict row, const uint8_t* __restrict prev, size_t n, int bpp,
                uint8_t* __restrict dst, uint8_t* __restrict scratch) {
  uint8_t* __restrict sub = scratch;
  uint8_t* __restrict up = scratch + n;
  uint8_t* __restrict pae = scratch + 2 * n;
  const size_t k = size_t(bpp) < n ? size_t(bpp) : n;
  for (size_t i = 0; i < k; i++) {
    sub[i] = row[i];
    up[i] = uint8_t(row[i] - prev[i]);
    pae[i] = uint8_t(row[i] - prev[i]);  // Paeth with a = c = 0 predicts b
  }
  for (size_t i = k; i < n; i++) {
    const int a = row[i - bpp], b = prev[i], c = prev[i - bpp];
    sub[i] = uint8_t(row[i] - a);
    up[i] = uint8_t(row[i] - b);
    const int pa = std::abs(b - c), pb = std::abs(a - c), pc = std::abs(a + b - 2 * c);
    const int pred = (pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c);
    pae[i] = uint8_t(row[i] - pred);
  }
  const uint32_t s_none = cost_sum(row, n), s_sub = cost_sum(sub, n), s_up = cost_sum(up, n),
                 s_paeth = cost_sum(pae, n);
  uint8_t f = 0;
  const uint8_t* best_row = row;
  uint32_t best = s_none;
  if (s_sub < best) best = s_sub, f = 1, best_row = sub;
  if (s_up < best) best = s_up, f = 2, best_row = up;
  if (s_paeth < best) best = s_paeth, f = 4, best_row = pae;
  dst[0] = f;
  std::memcpy(dst + 1, best_row, n);
}

void put32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v >> 24);
  p[1] = uint8_t(v >> 16);
  p[2] = uint8_t(v >> 8);
  p[3] = uint8_t(v);
}

Status aborted() { return Status::Err("ERR_ABORTED", "processing was aborted", MediaType::Png); }

}  // namespace

Status encode_png(const PixelView& px, OwnedBytes* out) {
  const int bpp = px.channels;
  const size_t n = size_t(px.width) * bpp;
  const size_t filtered_size = (n + 1) * px.height;
  OwnedBytes filtered, scratch;
  if (!alloc_owned(filtered_size, &filtered) || !alloc_owned(4 * n, &scratch))
    return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory budget while encoding PNG");
  uint8_t* zero = scratch.data + 3 * n;
  std::memset(zero, 0, n);
  for (uint32_t y = 0; y < px.height; y++) {
    if ((y & 63) == 0 && should_abort()) return aborted();
    const uint8_t* row = px.data + size_t(y) * n;
    const uint8_t* prev = y ? row - n : zero;
    filter_row(row, prev, n, bpp, filtered.data + size_t(y) * (n + 1), scratch.data);
  }
  scratch.reset();
  if (should_abort()) return aborted();
  DeflateCompressor c(libdeflate_alloc_compressor(kDeflateLevel));
  if (!c) return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory while encoding PNG");
  const size_t bound = libdeflate_zlib_compress_bound(c.get(), filtered_size);
  constexpr size_t kHead = 8 + 25 + 8;  // signature, IHDR chunk, IDAT length + type
  constexpr size_t kTail = 4 + 12;      // IDAT CRC, IEND chunk
  if (!alloc_owned(kHead + bound + kTail, out))
    return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory budget while encoding PNG");
  uint8_t* p = out->data;
  const size_t z = libdeflate_zlib_compress(c.get(), filtered.data, filtered_size, p + kHead, bound);
  c.reset();
  filtered.reset();
  if (should_abort()) {
    out->reset();
    return aborted();
  }
  if (z == 0 || z > 0x7FFFFFFF) {
    out->reset();
    return Status::Err("ERR_MEDIA_TOO_LARGE", "PNG encoding failed");
  }
  std::memcpy(p, "\x89PNG\r\n\x1a\n", 8);
  put32(p + 8, 13);
  std::memcpy(p + 12, "IHDR", 4);
  put32(p + 16, px.width);
  put32(p + 20, px.height);
  p[24] = 8;                               // bit depth
  p[25] = bpp == 4 ? 6 : bpp == 3 ? 2 : 0;  // colour type: RGBA, RGB, grey
  p[26] = p[27] = p[28] = 0;               // deflate, adaptive filtering, no interlace
  put32(p + 29, libdeflate_crc32(0, p + 12, 17));
  put32(p + 33, uint32_t(z));
  std::memcpy(p + 37, "IDAT", 4);
  uint8_t* t = p + kHead + z;
  put32(t, libdeflate_crc32(0, p + 37, 4 + z));
  put32(t + 4, 0);
  std::memcpy(t + 8, "IEND", 4);
  put32(t + 12, libdeflate_crc32(0, t + 8, 4));
  out->shrink_to(kHead + z + kTail);
  return Status::Ok();
}

}  // namespace panto
