// First-frame decode of PNG (png-decode.cpp, stb for the layouts it does not take), JPEG (libjpeg-turbo,
// jpeg-decode.cpp), GIF/BMP (stb_image 2.30, budgeted allocations) and WebP (libwebp; animated WebP through the demux
// for its first frame; both through the incremental decoder so that abort reaches them). Callers check the pixel cap
// from the header first.
#include <stb/stb_image.h>
#include <webp/decode.h>
#include <webp/demux.h>
#include <webp/encode.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <cstdlib>
#include <utility>
#include <vector>
#include <cstring>
#include <string>

#include "budget.h"
#include "codec-handles.h"
#include "internal.h"
#include "jpeg-decode.h"
#include "png-decode.h"


namespace panto {
namespace {

Status corrupt(MediaType t, const std::string& why) {
  return Status::Err("ERR_CORRUPT_MEDIA", std::string(mime_of(t)) + " is corrupt: " + why, t);
}

Status oom(MediaType t) {
  return Status::Err("ERR_MEDIA_TOO_LARGE",
                     std::string(mime_of(t)) + " needs more memory to decode than its header implies (budget exceeded)",
                     t);
}

const char* webp_reason(VP8StatusCode rc) {
  switch (rc) {
    case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
    case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR: return "bitstream error";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
    case VP8_STATUS_SUSPENDED: return "suspended";
    case VP8_STATUS_USER_ABORT: return "aborted";
    case VP8_STATUS_NOT_ENOUGH_DATA: return "truncated data";
    default: return "unknown error";
  }
}

/** The error for a failed (NULL) stb decode: a refused budget allocation is too large, anything else corrupt. */
Status stb_failure(MediaType t) {
  Budget* b = current_budget();
  if (b && b->exceeded.load()) return oom(t);
  const char* why = stbi_failure_reason();
  std::string reason = why ? why : "decode failed";
  if (reason == "outofmem" || reason == "too large") return oom(t);
  if (reason == "aborted" || should_abort()) return Status::Err("ERR_ABORTED", "processing was aborted", t);
  return corrupt(t, reason);
}

/** Takes ownership of a w x h x `channels` stb result (budget memory) and checks it has the expected size. */
Status adopt_stb_pixels(MediaType t, stbi_uc* p, int w, int h, int channels, uint32_t want_w, uint32_t want_h,
                        Pixels* out) {
  out->data = OwnedBytes::adopt(p, size_t(w) * size_t(h) * size_t(channels), budget_release);
  if (uint32_t(w) != want_w || uint32_t(h) != want_h) return corrupt(t, "decoded size differs from the header");
  out->width = uint32_t(w);
  out->height = uint32_t(h);
  out->channels = channels;
  return Status::Ok();
}

Status decode_stb(const uint8_t* d, size_t len, const MediaInfo& info, Pixels* out) {
  if (len > size_t(INT_MAX)) return Status::Err("ERR_MEDIA_TOO_LARGE", "input over 2 GiB", info.type);
  int w = 0, h = 0, n = 0;
  // GIF: areas the first frame does not cover are transparent even without a transparent colour index.
  int req = info.has_alpha || info.type == MediaType::Gif ? 4 : 3;
  stbi_uc* p = stbi_load_from_memory(d, int(len), &w, &h, &n, req);
  if (!p) return stb_failure(info.type);
  return adopt_stb_pixels(info.type, p, w, h, req, info.width, info.height, out);
}

/** Input fed to libwebp's incremental decoder per step: at least 256 KiB (a lossless decoder that runs out of data
 *  mid-way re-decodes from its last 8-row checkpoint, so small steps would cost repeated work), else 1/64 of the
 *  input, so the abort flag is polled ~64 times over a large image. */
size_t webp_step(size_t len) { return std::max<size_t>(size_t(256) << 10, len / 64); }

/**
 * Decodes one WebP bitstream (a still image or one animation frame) into config->output (external memory) with
 * libwebp's incremental decoder fed from `d` in place (WebPIUpdate: no copy), polling the abort flag between steps of
 * webp_step(len) bytes. Inside a step libwebp itself polls it (cdeps/patches/libwebp/0001: every macroblock row of
 * VP8, every 16 rows of VP8L), so a highly compressible image whose whole data fits one step stops too. Returns
 * VP8_STATUS_USER_ABORT when aborted, VP8_STATUS_NOT_ENOUGH_DATA when the data ends before the image does, else
 * libwebp's status.
 */
VP8StatusCode webp_decode_abortable(const uint8_t* d, size_t len, WebPDecoderConfig* config) {
  if (should_abort()) return VP8_STATUS_USER_ABORT;
  // Lossy images at least 512 px wide (frame_dec.c, MIN_WIDTH_FOR_THREADS) filter, convert and write their rows, and
  // decode their alpha plane, on one libwebp helper thread while this thread parses the next macroblock row (no effect
  // on the bytes; none without WEBP_USE_THREAD, i.e. in wasm). The helper thread has no BudgetScope: the abort poll of
  // cdeps/patches/libwebp/0001 it may reach (alpha's VP8L rows) reads this thread-local as null and returns 0, which
  // is harmless, since this thread polls before every macroblock row (idec_dec.c DecodeRemaining) and libwebp joins
  // the helper before WebPIUpdate returns an error. libwebp allocates through webp-memory.cpp (charged to no call).
  config->options.use_threads = 1;
  WebPIDecoderHandle idec(WebPIDecode(nullptr, 0, config));
  if (!idec) return VP8_STATUS_OUT_OF_MEMORY;
  const size_t step = webp_step(len);
  VP8StatusCode rc = VP8_STATUS_SUSPENDED;
  for (size_t fed = 0; rc == VP8_STATUS_SUSPENDED && fed < len;) {
    if (should_abort()) return VP8_STATUS_USER_ABORT;
    fed = std::min(len, fed + step);
    rc = WebPIUpdate(idec.get(), d, fed);
  }
  if (rc == VP8_STATUS_SUSPENDED) rc = VP8_STATUS_NOT_ENOUGH_DATA;
  return rc;
}

/** The error for a failed libwebp decode. The abort flag alone decides ERR_ABORTED: libwebp also reports damaged
 *  alpha data as VP8_STATUS_USER_ABORT (its output callback fails), and an abort inside an alpha or transform
 *  sub-image may surface as another status. */
Status webp_failure(VP8StatusCode rc, const char* what) {
  const MediaType T = MediaType::Webp;
  if (should_abort()) return Status::Err("ERR_ABORTED", "processing was aborted", T);
  if (rc == VP8_STATUS_OUT_OF_MEMORY) return oom(T);
  return corrupt(T, std::string(what) + webp_reason(rc));
}

/**
 * First frame of an animated WebP, decoded straight into a transparent canvas-sized buffer at the frame's offset
 * (the frame is blended onto a transparent canvas, so blending is a copy). Only the canvas is allocated — never the
 * animation decoder's two canvases and per-frame buffers.
 */
Status decode_webp_animated(const uint8_t* d, size_t len, const MediaInfo& info, Pixels* out) {
  const MediaType T = MediaType::Webp;
  WebPData wd{d, len};
  WebPDemuxerHandle demux(WebPDemux(&wd));
  if (!demux) return corrupt(T, "invalid animation container");
  if (WebPDemuxGetI(demux.get(), WEBP_FF_CANVAS_WIDTH) != info.width ||
      WebPDemuxGetI(demux.get(), WEBP_FF_CANVAS_HEIGHT) != info.height)
    return corrupt(T, "animation canvas differs from the header");
  WebPIterator it;
  if (!WebPDemuxGetFrame(demux.get(), 1, &it)) return corrupt(T, "no first animation frame");
  std::unique_ptr<WebPIterator, void (*)(WebPIterator*)> iter(&it, WebPDemuxReleaseIterator);
  if (it.width <= 0 || it.height <= 0 || it.x_offset < 0 || it.y_offset < 0 ||
      uint64_t(it.x_offset) + uint64_t(it.width) > info.width || uint64_t(it.y_offset) + uint64_t(it.height) > info.height)
    return corrupt(T, "first frame lies outside the canvas");
  if (!alloc_owned(size_t(info.width) * info.height * 4, &out->data)) return oom(T);
  panto_budget_zero_fresh(out->data.data, out->data.size);  // transparent canvas (fresh pages are already zero)
  WebPDecoderConfig config;
  if (!WebPInitDecoderConfig(&config)) return Status::Err("ERR_INTERNAL", "libwebp version mismatch", T);
  const size_t stride = size_t(info.width) * 4;
  config.output.colorspace = MODE_RGBA;
  config.output.is_external_memory = 1;
  config.output.u.RGBA.rgba = out->data.data + size_t(it.y_offset) * stride + size_t(it.x_offset) * 4;
  config.output.u.RGBA.stride = int(stride);
  config.output.u.RGBA.size = stride * size_t(it.height - 1) + size_t(it.width) * 4;
  VP8StatusCode rc = webp_decode_abortable(it.fragment.bytes, it.fragment.size, &config);
  if (rc != VP8_STATUS_OK) {
    out->data.reset();
    return webp_failure(rc, "first frame: ");
  }
  out->width = info.width;
  out->height = info.height;
  out->channels = 4;
  return Status::Ok();
}

Status decode_webp(const uint8_t* d, size_t len, const MediaInfo& info, Pixels* out, uint32_t tw, uint32_t th) {
  const MediaType T = MediaType::Webp;
  if (info.frames > 1) return decode_webp_animated(d, len, info, out);
  WebPDecoderConfig config;
  if (!WebPInitDecoderConfig(&config)) return Status::Err("ERR_INTERNAL", "libwebp version mismatch", T);
  VP8StatusCode rc = WebPGetFeatures(d, len, &config.input);
  if (rc != VP8_STATUS_OK) return corrupt(T, webp_reason(rc));
  if (config.input.has_animation) return decode_webp_animated(d, len, info, out);
  int c = info.has_alpha ? 4 : 3;
  const bool scaled = webp_scales_on_decode(info, tw, th);
  const uint32_t w = scaled ? tw : info.width, h = scaled ? th : info.height;
  if (!alloc_owned(size_t(w) * h * c, &out->data)) return oom(T);
  config.output.colorspace = c == 4 ? MODE_RGBA : MODE_RGB;
  config.output.is_external_memory = 1;
  config.output.u.RGBA.rgba = out->data.data;
  config.output.u.RGBA.stride = int(w) * c;
  config.output.u.RGBA.size = out->data.size;
  if (scaled) {
    config.options.use_scaling = 1;
    config.options.scaled_width = int(w);
    config.options.scaled_height = int(h);
  }
  rc = webp_decode_abortable(d, len, &config);
  if (rc != VP8_STATUS_OK) {
    out->data.reset();
    return webp_failure(rc, "");
  }
  out->width = w;
  out->height = h;
  out->channels = c;
  return Status::Ok();
}

}  // namespace

Status decode_webp_yuv(const uint8_t* d, size_t len, const MediaInfo& info, uint32_t tw, uint32_t th,
                       WebPPicture* pic) {
  const MediaType T = MediaType::Webp;
  if (!webp_scales_on_decode(info, tw, th))
    return Status::Err("ERR_INTERNAL", "WebP YUV decode outside libwebp's scaled decode", T);
  WebPDecoderConfig config;
  if (!WebPInitDecoderConfig(&config)) return Status::Err("ERR_INTERNAL", "libwebp version mismatch", T);
  VP8StatusCode rc = WebPGetFeatures(d, len, &config.input);
  if (rc != VP8_STATUS_OK) return corrupt(T, webp_reason(rc));
  if (config.input.has_animation) return Status::Err("ERR_INTERNAL", "WebP YUV decode of an animation", T);
  pic->use_argb = 0;
  pic->colorspace = WEBP_YUV420;
  pic->width = int(tw);
  pic->height = int(th);
  if (!WebPPictureAlloc(pic)) return oom(T);
  WebPYUVABuffer& yuv = config.output.u.YUVA;
  const size_t uv_h = (size_t(th) + 1) / 2;
  config.output.colorspace = MODE_YUV;
  config.output.is_external_memory = 1;
  yuv.y = pic->y, yuv.y_stride = pic->y_stride, yuv.y_size = size_t(pic->y_stride) * th;
  yuv.u = pic->u, yuv.u_stride = pic->uv_stride, yuv.u_size = size_t(pic->uv_stride) * uv_h;
  yuv.v = pic->v, yuv.v_stride = pic->uv_stride, yuv.v_size = size_t(pic->uv_stride) * uv_h;
  config.options.use_scaling = 1;
  config.options.scaled_width = int(tw);
  config.options.scaled_height = int(th);
  rc = webp_decode_abortable(d, len, &config);
  return rc == VP8_STATUS_OK ? Status::Ok() : webp_failure(rc, "");
}

Status webp_yuv_to_pixels(WebPPicture* pic, Pixels* out) {
  const MediaType T = MediaType::Webp;
  if (!WebPPictureYUVAToARGB(pic)) return oom(T);
  const uint32_t w = uint32_t(pic->width), h = uint32_t(pic->height);
  if (!alloc_owned(size_t(w) * h * 3, &out->data)) return oom(T);
  for (uint32_t y = 0; y < h; y++) {
    const uint32_t* src = pic->argb + size_t(y) * uint32_t(pic->argb_stride);
    uint8_t* dst = out->data.data + size_t(y) * w * 3;
    for (uint32_t x = 0; x < w; x++) {
      const uint32_t p = src[x];  // 0xAARRGGBB
      dst[x * 3] = uint8_t(p >> 16), dst[x * 3 + 1] = uint8_t(p >> 8), dst[x * 3 + 2] = uint8_t(p);
    }
  }
  out->width = w, out->height = h, out->channels = 3;
  return Status::Ok();
}

bool webp_scales_on_decode(const MediaInfo& info, uint32_t tw, uint32_t th) {
  return info.type == MediaType::Webp && info.frames <= 1 && !info.animated && !info.has_alpha && tw > 0 && th > 0 &&
         tw <= info.width && th <= info.height && (tw < info.width || th < info.height);
}

Status decode_image(const uint8_t* d, size_t len, const MediaInfo& info, Pixels* out, int jpeg_eighths,
                    uint32_t png_shrink, uint32_t webp_w, uint32_t webp_h) {
  switch (info.type) {
    case MediaType::Png: {
      bool not_handled = false;
      Status s = decode_png(d, len, info, png_shrink, out, &not_handled);
      if (!not_handled) return s;
      if (should_abort()) return Status::Err("ERR_ABORTED", "processing was aborted", info.type);
      return decode_stb(d, len, info, out);
    }
    case MediaType::Jpeg: return decode_jpeg(d, len, info, jpeg_eighths, out);
    case MediaType::Gif:
    case MediaType::Bmp: return decode_stb(d, len, info, out);
    case MediaType::Webp: return decode_webp(d, len, info, out, webp_w, webp_h);
    default:
      return Status::Err("ERR_UNSUPPORTED_MEDIA", std::string(mime_of(info.type)) + " cannot be decoded", info.type);
  }
}

}  // namespace panto
