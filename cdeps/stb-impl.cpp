// The one translation unit that instantiates the stb header libraries (fetched by scripts/fetch-cdeps.mjs from
// Debian's libstb-dev; nothing third-party is committed). Configuration, and why:
// - Decoders limited to JPEG, PNG, GIF, BMP (STBI_ONLY_*): PIC/TGA/PSD/HDR/PNM carry open CVEs and no provider needs
//   them. No stdio. Each side capped by STBI_MAX_DIMENSIONS; width*height is capped by the caller from the header.
// - Every allocation goes through the per-call budget in native/core/budget.h (a decode that would exceed it fails).
// - The caller never uses stbi_load_gif_* (multi-frame path with open CVEs) or vertical flip (global state, CVE).
// - stb_image_write is used for JPEG only (PNG has its own encoder in native/core/png-encode.cpp); should its PNG
//   writer ever be called, it compresses with libdeflate rather than stb's own deflate.
// - stb_image_resize2 allocates through the budget too.
// - It also exports one hook over stb's JPEG internals (native/core/stb-jpeg-blocks.h); project logic built on it
//   lives in native/core.
// - stb_image.h is patched at fetch time (cdeps/patches/stb/*.patch): out-of-range palette indices are black, PNG
//   inflates into an exact-size buffer (overrun = corrupt), GIF LZW without an initial clear code, BMP V3 bitfield
//   masks, and an abort hook between rows (JPEG, PNG) and GIF LZW data sub-blocks.
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
// Polled between JPEG MCU rows, PNG rows (cdeps/patches/stb/0005) and GIF LZW sub-blocks (0007): an aborted call
// stops there.
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

// ---- JPEG block hook (native/core/stb-jpeg-blocks.h) ---------------------------------------------------------------
// The only code here that touches stb's JPEG internals: it swaps stb's IDCT kernel for one that hands each
// inverse-transformed block to the caller. The half-size driver that uses it is project logic (native/core/jpeg-half.cpp).

#include "stb-jpeg-blocks.h"

namespace {

struct BlockHook {
  stbi__jpeg* j = nullptr;
  panto_jpeg_block_fn fn = nullptr;
  void* ctx = nullptr;
  panto_jpeg_frame frame{};
};

thread_local BlockHook* tls_hook = nullptr;

void fill_frame(const stbi__jpeg* j, panto_jpeg_frame* f) {
  f->width = int(j->s->img_x);
  f->height = int(j->s->img_y);
  f->components = j->s->img_n;
  f->h_max = j->img_h_max;
  f->v_max = j->img_v_max;
  for (int k = 0; k < 4; k++) {
    const bool present = k < j->s->img_n;
    f->comp[k].plane = present ? j->img_comp[k].data : nullptr;
    f->comp[k].w2 = present ? j->img_comp[k].w2 : 0;
    f->comp[k].h2 = present ? j->img_comp[k].h2 : 0;
    f->comp[k].h = present ? j->img_comp[k].h : 0;
    f->comp[k].v = present ? j->img_comp[k].v : 0;
  }
}

void hook_idct_kernel(stbi_uc* out, int out_stride, short data[64]) {
  BlockHook* h = tls_hook;
  stbi_uc block[64];
#ifdef STBI_SSE2
  stbi__idct_simd(block, 8, data);
#else
  stbi__idct_block(block, 8, data);
#endif
  if (h->frame.comp[0].plane != h->j->img_comp[0].data) fill_frame(h->j, &h->frame);  // planes (re)allocated
  h->fn(h->ctx, &h->frame, out, out_stride, block);
}

}  // namespace

extern "C" int panto_stb_jpeg_decode_blocks(const unsigned char* buf, int len, panto_jpeg_block_fn fn, void* ctx,
                                            panto_jpeg_frame* frame) {
  stbi__context s;
  stbi__start_mem(&s, buf, len);
  auto* j = static_cast<stbi__jpeg*>(stbi__malloc(sizeof(stbi__jpeg)));
  if (!j) return stbi__err("outofmem", "Out of memory");
  memset(j, 0, sizeof(stbi__jpeg));
  j->s = &s;
  stbi__setup_jpeg(j);
  j->idct_block_kernel = hook_idct_kernel;
  BlockHook hook;
  hook.j = j;
  hook.fn = fn;
  hook.ctx = ctx;
  BlockHook* prev = tls_hook;
  tls_hook = &hook;
  s.img_n = 0;
  const int ok = stbi__decode_jpeg_image(j);
  tls_hook = prev;
  if (ok) {
    fill_frame(j, frame);
    frame->is_rgb = s.img_n == 3 && (j->rgb == 3 || (j->app14_color_transform == 0 && !j->jfif));
  }
  stbi__cleanup_jpeg(j);
  STBI_FREE(j);
  return ok;
}
