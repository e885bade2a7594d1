// Half-size JPEG decode over stb's block hook (stb-jpeg-blocks.h): each inverse-transformed 8x8 block is averaged 2x2
// into a half-resolution plane per component; the colour conversion then runs at half resolution.
#include "jpeg-half.h"

#include <stb/stb_image.h>

#include <climits>
#include <cstring>
#include <string>

#include "budget.h"
#include "stb-jpeg-blocks.h"

namespace panto {
namespace {

struct HalfPlane {
  const uint8_t* full = nullptr;  // stb's component plane this half plane belongs to
  int full_w2 = 0, full_h2 = 0;
  OwnedBytes half;  // (w2/2) x (h2/2)
};

struct HalfJpeg {
  HalfPlane planes[4];
  bool failed = false;
};

void on_block(void* ctx, const panto_jpeg_frame* f, const unsigned char* out, int out_stride,
              const unsigned char block[64]) {
  auto* h = static_cast<HalfJpeg*>(ctx);
  for (int k = 0; k < f->components && k < 4; k++) {
    HalfPlane& p = h->planes[k];
    const panto_jpeg_component& c = f->comp[k];
    if (!c.plane) continue;
    if (p.full != c.plane) {  // first block of this component: set up its half plane
      p.full = c.plane;
      p.full_w2 = c.w2;
      p.full_h2 = c.h2;
      if (!alloc_owned(size_t(c.w2 / 2) * size_t(c.h2 / 2), &p.half)) h->failed = true;
    }
    // Integer address arithmetic: `out` may point into another component's plane.
    const uintptr_t o = reinterpret_cast<uintptr_t>(out), b0 = reinterpret_cast<uintptr_t>(c.plane);
    if (out_stride != c.w2 || o < b0 || o - b0 >= uintptr_t(c.w2) * uintptr_t(c.h2)) continue;
    if (!p.half.data) return;
    const size_t off = size_t(o - b0);
    const int y = int(off / size_t(c.w2)), x = int(off % size_t(c.w2));
    const int hw = c.w2 / 2;
    uint8_t* dst = p.half.data + size_t(y / 2) * hw + x / 2;
    for (int r = 0; r < 4; r++) {
      const unsigned char* a = block + r * 16;
      for (int col = 0; col < 4; col++)
        dst[r * hw + col] = uint8_t((a[2 * col] + a[2 * col + 1] + a[8 + 2 * col] + a[8 + 2 * col + 1] + 2) >> 2);
    }
    return;
  }
}

inline uint8_t clamp255(int v) { return uint8_t(v < 0 ? 0 : v > 255 ? 255 : v); }

/** log2 of 1, 2 or 4; -1 otherwise. */
inline int log2_exact(int v) { return v == 1 ? 0 : v == 2 ? 1 : v == 4 ? 2 : -1; }

Status failure(MediaType t) {
  Budget* b = current_budget();
  const char* why = stbi_failure_reason();
  const std::string reason = why ? why : "decode failed";
  if ((b && b->exceeded.load()) || reason == "outofmem")
    return Status::Err("ERR_MEDIA_TOO_LARGE",
                       std::string(mime_of(t)) + " needs more memory to decode than its header implies (budget exceeded)",
                       t);
  if (reason == "aborted" || should_abort()) return Status::Err("ERR_ABORTED", "processing was aborted", t);
  return Status::Err("ERR_CORRUPT_MEDIA", std::string(mime_of(t)) + " is corrupt: " + reason, t);
}

}  // namespace

Status decode_jpeg_half(const uint8_t* d, size_t len, const MediaInfo& info, Pixels* out, bool* unsupported) {
  const MediaType T = MediaType::Jpeg;
  *unsupported = false;
  if (len > size_t(INT_MAX)) return Status::Err("ERR_MEDIA_TOO_LARGE", "input over 2 GiB", T);
  HalfJpeg ctx;
  panto_jpeg_frame f{};
  if (!panto_stb_jpeg_decode_blocks(d, int(len), on_block, &ctx, &f)) return failure(T);
  if (ctx.failed)
    return Status::Err("ERR_MEDIA_TOO_LARGE", "image/jpeg needs more memory to decode than its header implies", T);
  const int n = f.components;
  bool usable = (n == 1 || n == 3);
  int hs[3] = {0, 0, 0}, vs[3] = {0, 0, 0}, hw[3] = {0, 0, 0};
  for (int k = 0; k < n && usable; k++) {
    const panto_jpeg_component& c = f.comp[k];
    usable = ctx.planes[k].half.data != nullptr && ctx.planes[k].full == c.plane && f.h_max % c.h == 0 &&
             f.v_max % c.v == 0 && log2_exact(f.h_max / c.h) >= 0 && log2_exact(f.v_max / c.v) >= 0;
    if (usable) {
      hs[k] = log2_exact(f.h_max / c.h);
      vs[k] = log2_exact(f.v_max / c.v);
      hw[k] = ctx.planes[k].full_w2 / 2;
    }
  }
  if (!usable) {
    *unsupported = true;
    return Status::Ok();
  }
  const uint32_t W = (uint32_t(f.width) + 1) / 2, H = (uint32_t(f.height) + 1) / 2;
  if (W != (info.width + 1) / 2 || H != (info.height + 1) / 2)
    return Status::Err("ERR_CORRUPT_MEDIA", "image/jpeg is corrupt: decoded size differs from the header", T);
  if (!alloc_owned(size_t(W) * H * 3, &out->data))
    return Status::Err("ERR_MEDIA_TOO_LARGE", "image/jpeg needs more memory to decode than its header implies", T);
  // Subsampling factors are powers of two (checked above), so plane coordinates are shifts.
  for (uint32_t y = 0; y < H; y++) {
    uint8_t* o = out->data.data + size_t(y) * W * 3;
    const uint8_t* yr = ctx.planes[0].half.data + size_t(y >> vs[0]) * hw[0];
    if (n == 1) {
      for (uint32_t x = 0; x < W; x++, o += 3) o[0] = o[1] = o[2] = yr[x >> hs[0]];
      continue;
    }
    const uint8_t* cbr = ctx.planes[1].half.data + size_t(y >> vs[1]) * hw[1];
    const uint8_t* crr = ctx.planes[2].half.data + size_t(y >> vs[2]) * hw[2];
    if (f.is_rgb) {
      for (uint32_t x = 0; x < W; x++, o += 3) {
        o[0] = yr[x >> hs[0]];
        o[1] = cbr[x >> hs[1]];
        o[2] = crr[x >> hs[2]];
      }
      continue;
    }
    if (hs[0] == 0 && hs[1] == 1 && hs[2] == 1) {
      // 4:2:0 / 4:2:2: one chroma pair per two pixels.
      for (uint32_t x = 0; x < W; x += 2) {
        const int cb = cbr[x >> 1] - 128, cr = crr[x >> 1] - 128;
        const int dr = cr * 91881, dg = -cb * 22554 - cr * 46802, db = cb * 116130;
        for (uint32_t i = 0; i < 2 && x + i < W; i++, o += 3) {
          const int yy = (yr[x + i] << 16) + (1 << 15);
          o[0] = clamp255((yy + dr) >> 16);
          o[1] = clamp255((yy + dg) >> 16);
          o[2] = clamp255((yy + db) >> 16);
        }
      }
      continue;
    }
    for (uint32_t x = 0; x < W; x++, o += 3) {
      // JFIF YCbCr -> RGB, 16.16 fixed point (same coefficients as stb's converter).
      const int yy = (yr[x >> hs[0]] << 16) + (1 << 15);
      const int cb = cbr[x >> hs[1]] - 128, cr = crr[x >> hs[2]] - 128;
      o[0] = clamp255((yy + cr * 91881) >> 16);
      o[1] = clamp255((yy - cb * 22554 - cr * 46802) >> 16);
      o[2] = clamp255((yy + cb * 116130) >> 16);
    }
  }
  out->width = W;
  out->height = H;
  out->channels = 3;
  return Status::Ok();
}

}  // namespace panto
