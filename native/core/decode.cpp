// First-frame decode of PNG/JPEG/GIF/BMP (stb_image 2.30, budgeted allocations) and WebP (libwebp; animated WebP
// through the demux animation decoder). Callers check the pixel cap from the header first.
#include <stb/stb_image.h>
#include <webp/decode.h>
#include <webp/demux.h>

#include <climits>
#include <cstring>
#include <string>

#include "budget.h"
#include "internal.h"

extern "C" unsigned char* panto_jpeg_decode_half(const unsigned char* buf, int len, int* out_w, int* out_h,
                                                 int* unsupported);

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

Status decode_stb(const uint8_t* d, size_t len, const MediaInfo& info, Pixels* out) {
  if (len > size_t(INT_MAX)) return Status::Err("ERR_MEDIA_TOO_LARGE", "input over 2 GiB", info.type);
  int w = 0, h = 0, n = 0;
  int req = info.has_alpha ? 4 : 3;
  Budget* b = current_budget();
  stbi_uc* p = stbi_load_from_memory(d, int(len), &w, &h, &n, req);
  if (!p) {
    if (b && b->exceeded) return oom(info.type);
    const char* why = stbi_failure_reason();
    std::string reason = why ? why : "decode failed";
    if (reason == "outofmem") return oom(info.type);
    return corrupt(info.type, reason);
  }
  out->data.data = p;
  out->data.size = size_t(w) * size_t(h) * size_t(req);
  out->data.release = budget_release;
  if (uint32_t(w) != info.width || uint32_t(h) != info.height)
    return corrupt(info.type, "decoded size differs from the header");
  out->width = uint32_t(w);
  out->height = uint32_t(h);
  out->channels = req;
  return Status::Ok();
}

/** JPEG at half size (DCT-block averaging); `*fallback` when the layout needs the full-size decoder. */
Status decode_jpeg_half(const uint8_t* d, size_t len, const MediaInfo& info, Pixels* out, bool* fallback) {
  *fallback = false;
  if (len > size_t(INT_MAX)) return Status::Err("ERR_MEDIA_TOO_LARGE", "input over 2 GiB", info.type);
  int w = 0, h = 0, unsupported = 0;
  Budget* b = current_budget();
  unsigned char* p = panto_jpeg_decode_half(d, int(len), &w, &h, &unsupported);
  if (!p) {
    if (unsupported) {
      *fallback = true;
      return Status::Ok();
    }
    if (b && b->exceeded) return oom(info.type);
    const char* why = stbi_failure_reason();
    std::string reason = why ? why : "decode failed";
    if (reason == "outofmem") return oom(info.type);
    return corrupt(info.type, reason);
  }
  out->data.data = p;
  out->data.size = size_t(w) * size_t(h) * 3;
  out->data.release = budget_release;
  if (uint32_t(w) != (info.width + 1) / 2 || uint32_t(h) != (info.height + 1) / 2)
    return corrupt(info.type, "decoded size differs from the header");
  out->width = uint32_t(w);
  out->height = uint32_t(h);
  out->channels = 3;
  return Status::Ok();
}

Status decode_webp_animated(const uint8_t* d, size_t len, const MediaInfo& info, Pixels* out) {
  const MediaType T = MediaType::Webp;
  WebPAnimDecoderOptions o;
  if (!WebPAnimDecoderOptionsInit(&o)) return Status::Err("ERR_INTERNAL", "libwebp version mismatch", T);
  o.color_mode = MODE_RGBA;
  o.use_threads = 0;
  WebPData wd{d, len};
  WebPAnimDecoder* dec = WebPAnimDecoderNew(&wd, &o);
  if (!dec) return corrupt(T, "invalid animation");
  uint8_t* frame = nullptr;
  int ts = 0;
  Status s = Status::Ok();
  WebPAnimInfo ai;
  if (!WebPAnimDecoderGetInfo(dec, &ai) || ai.canvas_width != info.width || ai.canvas_height != info.height) {
    s = corrupt(T, "animation canvas differs from the header");
  } else if (!WebPAnimDecoderGetNext(dec, &frame, &ts) || !frame) {
    s = corrupt(T, "first animation frame does not decode");
  } else if (!alloc_owned(size_t(info.width) * info.height * 4, &out->data)) {
    s = oom(T);
  } else {
    std::memcpy(out->data.data, frame, out->data.size);
    out->width = info.width;
    out->height = info.height;
    out->channels = 4;
  }
  WebPAnimDecoderDelete(dec);
  return s;
}

Status decode_webp(const uint8_t* d, size_t len, const MediaInfo& info, Pixels* out) {
  const MediaType T = MediaType::Webp;
  if (info.frames > 1) return decode_webp_animated(d, len, info, out);
  WebPDecoderConfig config;
  if (!WebPInitDecoderConfig(&config)) return Status::Err("ERR_INTERNAL", "libwebp version mismatch", T);
  VP8StatusCode rc = WebPGetFeatures(d, len, &config.input);
  if (rc != VP8_STATUS_OK) return corrupt(T, webp_reason(rc));
  if (config.input.has_animation) return decode_webp_animated(d, len, info, out);
  int c = info.has_alpha ? 4 : 3;
  if (!alloc_owned(size_t(info.width) * info.height * c, &out->data)) return oom(T);
  config.output.colorspace = c == 4 ? MODE_RGBA : MODE_RGB;
  config.output.is_external_memory = 1;
  config.output.u.RGBA.rgba = out->data.data;
  config.output.u.RGBA.stride = int(info.width) * c;
  config.output.u.RGBA.size = out->data.size;
  rc = WebPDecode(d, len, &config);
  WebPFreeDecBuffer(&config.output);
  if (rc != VP8_STATUS_OK) {
    out->data.reset();
    return corrupt(T, webp_reason(rc));
  }
  out->width = info.width;
  out->height = info.height;
  out->channels = c;
  return Status::Ok();
}

}  // namespace

Status decode_image(const uint8_t* d, size_t len, const MediaInfo& info, Pixels* out, bool half) {
  if (half && info.type == MediaType::Jpeg) {
    bool fallback = false;
    Status s = decode_jpeg_half(d, len, info, out, &fallback);
    if (!fallback) return s;
  }
  switch (info.type) {
    case MediaType::Png:
    case MediaType::Jpeg:
    case MediaType::Gif:
    case MediaType::Bmp: return decode_stb(d, len, info, out);
    case MediaType::Webp: return decode_webp(d, len, info, out);
    default:
      return Status::Err("ERR_UNSUPPORTED_MEDIA", std::string(mime_of(info.type)) + " cannot be decoded", info.type);
  }
}

}  // namespace panto
