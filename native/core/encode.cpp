// Encoders: WebP (libwebp, lossy or lossless). JPEG lives in jpeg-encode.cpp, PNG in png-encode.cpp.
#include <webp/encode.h>

#include <cstring>

#include "budget.h"
#include "codec-handles.h"
#include "internal.h"

namespace panto {
namespace {

void webp_release(uint8_t* p) { WebPFree(p); }

/** Hands an encoder's buffer to `out` (which releases it with `release`). */
void give(OwnedBytes* out, uint8_t* data, size_t size, void (*release)(uint8_t*)) {
  out->reset();
  out->data = data;
  out->size = size;
  out->release = release;
}

}  // namespace

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
  if (!WebPEncode(&config, pic.get())) {
    return pic.get()->error_code == VP8_ENC_ERROR_OUT_OF_MEMORY
               ? Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory while encoding WebP")
               : Status::Err("ERR_INTERNAL", "WebP encoding failed");
  }
  size_t size = 0;
  uint8_t* mem = w.release(&size);
  give(out, mem, size, webp_release);
  return Status::Ok();
}

}  // namespace panto
