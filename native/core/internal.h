// Internal helpers shared by the core's translation units (not part of media-core.h's API).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "media-core.h"

struct WebPPicture;  // libwebp (webp/encode.h)

namespace panto {

inline uint16_t be16(const uint8_t* p) { return uint16_t((p[0] << 8) | p[1]); }
inline uint32_t be32(const uint8_t* p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3];
}
inline uint16_t le16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }
inline uint32_t le32(const uint8_t* p) {
  return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24);
}

/** One JPEG marker segment before the first scan: [offset, offset+size) covers marker + length + payload. */
struct JpegSegment {
  size_t offset;
  size_t size;
  uint8_t marker;
};

/** One frame component of a JPEG (from SOF). */
struct JpegComponent {
  uint8_t id = 0;
  uint8_t h = 1, v = 1;  // sampling factors 1..4
};

struct JpegLayout {
  std::vector<JpegSegment> header_segments;  // segments between SOI and the first SOS (exclusive)
  size_t first_sos = 0;                      // offset of the first SOS marker
  size_t end = 0;                            // offset just past EOI (only when walked to the end)
  uint32_t width = 0, height = 0;
  int components = 0;
  JpegComponent comp[4];
  bool progressive = false;
  int orientation = 1;
  int scans = 0;              // scans seen (only when walked to the end)
  uint64_t scan_blocks = 0;   // 8x8 blocks decoded over all scans (only when walked to the end)
};

/** 8x8 blocks of one component, MCU-padded (at least what libjpeg's coefficient arrays hold), and of all components. */
uint64_t jpeg_component_blocks(const JpegLayout& l, int k);
uint64_t jpeg_total_blocks(const JpegLayout& l);

/**
 * Walks a JPEG's marker segments (and, when `to_eoi`, the entropy-coded data to the EOI marker). Errors:
 * ERR_CORRUPT_MEDIA (truncated/malformed), ERR_UNSUPPORTED_MEDIA (lossless, arithmetic, hierarchical or 12-bit).
 * When `to_eoi`, every scan header is checked the way libjpeg does (component selectors, spectral selection and
 * successive approximation) and a progressive file must follow a consistent, non-redundant progression (each
 * coefficient bit sent once, refinements in order); the total decoding work (blocks over all scans) is capped at
 * kMaxScanWork times the image's blocks and scans at 256: a few KB of scan headers cannot buy minutes of CPU.
 */
Status jpeg_walk(const uint8_t* d, size_t len, bool to_eoi, JpegLayout* out);

/**
 * Walks all PNG chunks to IEND, checking lengths and CRCs. ERR_CORRUPT_MEDIA on the first problem in a critical chunk
 * (IHDR, PLTE, IDAT, IEND); an ancillary chunk with a bad CRC is only counted in `*damaged_ancillary` (libpng and
 * browsers discard such chunks) and must be dropped from any output.
 */
Status png_validate(const uint8_t* d, size_t len, int* damaged_ancillary = nullptr);

/** True when PNG chunk type `t` is ancillary (lower-case first letter) and its CRC does not match. */
bool png_chunk_damaged_ancillary(const uint8_t* chunk, uint32_t n);

/** Checks the PDF header/trailer and counts pages when cheap (0 when not). */
Status pdf_check(const uint8_t* d, size_t len, uint32_t* pages);

/** A read-only view of tightly packed pixels owned elsewhere: never frees, must not outlive the owner. */
struct PixelView {
  uint32_t width = 0;
  uint32_t height = 0;
  int channels = 0;
  const uint8_t* data = nullptr;

  /** Rows [y0, y0 + n) of this view (the caller keeps them in range). */
  PixelView rows(uint32_t y0, uint32_t n) const {
    return {width, n, channels, data + size_t(y0) * width * size_t(channels)};
  }
};

/** Decoded pixels: 3 (RGB) or 4 (RGBA, not premultiplied) channels, tightly packed, OWNED via OwnedBytes. */
struct Pixels {
  uint32_t width = 0;
  uint32_t height = 0;
  int channels = 0;
  OwnedBytes data;

  PixelView view() const { return {width, height, channels, data.data}; }
};

/** Lossless metadata strip of a JPEG/PNG/WebP passed through. Returns false (and leaves `out` empty) when nothing
 *  changed or `t` is another type; on an error also false, with `*err` set. With `privacy` false only damaged
 *  ancillary PNG chunks are dropped (keepMetadata). */
bool strip_metadata(MediaType t, const uint8_t* d, size_t len, OwnedBytes* out, Status* err, bool privacy = true);

/**
 * Decodes the first frame of a supported raster image into `out`. Caller has checked the pixel cap. A JPEG comes back
 * at `jpeg_eighths`/8 of its size (DCT-domain scaling, jpeg-decode.h; 8 = full size); with `png_shrink` k >= 2, a PNG
 * the streaming path handles comes back at ceil(w/k) x ceil(h/k) (box-averaged while decoding, png-decode.h); a WebP
 * for which webp_scales_on_decode(info, webp_w, webp_h) holds comes back at webp_w x webp_h (libwebp's own rescaler,
 * area-averaging, applied to the YUV planes before conversion: the full-size RGB image never exists). Callers check
 * out->width/height.
 */
Status decode_image(const uint8_t* d, size_t len, const MediaInfo& info, Pixels* out, int jpeg_eighths = 8,
                    uint32_t png_shrink = 1, uint32_t webp_w = 0, uint32_t webp_h = 0);

/** True when a WebP goes to tw x th (stored orientation) through libwebp's scaled decode: a still, opaque image that
 *  shrinks. (With alpha, libwebp would average colours of transparent pixels into the visible ones: not premultiplied;
 *  such images take the full decode and the premultiplied Mitchell resize.) */
bool webp_scales_on_decode(const MediaInfo& info, uint32_t tw, uint32_t th);

/**
 * The WebP that webp_scales_on_decode(info, tw, th) takes, decoded at tw x th by the same scaled decode into the YUV
 * 4:2:0 planes of `pic` (allocated here; freed by the caller's WebPPictureFree): the luma and chroma planes are each
 * rescaled at their own resolution and never converted to RGB. Errors as decode_image's.
 */
Status decode_webp_yuv(const uint8_t* d, size_t len, const MediaInfo& info, uint32_t tw, uint32_t th,
                       WebPPicture* pic);
/** The RGB pixels of a YUV 4:2:0 `pic` (chroma upsampled as libwebp's decoder does; `pic` gains an ARGB copy). */
Status webp_yuv_to_pixels(WebPPicture* pic, Pixels* out);

/** True when any alpha byte is below 255. */
bool has_transparency(const Pixels& px);
/** Drops the alpha channel (in place; RGBA -> RGB). */
void drop_alpha(Pixels* px);
/** Composites RGBA onto white and drops alpha. */
void flatten_on_white(Pixels* px);
/** Resizes with Mitchell (alpha premultiplied internally). */
Status resize_pixels(const Pixels& in, uint32_t w, uint32_t h, Pixels* out);
/** Applies EXIF orientation 2..8 so the result is upright. */
Status orient_pixels(const Pixels& in, int orientation, Pixels* out);

Status encode_jpeg(const PixelView& px, int quality, OwnedBytes* out);
Status encode_png(const PixelView& px, OwnedBytes* out);
/** True when a full PNG encode of `px` is predicted over `cap` bytes with a margin the estimator's measured error
 *  never reached on real images (process.cpp), at about 1/8 of that encode's cost: process() then skips it. False when
 *  `px` is too short to sample (under 256 rows). */
bool png_surely_over_cap(const Pixels& px, uint64_t cap);
/** The PNG size of `px` predicted from 8 evenly spaced bands of 1/64 of its rows each; 0 under 256 rows. */
uint64_t estimate_png_size(const Pixels& px);
/** The PNG size of a resize of the PNG `d` (probed as `info`) to sw x sh, predicted from the file's compressed bytes
 *  per filtered byte (process.cpp): chooses whether the resized rows go straight into the encoder. */
uint64_t png_size_by_density(const uint8_t* d, size_t len, const MediaInfo& info, uint32_t sw, uint32_t sh);
/** WebP (libwebp). `threads`: let libwebp use one helper thread for the call (alpha plane and half of the analysis in
 *  parallel); the output bytes are the same either way. Aborts (ERR_ABORTED) when the active budget's flag is set. */
Status encode_webp(const PixelView& px, bool lossless, int quality, OwnedBytes* out, bool threads = true);
/** encode_webp of a picture already filled (ARGB or YUV 4:2:0); the caller owns and frees `pic`. */
Status encode_webp_picture(WebPPicture* pic, bool lossless, int quality, OwnedBytes* out, bool threads = true);

/** Allocates `size` bytes through the active budget into `out` (release = budget_release). */
bool alloc_owned(size_t size, OwnedBytes* out);
/** alloc_owned for a buffer sized by a worst case of which only a part is written (an encoder's output bound):
 *  resident memory is what gets written (panto_budget_malloc_sparse). */
bool alloc_owned_sparse(size_t size, OwnedBytes* out);

}  // namespace panto
