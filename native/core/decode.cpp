// First-frame decode of PNG/JPEG/GIF/BMP (stb_image 2.30, budgeted allocations) and WebP (libwebp; animated WebP
// through the demux animation decoder). Callers check the pixel cap from the header first.
#include <libdeflate.h>
#include <stb/stb_image.h>
#include <webp/decode.h>
#include <webp/demux.h>

#include <climits>
#include <cstdlib>
#include <utility>
#include <vector>
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

/** The error for a failed (NULL) stb decode: a refused budget allocation is too large, anything else corrupt. */
Status stb_failure(MediaType t) {
  Budget* b = current_budget();
  if (b && b->exceeded) return oom(t);
  const char* why = stbi_failure_reason();
  std::string reason = why ? why : "decode failed";
  if (reason == "outofmem") return oom(t);
  return corrupt(t, reason);
}

/** Takes ownership of a w x h x `channels` stb result (budget memory) and checks it has the expected size. */
Status adopt_stb_pixels(MediaType t, stbi_uc* p, int w, int h, int channels, uint32_t want_w, uint32_t want_h,
                        Pixels* out) {
  out->data.reset();
  out->data.data = p;
  out->data.size = size_t(w) * size_t(h) * size_t(channels);
  out->data.release = budget_release;
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

/** JPEG at half size (DCT-block averaging); `*fallback` when the layout needs the full-size decoder. */
Status decode_jpeg_half(const uint8_t* d, size_t len, const MediaInfo& info, Pixels* out, bool* fallback) {
  *fallback = false;
  if (len > size_t(INT_MAX)) return Status::Err("ERR_MEDIA_TOO_LARGE", "input over 2 GiB", info.type);
  int w = 0, h = 0, unsupported = 0;
  unsigned char* p = panto_jpeg_decode_half(d, int(len), &w, &h, &unsupported);
  if (!p) {
    if (unsupported) {
      *fallback = true;
      return Status::Ok();
    }
    return stb_failure(info.type);
  }
  return adopt_stb_pixels(info.type, p, w, h, 3, (info.width + 1) / 2, (info.height + 1) / 2, out);
}

/**
 * Fast path for the common PNG (8-bit RGB without tRNS, or 8-bit RGBA; not interlaced): libdeflate inflates all IDAT
 * data in one call into a buffer of exactly the expected size, rows are unfiltered and compacted in place. Anything
 * else, or any irregularity, returns false so that stb decodes it (and reports its own error).
 */
bool decode_png_fast(const uint8_t* d, size_t len, const MediaInfo& info, Pixels* out) {
  if (len < 33 || d[24] != 8 || d[28] != 0) return false;
  const uint8_t ct = d[25];
  int bpp;
  if (ct == 6) bpp = 4;
  else if (ct == 2 && !info.has_alpha) bpp = 3;
  else return false;
  // Gather the IDAT payload (one chunk is used in place; several are concatenated).
  std::vector<std::pair<size_t, size_t>> idats;
  size_t total = 0;
  for (size_t i = 8; i + 12 <= len;) {
    uint32_t n = be32(d + i);
    if (n > len - i - 12) return false;
    if (!std::memcmp(d + i + 4, "IDAT", 4)) {
      idats.emplace_back(i + 8, n);
      total += n;
    } else if (!std::memcmp(d + i + 4, "IEND", 4)) {
      break;
    }
    i += 12 + size_t(n);
  }
  if (idats.empty()) return false;
  const size_t row = size_t(info.width) * bpp;
  const size_t raw_size = (row + 1) * info.height;
  OwnedBytes joined;
  const uint8_t* z = d + idats[0].first;
  if (idats.size() > 1) {
    if (!alloc_owned(total, &joined)) return false;
    size_t o = 0;
    for (auto& [off, n] : idats) {
      std::memcpy(joined.data + o, d + off, n);
      o += n;
    }
    z = joined.data;
  }
  OwnedBytes raw;
  if (!alloc_owned(raw_size, &raw)) return false;
  libdeflate_decompressor* dec = libdeflate_alloc_decompressor();
  if (!dec) return false;
  size_t got = 0;
  libdeflate_result rc = libdeflate_zlib_decompress(dec, z, total, raw.data, raw_size, &got);
  libdeflate_free_decompressor(dec);
  joined.reset();
  if (rc != LIBDEFLATE_SUCCESS || got != raw_size) return false;
  uint8_t* base = raw.data;
  const uint8_t* prev = nullptr;  // previous unfiltered row (already compacted)
  for (uint32_t y = 0; y < info.height; y++) {
    const uint8_t f = base[size_t(y) * (row + 1)];
    const uint8_t* src = base + size_t(y) * (row + 1) + 1;
    uint8_t* dst = base + size_t(y) * row;  // dst <= src: forward in-place compaction is safe
    switch (f) {
      case 0: std::memmove(dst, src, row); break;
      case 1:
        std::memmove(dst, src, row);
        for (size_t i = bpp; i < row; i++) dst[i] = uint8_t(dst[i] + dst[i - bpp]);
        break;
      case 2:
        if (prev)
          for (size_t i = 0; i < row; i++) dst[i] = uint8_t(src[i] + prev[i]);
        else std::memmove(dst, src, row);
        break;
      case 3:
        for (size_t i = 0; i < row; i++) {
          int a = i >= size_t(bpp) ? dst[i - bpp] : 0, b = prev ? prev[i] : 0;
          dst[i] = uint8_t(src[i] + ((a + b) >> 1));
        }
        break;
      case 4:
        for (size_t i = 0; i < row; i++) {
          int a = i >= size_t(bpp) ? dst[i - bpp] : 0, b = prev ? prev[i] : 0;
          int c = prev && i >= size_t(bpp) ? prev[i - bpp] : 0;
          int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
          dst[i] = uint8_t(src[i] + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c));
        }
        break;
      default: return false;
    }
    prev = dst;
  }
  raw.size = row * info.height;
  out->data = std::move(raw);
  out->width = info.width;
  out->height = info.height;
  out->channels = bpp;
  return true;
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
      if (decode_png_fast(d, len, info, out)) return Status::Ok();
      out->data.reset();
      return decode_stb(d, len, info, out);
    case MediaType::Jpeg:
    case MediaType::Gif:
    case MediaType::Bmp: return decode_stb(d, len, info, out);
    case MediaType::Webp: return decode_webp(d, len, info, out);
    default:
      return Status::Err("ERR_UNSUPPORTED_MEDIA", std::string(mime_of(info.type)) + " cannot be decoded", info.type);
  }
}

}  // namespace panto
