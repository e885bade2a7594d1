// Encoders: WebP (libwebp, lossy or lossless). JPEG lives in jpeg-encode.cpp, PNG in png-encode.cpp.
#include <webp/encode.h>

#include <cstring>
#include <string>
#include <utility>

#include "budget.h"
#include "codec-handles.h"
#include "internal.h"

namespace panto {

Status encode_webp_picture(WebPPicture* pic, bool lossless, int quality, OwnedBytes* out, bool threads) {
  WebPConfig config;
  if (!WebPConfigInit(&config)) return Status::Err("ERR_INTERNAL", "libwebp version mismatch");
  if (lossless) {
    WebPConfigLosslessPreset(&config, 1);
  } else {
    config.quality = float(quality);
    config.method = 4;
  }
  // One helper thread (libwebp's WebPWorker, built with WEBP_USE_THREAD: see scripts/native-sources.cjs): the alpha
  // plane is compressed while the colour planes are, and the segment analysis runs in two halves. The output bytes do
  // not depend on it (test-webp-threads.cpp); without WEBP_USE_THREAD (the wasm build) the same work runs in turn.
  config.thread_level = threads ? 1 : 0;
  WebPMemoryWriterHandle w;
  pic->writer = WebPMemoryWrite;
  pic->custom_ptr = w.get();
  // libwebp calls the hook each time its progress percentage changes (at most ~100 times), and only ever on this
  // thread, thread_level or not: the analysis half on the helper thread reports no progress (analysis_enc.c:
  // delta_progress 0 for the side job), the alpha plane is encoded as a fresh WebPPicture without a hook
  // (alpha_enc.c, EncodeLossless), and lossless's side worker gets progress_hook = NULL (vp8l_enc.c). So the hook
  // always sees this thread's BudgetScope; returning 0 stops the encode with VP8_ENC_ERROR_USER_ABORT (libwebp then
  // joins its helper thread before WebPEncode returns). The hook throws nothing.
  pic->progress_hook = [](int, const WebPPicture*) -> int { return should_abort() ? 0 : 1; };
  if (should_abort()) return Status::Err("ERR_ABORTED", "processing was aborted");
  if (!WebPEncode(&config, pic)) {
    switch (pic->error_code) {
      case VP8_ENC_ERROR_USER_ABORT: return Status::Err("ERR_ABORTED", "processing was aborted");
      case VP8_ENC_ERROR_OUT_OF_MEMORY: return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory while encoding WebP");
      // Sizes the format cannot hold: a first partition over 512 KiB, a partition over 16 MiB, a file over 4 GiB.
      case VP8_ENC_ERROR_PARTITION0_OVERFLOW:
      case VP8_ENC_ERROR_PARTITION_OVERFLOW:
      case VP8_ENC_ERROR_FILE_TOO_BIG:
      case VP8_ENC_ERROR_BAD_DIMENSION:
        return Status::Err("ERR_MEDIA_TOO_LARGE", "the image is too large for WebP's format limits");
      default: return Status::Err("ERR_INTERNAL", "WebP encoding failed");
    }
  }
  *out = w.take();
  return Status::Ok();
}

Status encode_webp(const PixelView& px, bool lossless, int quality, OwnedBytes* out, bool threads) {
  // The format's limit (14-bit sizes): libwebp would fail such a picture with VP8_ENC_ERROR_BAD_DIMENSION.
  if (px.width > WEBP_MAX_DIMENSION || px.height > WEBP_MAX_DIMENSION)
    return Status::Err("ERR_MEDIA_TOO_LARGE", "WebP holds at most " + std::to_string(WEBP_MAX_DIMENSION) +
                                                  " pixels per side; the image is " + std::to_string(px.width) + "x" +
                                                  std::to_string(px.height));
  WebPPictureHandle pic;
  if (!pic.ok()) return Status::Err("ERR_INTERNAL", "libwebp version mismatch");
  pic.get()->use_argb = lossless ? 1 : 0;
  pic.get()->width = int(px.width);
  pic.get()->height = int(px.height);
  int ok = px.channels == 4 ? WebPPictureImportRGBA(pic.get(), px.data, int(px.width * 4))
                            : WebPPictureImportRGB(pic.get(), px.data, int(px.width * 3));
  if (!ok) return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory while encoding WebP");
  return encode_webp_picture(pic.get(), lossless, quality, out, threads);
}

}  // namespace panto
