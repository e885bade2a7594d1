// The one translation unit that instantiates the stb header libraries (fetched by scripts/fetch-cdeps.mjs from
// Debian's libstb-dev; nothing third-party is committed). Configuration, and why:
// - Decoders limited to PNG, GIF, BMP (STBI_ONLY_*; JPEG is libjpeg-turbo's, native/core/jpeg-decode.cpp):
//   PIC/TGA/PSD/HDR/PNM carry open CVEs and no provider needs them. No stdio. Each side capped by
//   STBI_MAX_DIMENSIONS; width*height is capped by the caller from the header.
// - Every allocation goes through the per-call budget in native/core/budget.h (a decode that would exceed it fails).
// - The caller never uses stbi_load_gif_* (multi-frame path with open CVEs) or vertical flip (global state, CVE).
// - stb_image_resize2 allocates through the budget too.
// - stb_image.h is patched at fetch time (cdeps/patches/stb/*.patch): out-of-range palette indices are black, PNG
//   inflates into an exact-size buffer (overrun = corrupt), GIF LZW without an initial clear code, BMP V3 bitfield
//   masks, an abort hook between rows (PNG) and GIF LZW data sub-blocks, no GIF background buffer before a second
//   frame, and (STBI_GIF_FIRST_FRAME_ONLY) no GIF history unless the first frame reads it back: a first-frame
//   decode holds its canvas, and the history only for a background colour.
#include <libdeflate.h>

#include "budget.h"

#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#endif

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
// Polled between PNG rows (cdeps/patches/stb/0005) and GIF LZW sub-blocks (0007): an aborted call stops there.
#define STBI_SHOULD_ABORT() panto_should_abort()
// Only the first frame of a GIF is ever decoded (stbi_load_*): its per-pixel history is kept only when that frame
// paints undrawn pixels with a background colour (cdeps/patches/stb/0009); a second frame would be refused.
#define STBI_GIF_FIRST_FRAME_ONLY
// Fresh mmapped blocks are already zero: a huge declared GIF canvas costs address space, not resident memory.
#define STBI_ZERO_FRESH(p, n) panto_budget_zero_fresh((p), (n))
#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>

// One allocation for the resizer's buffers in every build (patch 0010): the separate allocations stb makes under a
// sanitizer mishandle a budget refusal part way (bad free, leak); sanitizer and fuzz builds run the shipped path.
#define STBIR_ONE_ALLOCATION
#define STBIR_MALLOC(size, user_data) ((void)(user_data), panto_budget_malloc(size))
#define STBIR_FREE(ptr, user_data) ((void)(user_data), panto_budget_free(ptr))
#define STB_IMAGE_RESIZE_IMPLEMENTATION
#include <stb/stb_image_resize2.h>
