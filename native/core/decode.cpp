// First-frame decode of PNG/GIF/BMP (stb_image 2.30, budgeted allocations), JPEG (libjpeg-turbo, jpeg-decode.cpp) and WebP (libwebp; animated WebP
// through the demux animation decoder). Callers check the pixel cap from the header first.
#include <libdeflate.h>
#include <stb/stb_image.h>
#include <webp/decode.h>
#include <webp/demux.h>

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

/**
 * Fast path for the common PNG (8- or 16-bit RGB without tRNS, or RGBA; not interlaced): libdeflate inflates all
 * IDAT data in one call into a buffer of exactly the expected size (the only pixel allocation), rows are unfiltered
 * and compacted in place, 16-bit samples then narrowed to their high byte in place. Other layouts are NotHandled
 * (stb decodes them). Data that does not inflate to exactly the image, or an unknown filter, is Corrupt (libpng
 * refuses them too; stb is never retried on them, so the estimate of cost.cpp holds).
 */
enum class FastPng { Decoded, NotHandled, Corrupt, OutOfMemory, Aborted };

FastPng decode_png_fast(const uint8_t* d, size_t len, const MediaInfo& info, Pixels* out) {
  if (len < 33 || (d[24] != 8 && d[24] != 16) || d[28] != 0) return FastPng::NotHandled;
  const uint8_t ct = d[25];
  const int bytes_per_sample = d[24] / 8;
  int channels;
  if (ct == 6) channels = 4;
  else if (ct == 2 && !info.has_alpha) channels = 3;
  else return FastPng::NotHandled;
  const int bpp = channels * bytes_per_sample;  // filter unit: bytes per pixel
  // Gather the IDAT payload (one chunk is used in place; several are concatenated).
  std::vector<std::pair<size_t, size_t>> idats;
  size_t total = 0;
  for (size_t i = 8; i + 12 <= len;) {
    uint32_t n = be32(d + i);
    if (n > len - i - 12) return FastPng::NotHandled;
    if (!std::memcmp(d + i + 4, "IDAT", 4)) {
      idats.emplace_back(i + 8, n);
      total += n;
    } else if (!std::memcmp(d + i + 4, "IEND", 4)) {
      break;
    }
    i += 12 + size_t(n);
  }
  if (idats.empty()) return FastPng::NotHandled;
  const size_t row = size_t(info.width) * bpp;
  const size_t raw_size = (row + 1) * info.height;
  OwnedBytes joined;
  const uint8_t* z = d + idats[0].first;
  if (idats.size() > 1) {
    if (!alloc_owned(total, &joined)) return FastPng::OutOfMemory;
    size_t o = 0;
    for (auto& [off, n] : idats) {
      std::memcpy(joined.data + o, d + off, n);
      o += n;
    }
    z = joined.data;
  }
  OwnedBytes raw;
  if (!alloc_owned(raw_size, &raw)) return FastPng::OutOfMemory;
  DeflateDecompressor dec(libdeflate_alloc_decompressor());
  if (!dec) return FastPng::OutOfMemory;
  size_t got = 0;
  libdeflate_result rc = libdeflate_zlib_decompress(dec.get(), z, total, raw.data, raw_size, &got);
  dec.reset();
  joined.reset();
  // A stream that produces more than the image needs is corrupt (never a reason to allocate more); one that is short
  // or damaged goes to stb, which reports its own reason.
  if (rc != LIBDEFLATE_SUCCESS || got != raw_size) return FastPng::Corrupt;
  uint8_t* base = raw.data;
  const uint8_t* prev = nullptr;  // previous unfiltered row (already compacted)
  for (uint32_t y = 0; y < info.height; y++) {
    if ((y & 63) == 0 && should_abort()) return FastPng::Aborted;
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
      default: return FastPng::Corrupt;
    }
    prev = dst;
  }
  const size_t samples = size_t(info.width) * info.height * channels;
  if (bytes_per_sample == 2)
    for (size_t i = 0; i < samples; i++) base[i] = base[2 * i];  // big-endian: keep the high byte (forward-safe)
  raw.size = samples;
  out->data = std::move(raw);
  out->width = info.width;
  out->height = info.height;
  out->channels = channels;
  return FastPng::Decoded;
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
  VP8StatusCode rc = WebPDecode(it.fragment.bytes, it.fragment.size, &config);
  WebPFreeDecBuffer(&config.output);
  if (rc != VP8_STATUS_OK) {
    out->data.reset();
    return rc == VP8_STATUS_OUT_OF_MEMORY ? oom(T) : corrupt(T, std::string("first frame: ") + webp_reason(rc));
  }
  out->width = info.width;
  out->height = info.height;
  out->channels = 4;
  return Status::Ok();
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
    return rc == VP8_STATUS_OUT_OF_MEMORY ? oom(T) : corrupt(T, webp_reason(rc));
  }
  out->width = info.width;
  out->height = info.height;
  out->channels = c;
  return Status::Ok();
}

}  // namespace

Status decode_image(const uint8_t* d, size_t len, const MediaInfo& info, Pixels* out, int jpeg_eighths) {
  switch (info.type) {
    case MediaType::Png:
      switch (decode_png_fast(d, len, info, out)) {
        case FastPng::Decoded: return Status::Ok();
        case FastPng::Corrupt:
          out->data.reset();
          return corrupt(info.type, "image data does not inflate to exactly the image (zlib stream or filters)");
        case FastPng::OutOfMemory: out->data.reset(); return oom(info.type);
        case FastPng::Aborted: out->data.reset(); return Status::Err("ERR_ABORTED", "processing was aborted", info.type);
        case FastPng::NotHandled: break;
      }
      out->data.reset();
      if (should_abort()) return Status::Err("ERR_ABORTED", "processing was aborted", info.type);
      return decode_stb(d, len, info, out);
    case MediaType::Jpeg: return decode_jpeg(d, len, info, jpeg_eighths, out);
    case MediaType::Gif:
    case MediaType::Bmp: return decode_stb(d, len, info, out);
    case MediaType::Webp: return decode_webp(d, len, info, out);
    default:
      return Status::Err("ERR_UNSUPPORTED_MEDIA", std::string(mime_of(info.type)) + " cannot be decoded", info.type);
  }
}

}  // namespace panto
