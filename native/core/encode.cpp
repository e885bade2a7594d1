// Encoders: JPEG (stb_image_write), PNG (stb_image_write filters + libdeflate), WebP (libwebp, lossy or lossless).
#include <webp/encode.h>

#include <cstring>

#include "budget.h"
#include "internal.h"

extern "C" unsigned char* stbi_write_png_to_mem(const unsigned char* pixels, int stride_bytes, int x, int y, int n,
                                                int* out_len);
extern "C" int stbi_write_jpg_to_func(void (*func)(void*, void*, int), void* context, int x, int y, int comp,
                                      const void* data, int quality);
extern thread_local int panto_png_deflate_level;

namespace panto {
namespace {

struct GrowBuf {
  uint8_t* data = nullptr;
  size_t size = 0;
  size_t cap = 0;
  bool failed = false;
};

void grow_write(void* ctx, void* src, int n) {
  auto* b = static_cast<GrowBuf*>(ctx);
  if (b->failed || n <= 0) return;
  if (b->size + size_t(n) > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 65536;
    while (cap < b->size + size_t(n)) cap *= 2;
    void* p = panto_budget_realloc(b->data, cap);
    if (!p) {
      b->failed = true;
      return;
    }
    b->data = static_cast<uint8_t*>(p);
    b->cap = cap;
  }
  std::memcpy(b->data + b->size, src, size_t(n));
  b->size += size_t(n);
}

void webp_release(uint8_t* p) { WebPFree(p); }

}  // namespace

Status encode_jpeg(const Pixels& px, int quality, OwnedBytes* out) {
  GrowBuf b;
  b.cap = size_t(px.width) * px.height / 4 + 65536;
  b.data = static_cast<uint8_t*>(panto_budget_malloc(b.cap));
  if (!b.data) return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory budget while encoding JPEG");
  int ok = stbi_write_jpg_to_func(grow_write, &b, int(px.width), int(px.height), px.channels, px.data.data, quality);
  if (!ok || b.failed) {
    panto_budget_free(b.data);
    return Status::Err("ERR_MEDIA_TOO_LARGE", "JPEG encoding failed (out of memory budget)");
  }
  out->reset();
  out->data = b.data;
  out->size = b.size;
  out->release = budget_release;
  return Status::Ok();
}

Status encode_png(const Pixels& px, OwnedBytes* out) {
  int n = 0;
  unsigned char* p = stbi_write_png_to_mem(px.data.data, int(px.width * px.channels), int(px.width), int(px.height),
                                           px.channels, &n);
  if (!p) return Status::Err("ERR_MEDIA_TOO_LARGE", "PNG encoding failed (out of memory budget)");
  out->reset();
  out->data = p;
  out->size = size_t(n);
  out->release = budget_release;
  return Status::Ok();
}

Status encode_webp(const Pixels& px, bool lossless, int quality, OwnedBytes* out) {
  WebPConfig config;
  if (!WebPConfigInit(&config)) return Status::Err("ERR_INTERNAL", "libwebp version mismatch");
  if (lossless) {
    WebPConfigLosslessPreset(&config, 1);
  } else {
    config.quality = float(quality);
    config.method = 4;
  }
  WebPPicture pic;
  if (!WebPPictureInit(&pic)) return Status::Err("ERR_INTERNAL", "libwebp version mismatch");
  pic.use_argb = lossless ? 1 : 0;
  pic.width = int(px.width);
  pic.height = int(px.height);
  int ok = px.channels == 4 ? WebPPictureImportRGBA(&pic, px.data.data, int(px.width * 4))
                            : WebPPictureImportRGB(&pic, px.data.data, int(px.width * 3));
  if (!ok) {
    WebPPictureFree(&pic);
    return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory while encoding WebP");
  }
  WebPMemoryWriter w;
  WebPMemoryWriterInit(&w);
  pic.writer = WebPMemoryWrite;
  pic.custom_ptr = &w;
  ok = WebPEncode(&config, &pic);
  WebPPictureFree(&pic);
  if (!ok) {
    WebPMemoryWriterClear(&w);
    return Status::Err("ERR_MEDIA_TOO_LARGE", "WebP encoding failed");
  }
  out->reset();
  out->data = w.mem;
  out->size = w.size;
  out->release = webp_release;
  return Status::Ok();
}

}  // namespace panto
