// Encoders: JPEG (stb_image_write, two-thread splice for large images), WebP (libwebp, lossy or lossless).
// PNG lives in png-encode.cpp.
#include <stb/stb_image_write.h>
#include <webp/encode.h>

#include <cstring>
#include <system_error>
#include <thread>
#include <utility>

#include "budget.h"
#include "codec-handles.h"
#include "internal.h"

namespace panto {
namespace {

/** stb_image_write's output: budget memory that doubles when full (`buf.size` is the capacity, `used` the bytes). */
struct GrowBuf {
  OwnedBytes buf;
  size_t used = 0;
  bool failed = false;
};

void grow_write(void* ctx, void* src, int n) {
  auto* b = static_cast<GrowBuf*>(ctx);
  if (b->failed || n <= 0) return;
  if (b->used + size_t(n) > b->buf.size) {
    size_t cap = b->buf.size ? b->buf.size * 2 : 65536;
    while (cap < b->used + size_t(n)) cap *= 2;
    if (!b->buf.realloc_owned(cap)) {
      b->failed = true;
      return;
    }
  }
  std::memcpy(b->buf.data + b->used, src, size_t(n));
  b->used += size_t(n);
}

/** Offset just past the SOS segment of a JPEG written by stb_image_write (its header layout is fixed). */
size_t stb_jpeg_scan_start(const OwnedBytes& j) {
  for (size_t i = 2; i + 4 <= j.size;) {
    if (j.data[i] != 0xFF) return 0;
    size_t seg = size_t(be16(j.data + i + 2));
    if (j.data[i + 1] == 0xDA) return i + 2 + seg;
    i += 2 + seg;
  }
  return 0;
}

/** One stb_image_write JPEG of the whole of `px`, written into a growing budget buffer. */
Status encode_jpeg_serial(const PixelView& px, int quality, OwnedBytes* out) {
  GrowBuf b;
  if (!alloc_owned(size_t(px.width) * px.height / 4 + 65536, &b.buf))
    return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory budget while encoding JPEG");
  int ok = stbi_write_jpg_to_func(grow_write, &b, int(px.width), int(px.height), px.channels, px.data, quality);
  if (!ok || b.failed) return Status::Err("ERR_MEDIA_TOO_LARGE", "JPEG encoding failed (out of memory budget)");
  b.buf.shrink_to(b.used);
  *out = std::move(b.buf);
  return Status::Ok();
}

}  // namespace

/**
 * Encodes the top and bottom halves on two threads and splices them into one baseline JPEG: a DRI segment sets the
 * restart interval to the top half's MCU count, and an RST0 marker joins the two entropy-coded segments (each starts
 * with zero DC predictors and ends byte-aligned, exactly what a restart requires). Same tables, same pixels: the
 * decoded result equals a single-threaded encode.
 */
Status encode_jpeg(const PixelView& px, int quality, OwnedBytes* out) {
  const uint32_t H = px.height;
  if (uint64_t(px.width) * H < (1u << 20) || H < 256) return encode_jpeg_serial(px, quality, out);
  const uint32_t h1 = ((H / 2 + 15) / 16) * 16;  // MCU-aligned (16 rows covers 4:2:0 and 4:4:4)
  const uint32_t mcus_x = (px.width + 15) / 16;
  const uint64_t interval = uint64_t(mcus_x) * (h1 / 16);
  const bool subsampled = quality <= 90;
  if (!subsampled || interval > 0xFFFF || h1 >= H) return encode_jpeg_serial(px, quality, out);
  const PixelView top = px.rows(0, h1), bottom = px.rows(h1, H - h1);
  OwnedBytes a, b;
  Status sa, sb;
  try {
    // The second thread charges the same per-call budget as the first (it is shared, with atomic counters).
    Budget* budget = current_budget();
    std::thread t([&, budget] {
      BudgetScope scope(budget);
      sa = encode_jpeg_serial(top, quality, &a);
    });
    sb = encode_jpeg_serial(bottom, quality, &b);
    t.join();
  } catch (const std::system_error&) {
    // No threads here (the WebAssembly build): the same two halves one after the other, so the output bytes never
    // depend on whether threads exist.
    sa = encode_jpeg_serial(top, quality, &a);
    sb = encode_jpeg_serial(bottom, quality, &b);
  }
  if (!sa.ok()) return sa;
  if (!sb.ok()) return sb;
  const size_t sa0 = stb_jpeg_scan_start(a), sb0 = stb_jpeg_scan_start(b);
  if (sa0 == 0 || sb0 == 0 || a.size < sa0 + 2 || b.size < sb0 + 2) return encode_jpeg_serial(px, quality, out);
  const size_t sos = sa0 - 14;  // stb's SOS segment is 14 bytes
  const uint8_t dri[6] = {0xFF, 0xDD, 0x00, 0x04, uint8_t(interval >> 8), uint8_t(interval)};
  const size_t ea = a.size - 2 - sa0, eb = b.size - 2 - sb0;  // entropy data without EOI
  if (!alloc_owned(sos + 6 + 14 + ea + 2 + eb + 2, out))
    return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory budget while encoding JPEG");
  uint8_t* w = out->data;
  std::memcpy(w, a.data, sos);
  // Patch the frame height in SOF0.
  for (size_t i = 2; i + 9 < sos;) {
    if (a.data[i + 1] == 0xC0) {
      w[i + 5] = uint8_t(H >> 8);
      w[i + 6] = uint8_t(H);
      break;
    }
    i += 2 + size_t(be16(a.data + i + 2));
  }
  w += sos;
  std::memcpy(w, dri, 6);
  w += 6;
  std::memcpy(w, a.data + sos, 14);
  w += 14;
  std::memcpy(w, a.data + sa0, ea);
  w += ea;
  *w++ = 0xFF;
  *w++ = 0xD0;
  std::memcpy(w, b.data + sb0, eb);
  w += eb;
  *w++ = 0xFF;
  *w++ = 0xD9;
  return Status::Ok();
}

Status encode_webp(const PixelView& px, bool lossless, int quality, OwnedBytes* out) {
  WebPConfig config;
  if (!WebPConfigInit(&config)) return Status::Err("ERR_INTERNAL", "libwebp version mismatch");
  if (lossless) {
    WebPConfigLosslessPreset(&config, 1);
  } else {
    config.quality = float(quality);
    config.method = 4;
  }
  WebPPictureHandle pic;
  if (!pic.ok()) return Status::Err("ERR_INTERNAL", "libwebp version mismatch");
  pic.get()->use_argb = lossless ? 1 : 0;
  pic.get()->width = int(px.width);
  pic.get()->height = int(px.height);
  int ok = px.channels == 4 ? WebPPictureImportRGBA(pic.get(), px.data, int(px.width * 4))
                            : WebPPictureImportRGB(pic.get(), px.data, int(px.width * 3));
  if (!ok) return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory while encoding WebP");
  WebPMemoryWriterHandle w;
  pic.get()->writer = WebPMemoryWrite;
  pic.get()->custom_ptr = w.get();
  // libwebp calls the hook each time its progress percentage changes (at most ~100 times, on this thread: no
  // thread_level is set); returning 0 stops the encode with VP8_ENC_ERROR_USER_ABORT.
  pic.get()->progress_hook = [](int, const WebPPicture*) -> int { return should_abort() ? 0 : 1; };
  if (should_abort()) return Status::Err("ERR_ABORTED", "processing was aborted");
  if (!WebPEncode(&config, pic.get())) {
    switch (pic.get()->error_code) {
      case VP8_ENC_ERROR_USER_ABORT: return Status::Err("ERR_ABORTED", "processing was aborted");
      case VP8_ENC_ERROR_OUT_OF_MEMORY: return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory while encoding WebP");
      default: return Status::Err("ERR_INTERNAL", "WebP encoding failed");
    }
  }
  *out = w.take();
  return Status::Ok();
}

}  // namespace panto
