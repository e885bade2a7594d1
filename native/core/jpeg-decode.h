// JPEG decode through libjpeg-turbo with DCT-domain scaling (shrink-on-load): a JPEG whose target is smaller than the
// image is decoded straight at 1/8, 2/8 or 4/8 of its size, the smallest of these still at least the target in both
// dimensions; the resize step then makes the exact target from there. (libjpeg-turbo also scales by 3/8, 5/8, 6/8
// and 7/8, but only its 1x1, 2x2, 4x4 and 8x8 inverse DCTs have SIMD code: a 7/8 decode of a 4:2:0 photo runs a C
// 7x7 IDCT on luma and a C 14x14 one on chroma, and measured 27% more instructions per call than decoding at full size
// and resizing the larger image; 5/8 and 6/8 were 7-18% worse, 3/8 within +-6% of 4/8.)
#pragma once

#include <cstddef>
#include <cstdint>

#include "internal.h"

namespace panto {

/** Side of a `dim`-pixel JPEG decoded at `eighths`/8 (libjpeg's rounding: ceil(dim * eighths / 8)). */
inline uint32_t jpeg_scaled_dim(uint32_t dim, int eighths) { return uint32_t((uint64_t(dim) * eighths + 7) / 8); }

/**
 * The smallest scale in eighths among 1, 2, 4 and 8 at which a `w` x `h` JPEG decodes to at least `min_w` x `min_h`;
 * 8 (full size) when the target is not smaller or is 0. (decode_jpeg and JpegRowReader take any of 1..8.)
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

struct JpegJob;

/**
 * The decoder behind decode_jpeg, row by row (the producer of the streamed JPEG resize, jpeg-resize-stream.h): open()
 * reads the header and starts the decompressor at `eighths`/8 (a progressive or multi-scan file absorbs every scan
 * here, into libjpeg's full-size coefficient arrays), read_rows() yields the scaled rows top to bottom, finish() reads
 * the rest of the file to EOI. The same checks, limits, abort polling (per call of read_rows and per absorbed scan
 * row) and error statuses as decode_jpeg; after any non-Ok status the reader is spent (every later call repeats it).
 * Not thread-safe: one thread at a time (any thread with the call's budget active). Memory: libjpeg's (through the
 * active budget, jpeg-memory.cpp), released by finish() or the destructor.
 */
class JpegRowReader {
 public:
  JpegRowReader() = default;
  ~JpegRowReader();
  JpegRowReader(const JpegRowReader&) = delete;
  JpegRowReader& operator=(const JpegRowReader&) = delete;

  Status open(const uint8_t* d, size_t len, const MediaInfo& info, int eighths);
  /** Scaled size, and the channels of the rows read_rows writes: 3 (RGB, grayscale expanded) or 4 (CMYK/YCCK as
   *  Adobe stores it, inverted: cmyk_row_to_rgb converts). Valid after a successful open(). */
  uint32_t width() const { return width_; }
  uint32_t height() const { return height_; }
  int channels() const { return channels_; }
  /** The next `n` rows (width() * channels() bytes each) into rows[0..n-1]. */
  Status read_rows(uint8_t* const* rows, uint32_t n);
  /** After the last row: reads to the end of the image and releases the decoder. */
  Status finish();

  /**
   * open() for planar YCbCr (libjpeg's raw data): the components as stored, each at its own (DCT-scaled) size, no
   * upsampling and no colour conversion. Fails with kNotPlanarCode (nothing decoded; open() another reader) when the
   * file is not 3-component YCbCr (grey, CMYK/YCCK, Adobe RGB).
   */
  Status open_planar(const uint8_t* d, size_t len, const MediaInfo& info, int eighths);
  /** Component k's plane (planar mode, between open_planar and finish): its size, the row stride read_planes needs
   *  (whole blocks), the rows one read_planes call writes, and the number of calls (the last ones may write rows past
   *  plane_height: padding). */
  uint32_t plane_width(int k) const;
  uint32_t plane_height(int k) const;
  uint32_t plane_stride(int k) const;
  uint32_t plane_rows_per_read(int k) const;
  uint32_t reads() const;
  /** The next iMCU row: rows[k][0 .. plane_rows_per_read(k) - 1], plane_stride(k) bytes each. */
  Status read_planes(uint8_t* const* const* rows);

 private:
  Status fail();
  bool planar_ = false;
  JpegJob* job_ = nullptr;
  uint32_t width_ = 0, height_ = 0;
  int channels_ = 3;
  Status failed_;
};

/** The status code of JpegRowReader::open_planar for a file that is not 3-component YCbCr (never shown to users). */
extern const char* const kNotPlanarCode;

/** Adobe CMYK/YCCK (stored inverted) to RGB: R = C'K'/255 (as stb did), `n` pixels; `dst` may be `src` (in place). */
void cmyk_row_to_rgb(const uint8_t* src, uint8_t* dst, size_t n);

}  // namespace panto
