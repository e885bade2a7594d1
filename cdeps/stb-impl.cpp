// The one translation unit that instantiates the stb header libraries (fetched by scripts/fetch-cdeps.mjs from
// Debian's libstb-dev; nothing third-party is committed). Configuration, and why:
// - Decoders limited to JPEG, PNG, GIF, BMP (STBI_ONLY_*): PIC/TGA/PSD/HDR/PNM carry open CVEs and no provider needs
//   them. No stdio. Each side capped by STBI_MAX_DIMENSIONS; width*height is capped by the caller from the header.
// - Every allocation goes through the per-call budget in native/core/budget.h (a decode that would exceed it fails).
// - The caller never uses stbi_load_gif_* (multi-frame path with open CVEs) or vertical flip (global state, CVE).
// - stb_image_write compresses PNG with libdeflate (smaller and faster than stb's own deflate); the level comes from
//   panto_png_deflate_level (thread-local).
// - stb_image_resize2 allocates through the budget too.
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
