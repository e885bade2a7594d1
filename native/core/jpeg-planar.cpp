// JPEG -> JPEG in planar YCbCr (see jpeg-planar.h).
#include "jpeg-planar.h"

#include <stb/stb_image_resize2.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "budget.h"
#include "jpeg-decode.h"
#include "jpeg-encode.h"
#include "jpeg-resize-stream.h"
#include "parallel.h"

namespace panto {
namespace {

std::atomic<bool> g_planar{[] {
  const char* v = std::getenv("PANTO_JPEG_PLANAR");
  return !(v && v[0] == '0' && v[1] == '\0');
}()};

Status oom() { return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory budget while resizing", MediaType::Jpeg); }

/** Mitchell resize of one plane (resize_pixels' filter and edges, in kRowParts row parts) between strided buffers. */
bool resize_plane(const uint8_t* in, uint32_t iw, uint32_t ih, uint32_t istride, uint8_t* out, uint32_t ow,
                  uint32_t oh, uint32_t ostride) {
  STBIR_RESIZE r;
  stbir_resize_init(&r, in, int(iw), int(ih), int(istride), out, int(ow), int(oh), int(ostride), STBIR_1CHANNEL,
                    STBIR_TYPE_UINT8);
  stbir_set_edgemodes(&r, STBIR_EDGE_CLAMP, STBIR_EDGE_CLAMP);
  stbir_set_filters(&r, STBIR_FILTER_MITCHELL, STBIR_FILTER_MITCHELL);
  const int parts = stbir_build_samplers_with_splits(&r, kRowParts);
  if (parts <= 0) return false;
  int ok[kRowParts] = {};
  run_parts(parts, [&](int i) { ok[i] = stbir_resize_extended_split(&r, i, 1); });
  stbir_free_samplers(&r);
  for (int i = 0; i < parts; i++)
    if (!ok[i]) return false;
  return true;
}

/** Repeats the last column of rows [0, h) into [w, stride) and the last row into rows [h, rows). */
void pad_plane(uint8_t* p, uint32_t w, uint32_t h, uint32_t stride, uint32_t rows) {
  for (uint32_t y = 0; y < h; y++) {
    uint8_t* row = p + size_t(y) * stride;
    std::memset(row + w, row[w - 1], stride - w);
  }
  for (uint32_t y = h; y < rows; y++) std::memcpy(p + size_t(y) * stride, p + size_t(h - 1) * stride, stride);
}

}  // namespace

bool set_jpeg_planar(bool allowed) { return g_planar.exchange(allowed); }

bool jpeg_planar_applies(const MediaInfo& info, int eighths, uint32_t sw, uint32_t sh) {
  return g_planar.load(std::memory_order_relaxed) && info.orientation == 1 && sw >= 16 && sh >= 16 &&
         jpeg_stream_resizes(info, eighths, sw, sh);
}

uint64_t jpeg_planar_bytes(const MediaInfo& info, int eighths, uint32_t sw, uint32_t sh) {
  // Decoded: three planes of at most the scaled size each, padded to whole iMCU rows and blocks (a chroma plane is
  // never larger than luma's: libjpeg scales subsampled chroma up through its IDCT to at most the luma size).
  // Resized: 1.5 bytes per output pixel, padded to 16. Plus the row pointers.
  const uint64_t pw = uint64_t(jpeg_scaled_dim(info.width, eighths)) + 64;
  const uint64_t ph = uint64_t(jpeg_scaled_dim(info.height, eighths)) + 64;
  const uint64_t ow = uint64_t(sw) + 16, oh = uint64_t(sh) + 16;
  return 3 * pw * ph + ow * oh * 2 + (ph + oh) * 3 * sizeof(void*);
}

Status jpeg_planar_encode(const uint8_t* d, size_t len, const MediaInfo& info, int eighths, uint32_t sw, uint32_t sh,
                          int quality, OwnedBytes* out) {
  JpegRowReader reader;
  Status s = reader.open_planar(d, len, info, eighths);
  if (!s.ok()) return s;
  const uint32_t reads = reader.reads();
  OwnedBytes in[3];
  uint32_t stride[3], per[3], pw[3], ph[3];  // (the reader's geometry is gone after finish())
  std::vector<uint8_t*> rows[3];
  for (int k = 0; k < 3; k++) {
    stride[k] = reader.plane_stride(k);
    per[k] = reader.plane_rows_per_read(k);
    pw[k] = reader.plane_width(k);
    ph[k] = reader.plane_height(k);
    if (stride[k] == 0 || per[k] == 0 || pw[k] == 0 || ph[k] == 0 || pw[k] > stride[k] || ph[k] > per[k] * reads)
      return Status::Err("ERR_CORRUPT_MEDIA", "image/jpeg is corrupt: empty component", MediaType::Jpeg);
    if (!alloc_owned(size_t(stride[k]) * per[k] * reads, &in[k])) return oom();
    rows[k].resize(per[k]);
  }
  for (uint32_t r = 0; r < reads; r++) {
    for (int k = 0; k < 3; k++)
      for (uint32_t i = 0; i < per[k]; i++) rows[k][i] = in[k].data + (size_t(r) * per[k] + i) * stride[k];
    uint8_t* const* planes[3] = {rows[0].data(), rows[1].data(), rows[2].data()};
    s = reader.read_planes(planes);
    if (!s.ok()) return s;
  }
  s = reader.finish();
  if (!s.ok()) return s;

  // Output planes as the encoder's raw input wants them: 4:2:0, rows padded to whole 16x16 MCUs.
  const uint32_t ostride[3] = {(sw + 15) / 16 * 16, (sw + 15) / 16 * 8, (sw + 15) / 16 * 8};
  const uint32_t orows[3] = {(sh + 15) / 16 * 16, (sh + 15) / 16 * 8, (sh + 15) / 16 * 8};
  const uint32_t ow[3] = {sw, (sw + 1) / 2, (sw + 1) / 2}, oh[3] = {sh, (sh + 1) / 2, (sh + 1) / 2};
  OwnedBytes o[3];
  for (int k = 0; k < 3; k++) {
    if (should_abort()) return Status::Err("ERR_ABORTED", "processing was aborted", MediaType::Jpeg);
    if (!alloc_owned(size_t(ostride[k]) * orows[k], &o[k])) return oom();
    if (!resize_plane(in[k].data, pw[k], ph[k], stride[k], o[k].data, ow[k], oh[k], ostride[k]))
      return oom();
    in[k].reset();
    pad_plane(o[k].data, ow[k], oh[k], ostride[k], orows[k]);
  }

  JpegRowEncoder enc;
  s = enc.begin_planar(sw, sh, quality);
  if (!s.ok()) return s;
  const uint8_t* y16[16];
  const uint8_t* cb8[8];
  const uint8_t* cr8[8];
  for (uint32_t y = 0; y < orows[0]; y += 16) {
    if (should_abort()) {
      enc.abort();
      break;
    }
    for (uint32_t i = 0; i < 16; i++) y16[i] = o[0].data + size_t(y + i) * ostride[0];
    for (uint32_t i = 0; i < 8; i++) {
      cb8[i] = o[1].data + size_t(y / 2 + i) * ostride[1];
      cr8[i] = o[2].data + size_t(y / 2 + i) * ostride[2];
    }
    enc.put_planes(y16, cb8, cr8);
  }
  return enc.finish(out);
}

}  // namespace panto
