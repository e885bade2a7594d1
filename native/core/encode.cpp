// Encoders: WebP (libwebp, lossy or lossless). JPEG lives in jpeg-encode.cpp, PNG in png-encode.cpp.
#include <webp/encode.h>

#include <cstring>
#include <utility>

#include "budget.h"
#include "codec-handles.h"
#include "internal.h"

namespace panto {
namespace {

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
