// The narrow interface cdeps/stb-impl.cpp exports over stb_image's JPEG internals (only that translation unit sees
// them): stb entropy-decodes and inverse-transforms every 8x8 block, and hands it to a callback instead of storing it.
// Project logic built on it (the half-size decode in jpeg-half.cpp) lives in native/core.
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

/** One frame component as stb lays it out (planes are MCU-padded: w2 x h2). */
struct panto_jpeg_component {
  const unsigned char* plane; /* identifies the component: a block's `dest` lies inside [plane, plane + w2*h2) */
  int w2, h2;                 /* padded plane size */
  int h, v;                   /* sampling factors */
};

struct panto_jpeg_frame {
  int width, height;
  int components; /* 1, 3 or 4 */
  int h_max, v_max;
  int is_rgb; /* 3 components stored as RGB, not YCbCr (set when the decode finished) */
  struct panto_jpeg_component comp[4];
};

/**
 * Called for each decoded 8x8 block: `dest`/`dest_stride` say where stb would have stored it (inside one
 * component's plane), `block` holds the 64 samples. `frame` is valid (planes allocated) from the first call on.
 */
typedef void (*panto_jpeg_block_fn)(void* ctx, const struct panto_jpeg_frame* frame, const unsigned char* dest,
                                    int dest_stride, const unsigned char block[64]);

/**
 * Decodes `buf` with stb's JPEG decoder, calling `fn(ctx, ...)` per block (stb's planes are allocated from the active
 * budget but never written: address space, not memory). Returns 1 and fills `*frame` on success; 0 on failure
 * (stbi_failure_reason()). Honours the abort hook like any stb decode.
 */
int panto_stb_jpeg_decode_blocks(const unsigned char* buf, int len, panto_jpeg_block_fn fn, void* ctx,
                                 struct panto_jpeg_frame* frame);

#ifdef __cplusplus
}
#endif
