// Per-format cost estimates (see cost.h). Each formula mirrors what the decoder (decode.cpp / stb, jpeg-decode.cpp /
// libjpeg-turbo, libwebp) actually allocates.
#include "cost.h"

#include <algorithm>

#include "internal.h"
#include "jpeg-decode.h"
#include "jpeg-planar.h"
#include "jpeg-resize-stream.h"
#include "png-decode.h"
#include "png-encode.h"
#include "png-resize-stream.h"

namespace panto {
namespace {

constexpr uint64_t kFixedAllowance = 48ull << 20;  // codec tables, stbir scratch, encoder state, small buffers

/** PngRowReader (png-decode.h): two filtered rows, the converted line, the block sums when shrinking, zlib's state and
 *  32 KiB window (64 KiB allowed). */
uint64_t png_reader_bytes(const PngPlan& plan, uint64_t w) {
  return 2 * (plan.rowbytes + 1) + w * 4 + uint64_t(plan.out_w) * 16 + (64u << 10);
}

uint64_t png_bytes(const uint8_t* d, size_t len, const MediaInfo& info, uint32_t shrink) {
  const uint64_t w = info.width, h = info.height, P = w * h;
  if (len < 29) return P * 8;
  // png-decode.cpp's own paths (the plan is made from the same header, so the estimate follows the path taken).
  const PngPlan plan = png_plan(d, len, info, shrink);
  const uint64_t out_px = uint64_t(plan.out_w) * plan.out_h * plan.channels;
  // Whole buffer: the exact filtered buffer (it becomes the pixels) + the joined IDAT data (<= the file).
  if (plan.path == PngPath::WholeBuffer) return plan.raw_bytes + len;
  // Streaming: the (shrunk) pixels + PngRowReader's own.
  if (plan.path == PngPath::Streaming) return out_px + png_reader_bytes(plan, info.width);
  const unsigned depth = d[24], ct = d[25], interlace = d[28];
  const unsigned n = ct == 0 ? 1 : ct == 2 ? 3 : ct == 3 ? 1 : ct == 4 ? 2 : 4;
  const uint64_t rowbytes = (w * n * depth + 7) / 8;
  // Filtered data: one filter byte per row (per pass and rounded per pass when interlaced: at most 4 more per row).
  const uint64_t raw = interlace ? rowbytes * h + 4 * h + 64 : (rowbytes + 1) * h;
  const unsigned req = info.has_alpha ? 4 : 3;
  // stb: inflate (raw) -> unfilter into out (img_out_n channels at the file's depth) -> palette expand -> 16->8 ->
  // channel conversion; each step frees its input after allocating its output.
  const uint64_t bd = depth == 16 ? 2 : 1;
  const bool palette = ct == 3;
  const bool trans = info.has_alpha && (ct == 0 || ct == 2 || ct == 3);
  const uint64_t out_n = palette ? 1 : n + (trans ? 1 : 0);
  const uint64_t pal_n = trans ? 4 : 3;
  const uint64_t final_n = palette ? pal_n : out_n;
  const uint64_t a = raw + P * out_n * bd + (palette ? P * pal_n : 0);
  const uint64_t b = P * final_n * bd + P * final_n;
  const uint64_t c = P * final_n + P * req;
  return std::max({a, b, c});
}

/** libjpeg-turbo's own memory (jpeg-decode.cpp) at any output scale: a progressive or multi-scan file keeps every
 *  coefficient of the full-size image (64 JCOEFs of 2 bytes per MCU-padded block); a single interleaved scan needs
 *  only one MCU row. Plus the row buffers of the main/upsampling/colour stages (a few rows of the padded full width
 *  per component; bounded generously here). 0 components = the walk failed. */
uint64_t jpeg_reader_bytes(const uint8_t* d, size_t len, JpegLayout* l) {
  if (!jpeg_walk(d, len, false, l).ok() || l->components == 0) return 0;
  const uint64_t blocks = jpeg_total_blocks(*l);
  const bool one_scan = !l->progressive && l->first_sos + 4 < len && d[l->first_sos + 4] == l->components;
  const uint64_t coefs = one_scan ? 0 : blocks * 128;
  const uint64_t rows = (uint64_t(l->width) + 64) * 64 * uint64_t(l->components) * 3;
  return coefs + rows;
}

uint64_t jpeg_bytes(const uint8_t* d, size_t len, const MediaInfo& info, int eighths) {
  const uint64_t P = uint64_t(info.width) * info.height;
  JpegLayout l;
  const uint64_t reader = jpeg_reader_bytes(d, len, &l);
  if (reader == 0) return P * 12;
  // Plus the scaled output (4 bytes per pixel for CMYK/YCCK, converted in place).
  const uint64_t out = uint64_t(jpeg_scaled_dim(info.width, eighths)) * jpeg_scaled_dim(info.height, eighths) *
                       (l.components == 4 ? 4 : 3);
  return reader + out;
}

}  // namespace

uint64_t estimate_decode_bytes(const uint8_t* d, size_t len, const MediaInfo& info, int jpeg_eighths,
                               uint32_t png_shrink) {
  const uint64_t P = uint64_t(info.width) * info.height;
  switch (info.type) {
    case MediaType::Png: return png_bytes(d, len, info, png_shrink);
    case MediaType::Jpeg: return jpeg_bytes(d, len, info, jpeg_eighths);
    // stb's first frame: the RGBA canvas and the per-pixel history when it has a background colour (no background
    // buffer before a second frame: cdeps/patches/stb/0008, 0009), plus the LZW tables.
    case MediaType::Gif: return P * 5 + (64u << 10);
    case MediaType::Bmp: return P * 8;                // decoded, then channel conversion
    case MediaType::Webp: return P * (info.has_alpha || info.frames > 1 || info.animated ? 4 : 3);  // decoded in place
    default: return 0;
  }
}

uint64_t estimate_process_bytes(const uint8_t* d, size_t len, const MediaInfo& info, int jpeg_eighths, uint32_t tw,
                                uint32_t th, uint32_t png_shrink) {
  // A PNG decoded and resized row by row (png-resize-stream.h) holds no decoded image: the reader, the ring of rows
  // and stbir's buffers. Its resized pixels are the "resized" of the output term below; streamed into the PNG encoder
  // (png-encode.h) they are instead two chunks of filtered rows plus a row each (one filling while the other is
  // compressed; counted here) and the output, and only when the byte cap needs the pixels back, the filtered image
  // (the resized pixels plus one byte per row, counted here) next to the PNG.
  const bool swap = info.orientation >= 5;
  const uint32_t sw = swap ? th : tw, sh = swap ? tw : th;
  uint64_t decode;
  if (info.type == MediaType::Png && png_stream_resizes(d, len, info, png_shrink, sw, sh)) {
    const PngPlan plan = png_plan(d, len, info, png_shrink, true);
    decode = png_reader_bytes(plan, info.width) + png_resize_stream_bytes(plan.out_w, sw, plan.channels) +
             uint64_t(sh) + 2 * (kPngDeflateChunk + uint64_t(sw) * 4 + 1);
  } else if (info.type == MediaType::Jpeg && jpeg_stream_resizes(info, jpeg_eighths, sw, sh)) {
    // A JPEG decoded and resized row by row (jpeg-resize-stream.h): libjpeg's own memory, the ring and stbir's.
    JpegLayout l;
    const uint64_t reader = jpeg_reader_bytes(d, len, &l);
    // Planar YCbCr (jpeg-planar.h) when it applies: its planes instead of the ring (whichever is larger: a file
    // that is not YCbCr falls back to the ring).
    decode = reader == 0 ? estimate_decode_bytes(d, len, info, jpeg_eighths, png_shrink)
                         : reader + std::max(jpeg_resize_stream_bytes(jpeg_scaled_dim(info.width, jpeg_eighths), sw),
                                             jpeg_planar_applies(info, jpeg_eighths, sw, sh)
                                                 ? jpeg_planar_bytes(info, jpeg_eighths, sw, sh)
                                                 : 0);
  } else {
    decode = estimate_decode_bytes(d, len, info, jpeg_eighths, png_shrink);
  }
  // The decoded image stays alive while it is resized; then resized + oriented + the encoder's growing output and
  // the ladder's next attempt (each <= 4 bytes per output pixel, doubled for growth), plus libjpeg's full-image
  // coefficient buffer when encoding JPEG with optimised Huffman tables (2 passes: 128 bytes per 8x8 block, 4:2:0 =
  // 3 bytes per pixel; counted as 4).
  const uint64_t out = uint64_t(tw) * th * 4;
  const uint64_t total = decode + out * 7 + kFixedAllowance;
  return total + total / 8;
}

}  // namespace panto
