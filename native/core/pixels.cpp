// Pixel-buffer operations: alpha checks, flatten, Mitchell resize (stb_image_resize2), EXIF orientation.
#include <stb/stb_image_resize2.h>

#include <cstring>
#include <utility>

#include "budget.h"
#include "internal.h"
#include "parallel.h"

namespace panto {

OwnedBytes& OwnedBytes::operator=(OwnedBytes&& o) noexcept {
  if (this != &o) {
    reset();
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    release_ = std::exchange(o.release_, nullptr);
  }
  return *this;
}

OwnedBytes OwnedBytes::adopt(uint8_t* p, size_t size, void (*release)(uint8_t*)) noexcept {
  OwnedBytes b;
  if (p) {
    b.data_ = p;
    b.size_ = size;
    b.release_ = release;
  }
  return b;
}

void OwnedBytes::reset() noexcept {
  if (data_ && release_) release_(data_);
  data_ = nullptr;
  size_ = 0;
  release_ = nullptr;
}

bool OwnedBytes::realloc_owned(size_t n) noexcept {
  if (data_ && release_ != budget_release) return false;
  void* p = panto_budget_realloc(data_, n ? n : 1);
  if (!p) return false;
  data_ = static_cast<uint8_t*>(p);
  size_ = n;
  release_ = budget_release;
  return true;
}

bool alloc_owned(size_t size, OwnedBytes* out) {
  out->reset();
  *out = OwnedBytes::adopt(static_cast<uint8_t*>(panto_budget_malloc(size ? size : 1)), size, budget_release);
  return out->data != nullptr;
}

bool alloc_owned_sparse(size_t size, OwnedBytes* out) {
  out->reset();
  *out = OwnedBytes::adopt(static_cast<uint8_t*>(panto_budget_malloc_sparse(size ? size : 1)), size, budget_release);
  return out->data != nullptr;
}

bool has_transparency(const Pixels& px) {
  if (px.channels != 4) return false;
  const uint8_t* p = px.data.data;
  size_t n = size_t(px.width) * px.height;
  uint8_t acc = 0xFF;
  for (size_t i = 0; i < n; i++) acc &= p[i * 4 + 3];
  return acc != 0xFF;
}

void drop_alpha(Pixels* px) {
  if (px->channels != 4) return;
  uint8_t* p = px->data.data;
  size_t n = size_t(px->width) * px->height;
  for (size_t i = 0; i < n; i++) {
    p[i * 3 + 0] = p[i * 4 + 0];
    p[i * 3 + 1] = p[i * 4 + 1];
    p[i * 3 + 2] = p[i * 4 + 2];
  }
  px->channels = 3;
  px->data.shrink_to(n * 3);
}

void flatten_on_white(Pixels* px) {
  if (px->channels != 4) return;
  uint8_t* p = px->data.data;
  size_t n = size_t(px->width) * px->height;
  for (size_t i = 0; i < n; i++) {
    unsigned a = p[i * 4 + 3];
    for (int c = 0; c < 3; c++) {
      unsigned v = p[i * 4 + c] * a + 255u * (255u - a);
      p[i * 3 + c] = uint8_t((v + 127) / 255);
    }
  }
  px->channels = 3;
  px->data.shrink_to(n * 3);
}

Status resize_pixels(const Pixels& in, uint32_t w, uint32_t h, Pixels* out) {
  if (!alloc_owned(size_t(w) * h * in.channels, &out->data))
    return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory budget while resizing");
  out->width = w;
  out->height = h;
  out->channels = in.channels;
  const stbir_pixel_layout layout = in.channels == 4 ? STBIR_RGBA : STBIR_RGB;
  // Output rows split in kRowParts parts (stb's split API): each part computes its rows from the same samplers and
  // coefficients, so the bytes do not depend on whether the parts run at once (parallel.h).
  STBIR_RESIZE r;
  stbir_resize_init(&r, in.data.data, int(in.width), int(in.height), int(in.width * in.channels), out->data.data,
                    int(w), int(h), int(w * in.channels), layout, STBIR_TYPE_UINT8);
  stbir_set_edgemodes(&r, STBIR_EDGE_CLAMP, STBIR_EDGE_CLAMP);
  stbir_set_filters(&r, STBIR_FILTER_MITCHELL, STBIR_FILTER_MITCHELL);
  const int parts = stbir_build_samplers_with_splits(&r, kRowParts);
  if (parts <= 0) return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory budget while resizing");
  int ok[kRowParts] = {};
  run_parts(parts, [&](int i) { ok[i] = stbir_resize_extended_split(&r, i, 1); });
  stbir_free_samplers(&r);
  for (int i = 0; i < parts; i++)
    if (!ok[i]) return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory budget while resizing");
  return Status::Ok();
}

Status orient_pixels(const Pixels& in, int o, Pixels* out) {
  const uint32_t W = in.width, H = in.height;
  const int C = in.channels;
  const bool swap = o >= 5;
  if (!alloc_owned(size_t(W) * H * C, &out->data))
    return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory budget while orienting");
  out->width = swap ? H : W;
  out->height = swap ? W : H;
  out->channels = C;
  const uint8_t* src = in.data.data;
  uint8_t* dst = out->data.data;
  const uint32_t OW = out->width, OH = out->height;
  for (uint32_t oy = 0; oy < OH; oy++) {
    uint8_t* row = dst + size_t(oy) * OW * C;
    for (uint32_t ox = 0; ox < OW; ox++) {
      uint32_t sx, sy;
      switch (o) {
        case 2: sx = W - 1 - ox; sy = oy; break;
        case 3: sx = W - 1 - ox; sy = H - 1 - oy; break;
        case 4: sx = ox; sy = H - 1 - oy; break;
        case 5: sx = oy; sy = ox; break;
        case 6: sx = oy; sy = H - 1 - ox; break;
        case 7: sx = W - 1 - oy; sy = H - 1 - ox; break;
        case 8: sx = W - 1 - oy; sy = ox; break;
        default: sx = ox; sy = oy; break;
      }
      std::memcpy(row + size_t(ox) * C, src + (size_t(sy) * W + sx) * C, size_t(C));
    }
  }
  return Status::Ok();
}

}  // namespace panto
