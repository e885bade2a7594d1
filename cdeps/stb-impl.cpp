// The one translation unit that instantiates the stb header libraries (fetched by scripts/fetch-cdeps.mjs from
// Debian's libstb-dev; nothing third-party is committed). Configuration, and why:
// - Decoders limited to JPEG, PNG, GIF, BMP (STBI_ONLY_*): PIC/TGA/PSD/HDR/PNM carry open CVEs and no provider needs
//   them. No stdio. Each side capped by STBI_MAX_DIMENSIONS; width*height is capped by the caller from the header.
// - Every allocation goes through the per-call budget in native/core/budget.h (a decode that would exceed it fails).
// - The caller never uses stbi_load_gif_* (multi-frame path with open CVEs) or vertical flip (global state, CVE).
// - stb_image_write is used for JPEG only (PNG has its own encoder in native/core/png-encode.cpp); should its PNG
//   writer ever be called, it compresses with libdeflate rather than stb's own deflate.
// - stb_image_resize2 allocates through the budget too.
// - stb_image.h is patched at fetch time (cdeps/patches/stb/*.patch): out-of-range palette indices are black, PNG
//   inflates into an exact-size buffer (overrun = corrupt), GIF LZW without an initial clear code, BMP V3 bitfield
//   masks, and an abort hook between rows.
#include <libdeflate.h>

#include "budget.h"

#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#endif

#define STBI_ONLY_JPEG
#define STBI_ONLY_PNG
#define STBI_ONLY_GIF
#define STBI_ONLY_BMP
#define STBI_NO_STDIO
#define STBI_NO_LINEAR
#define STBI_NO_HDR
#define STBI_MAX_DIMENSIONS (1 << 16)
#define STBI_MALLOC(sz) panto_budget_malloc(sz)
#define STBI_REALLOC(p, newsz) panto_budget_realloc(p, newsz)
#define STBI_FREE(p) panto_budget_free(p)
// Polled between JPEG MCU rows and PNG rows (cdeps/patches/stb/0005): an aborted call stops there.
#define STBI_SHOULD_ABORT() panto_should_abort()
// Fresh mmapped blocks are already zero: a huge declared GIF canvas costs address space, not resident memory.
#define STBI_ZERO_FRESH(p, n) panto_budget_zero_fresh((p), (n))
#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>

// PNG deflate level for the current thread (libdeflate 1..12).
thread_local int panto_png_deflate_level = 6;

static unsigned char* panto_zlib_compress(unsigned char* data, int data_len, int* out_len, int /*quality*/) {
  *out_len = 0;
  struct libdeflate_compressor* c = libdeflate_alloc_compressor(panto_png_deflate_level);
  if (!c) return nullptr;
  size_t bound = libdeflate_zlib_compress_bound(c, static_cast<size_t>(data_len));
  auto* out = static_cast<unsigned char*>(panto_budget_malloc(bound));
  if (out) {
    size_t n = libdeflate_zlib_compress(c, data, static_cast<size_t>(data_len), out, bound);
    if (n == 0 || n > static_cast<size_t>(INT32_MAX)) {
      panto_budget_free(out);
      out = nullptr;
    } else {
      *out_len = static_cast<int>(n);
    }
  }
  libdeflate_free_compressor(c);
  return out;
}

#define STBIW_MALLOC(sz) panto_budget_malloc(sz)
#define STBIW_REALLOC(p, newsz) panto_budget_realloc(p, newsz)
#define STBIW_FREE(p) panto_budget_free(p)
#define STBIW_ZLIB_COMPRESS panto_zlib_compress
#define STBI_WRITE_NO_STDIO
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

#define STBIR_MALLOC(size, user_data) ((void)(user_data), panto_budget_malloc(size))
#define STBIR_FREE(ptr, user_data) ((void)(user_data), panto_budget_free(ptr))
#define STB_IMAGE_RESIZE_IMPLEMENTATION
#include <stb/stb_image_resize2.h>

// ---- JPEG decode at half scale -------------------------------------------------------------------------------------
// Our own driver over stb_image's JPEG internals (they are visible in this translation unit): entropy decoding and
// the 8x8 IDCT are stb's; each IDCT block is box-averaged 2x2 into a half-resolution plane per component, and the
// YCbCr->RGB conversion runs at half resolution. stb's full-resolution planes are allocated but never written, so
// they cost address space, not memory. Used when the target size is at most half the stored size (like libjpeg's
// scaled decode): it skips 3/4 of the colour conversion, upsampling and resize work.

namespace {

struct HalfPlane {
  const stbi_uc* full = nullptr;  // stb's component plane (identifies the component in the IDCT callback)
  int full_w2 = 0, full_h2 = 0;
  stbi_uc* half = nullptr;  // (w2/2) x (h2/2)
};

struct HalfJpeg {
  stbi__jpeg* j = nullptr;
  HalfPlane planes[4];
  bool failed = false;
};

thread_local HalfJpeg* tls_half = nullptr;

void half_idct_kernel(stbi_uc* out, int out_stride, short data[64]) {
  HalfJpeg* h = tls_half;
  stbi_uc block[64];
#ifdef STBI_SSE2
  stbi__idct_simd(block, 8, data);
#else
  stbi__idct_block(block, 8, data);
#endif
  for (int k = 0; k < h->j->s->img_n && k < 4; k++) {
    HalfPlane& p = h->planes[k];
    const stbi_uc* base = h->j->img_comp[k].data;
    if (!base) continue;
    if (p.full != base) {  // first block of this component: set up its half plane
      p.full = base;
      p.full_w2 = h->j->img_comp[k].w2;
      p.full_h2 = h->j->img_comp[k].h2;
      panto_budget_free(p.half);
      p.half = static_cast<stbi_uc*>(panto_budget_malloc(size_t(p.full_w2 / 2) * size_t(p.full_h2 / 2)));
      if (!p.half) h->failed = true;
    }
    // Integer address arithmetic: `out` may point into another component's plane.
    const uintptr_t o = reinterpret_cast<uintptr_t>(out), b0 = reinterpret_cast<uintptr_t>(base);
    if (out_stride != p.full_w2 || o < b0 || o - b0 >= uintptr_t(p.full_w2) * uintptr_t(p.full_h2)) continue;
    const size_t off = size_t(o - b0);
    if (!p.half) return;
    int y = int(off / size_t(p.full_w2)), x = int(off % size_t(p.full_w2));
    int hw = p.full_w2 / 2;
    stbi_uc* dst = p.half + size_t(y / 2) * hw + x / 2;
    for (int r = 0; r < 4; r++) {
      const stbi_uc* a = block + r * 16;
      for (int c = 0; c < 4; c++)
        dst[r * hw + c] = stbi_uc((a[2 * c] + a[2 * c + 1] + a[8 + 2 * c] + a[8 + 2 * c + 1] + 2) >> 2);
    }
    return;
  }
}

inline stbi_uc clamp255(int v) { return stbi_uc(v < 0 ? 0 : v > 255 ? 255 : v); }

/** log2 of 1, 2 or 4; -1 otherwise. */
inline int log2_exact(int v) { return v == 1 ? 0 : v == 2 ? 1 : v == 4 ? 2 : -1; }

}  // namespace

/**
 * Decodes a JPEG to RGB at half size (ceil(w/2) x ceil(h/2)), memory from the active budget (free with
 * panto_budget_free). Returns NULL with *unsupported = 1 for layouts this path does not handle (CMYK/YCCK, odd
 * sampling); the caller then uses the full-size decoder. Other NULL returns are decode errors (stbi_failure_reason).
 */
extern "C" unsigned char* panto_jpeg_decode_half(const unsigned char* buf, int len, int* out_w, int* out_h,
                                                 int* unsupported) {
  *unsupported = 0;
  stbi__context s;
  stbi__start_mem(&s, buf, len);
  auto* j = static_cast<stbi__jpeg*>(stbi__malloc(sizeof(stbi__jpeg)));
  if (!j) return stbi__errpuc("outofmem", "Out of memory");
  memset(j, 0, sizeof(stbi__jpeg));
  j->s = &s;
  stbi__setup_jpeg(j);
  j->idct_block_kernel = half_idct_kernel;
  HalfJpeg ctx;
  ctx.j = j;
  HalfJpeg* prev = tls_half;
  tls_half = &ctx;
  s.img_n = 0;
  int ok = stbi__decode_jpeg_image(j);
  tls_half = prev;
  unsigned char* result = nullptr;
  const int n = s.img_n;
  if (ok && ctx.failed) {
    stbi__err("outofmem", "Out of memory");
  } else if (ok) {
    const bool is_rgb = n == 3 && (j->rgb == 3 || (j->app14_color_transform == 0 && !j->jfif));
    bool usable = (n == 1 || n == 3);
    for (int k = 0; k < n && usable; k++) {
      usable = ctx.planes[k].half != nullptr && ctx.planes[k].full == j->img_comp[k].data &&
               j->img_h_max % j->img_comp[k].h == 0 && j->img_v_max % j->img_comp[k].v == 0 &&
               log2_exact(j->img_h_max / j->img_comp[k].h) >= 0 && log2_exact(j->img_v_max / j->img_comp[k].v) >= 0;
    }
    if (!usable) {
      *unsupported = 1;
    } else {
      const int W = int((s.img_x + 1) / 2), H = int((s.img_y + 1) / 2);
      result = static_cast<unsigned char*>(stbi__malloc_mad3(W, H, 3, 0));
      if (!result) {
        stbi__err("outofmem", "Out of memory");
      } else {
        // Subsampling factors are powers of two (checked above), so plane coordinates are shifts.
        int hs[3] = {0, 0, 0}, vs[3] = {0, 0, 0}, hw[3] = {0, 0, 0};
        for (int k = 0; k < n; k++) {
          hs[k] = log2_exact(j->img_h_max / j->img_comp[k].h);
          vs[k] = log2_exact(j->img_v_max / j->img_comp[k].v);
          hw[k] = ctx.planes[k].full_w2 / 2;
        }
        for (int y = 0; y < H; y++) {
          unsigned char* o = result + size_t(y) * W * 3;
          const stbi_uc* yr = ctx.planes[0].half + size_t(y >> vs[0]) * hw[0];
          if (n == 1) {
            for (int x = 0; x < W; x++, o += 3) o[0] = o[1] = o[2] = yr[x >> hs[0]];
            continue;
          }
          const stbi_uc* cbr = ctx.planes[1].half + size_t(y >> vs[1]) * hw[1];
          const stbi_uc* crr = ctx.planes[2].half + size_t(y >> vs[2]) * hw[2];
          if (is_rgb) {
            for (int x = 0; x < W; x++, o += 3) {
              o[0] = yr[x >> hs[0]];
              o[1] = cbr[x >> hs[1]];
              o[2] = crr[x >> hs[2]];
            }
            continue;
          }
          if (hs[0] == 0 && hs[1] == 1 && hs[2] == 1) {
            // 4:2:0 / 4:2:2: one chroma pair per two pixels.
            for (int x = 0; x < W; x += 2) {
              const int cb = cbr[x >> 1] - 128, cr = crr[x >> 1] - 128;
              const int dr = cr * 91881, dg = -cb * 22554 - cr * 46802, db = cb * 116130;
              for (int i = 0; i < 2 && x + i < W; i++, o += 3) {
                const int yy = (yr[x + i] << 16) + (1 << 15);
                o[0] = clamp255((yy + dr) >> 16);
                o[1] = clamp255((yy + dg) >> 16);
                o[2] = clamp255((yy + db) >> 16);
              }
            }
            continue;
          }
          for (int x = 0; x < W; x++, o += 3) {
            // JFIF YCbCr -> RGB, 16.16 fixed point (same coefficients as stb's converter).
            const int yy = (yr[x >> hs[0]] << 16) + (1 << 15);
            const int cb = cbr[x >> hs[1]] - 128, cr = crr[x >> hs[2]] - 128;
            o[0] = clamp255((yy + cr * 91881) >> 16);
            o[1] = clamp255((yy - cb * 22554 - cr * 46802) >> 16);
            o[2] = clamp255((yy + cb * 116130) >> 16);
          }
        }
        *out_w = W;
        *out_h = H;
      }
    }
  }
  for (HalfPlane& p : ctx.planes) panto_budget_free(p.half);
  stbi__cleanup_jpeg(j);
  STBI_FREE(j);
  return result;
}
