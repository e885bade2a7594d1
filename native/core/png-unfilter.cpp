// PNG row unfiltering (see png-unfilter.h): the scalar reference and the per-pixel vector paths for 3/4/6/8-byte
// pixels. Sub, Average and Paeth depend on the pixel to the left, so a vector step is one pixel (its bytes side by
// side), which replaces bpp scalar iterations of the same dependency chain; Paeth's three distances and choice run in
// 16-bit lanes (SSE2) or with absolute-difference instructions (NEON).
#include "png-unfilter.h"

#include <cstdlib>
#include <cstring>

#if defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#define PANTO_PNG_SSE2 1
#include <emmintrin.h>
#elif defined(__aarch64__) || defined(_M_ARM64)
#define PANTO_PNG_NEON 1
#include <arm_neon.h>
#endif

namespace panto {
namespace {

inline int paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/** The first row of an image: the row above is zeros, so Up is a no-op and Paeth predicts the left byte (Sub). */
bool unfilter_first_row(uint8_t f, uint8_t* cur, size_t n, size_t bpp) {
  switch (f) {
    case 0:
    case 2: return true;
    case 1:
    case 4:
      for (size_t i = bpp; i < n; i++) cur[i] = uint8_t(cur[i] + cur[i - bpp]);
      return true;
    case 3:
      for (size_t i = bpp; i < n; i++) cur[i] = uint8_t(cur[i] + (cur[i - bpp] >> 1));
      return true;
    default: return false;
  }
}

#if defined(PANTO_PNG_SSE2) || defined(PANTO_PNG_NEON)

#if defined(PANTO_PNG_SSE2)
using Px = __m128i;  // one pixel in the low B bytes
/**
 * Loads the pixel at `p`; with `wide`, by a 4- or 8-byte load that may read past the pixel (the caller guarantees
 * the bytes are inside the row). Loads go straight to a register: a byte-wise copy through memory would stall.
 */
template <size_t B>
inline Px load_px(const uint8_t* p, bool wide) {
  if (B == 4 || (B == 3 && wide)) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return _mm_cvtsi32_si128(v);
  }
  if (B == 8 || wide) return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  uint64_t v = 0;
  std::memcpy(&v, p, B);
  return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(&v));
}
template <size_t B>
inline void store_px(uint8_t* p, Px x) {
  if (B <= 4) {
    const int32_t v = _mm_cvtsi128_si32(x);
    std::memcpy(p, &v, B);
  } else if (B == 8) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), x);
  } else {
    const int32_t lo = _mm_cvtsi128_si32(x), hi = _mm_cvtsi128_si32(_mm_srli_si128(x, 4));
    std::memcpy(p, &lo, 4);
    std::memcpy(p + 4, &hi, B - 4);
  }
}
inline Px add8(Px a, Px b) { return _mm_add_epi8(a, b); }
/** floor((a + b) / 2) per byte: the rounding-up average minus the bit the rounding added. */
inline Px floor_avg(Px a, Px b) {
  return _mm_sub_epi8(_mm_avg_epu8(a, b), _mm_and_si128(_mm_xor_si128(a, b), _mm_set1_epi8(1)));
}
inline __m128i abs16(__m128i v) { return _mm_max_epi16(v, _mm_sub_epi16(_mm_setzero_si128(), v)); }
inline __m128i select(__m128i mask, __m128i yes, __m128i no) {
  return _mm_or_si128(_mm_and_si128(mask, yes), _mm_andnot_si128(mask, no));
}
/**
 * Paeth of one pixel in 16-bit lanes: `a` left (unfiltered), `b` above, `c` upper left, `x` the filtered bytes;
 * returns the unfiltered pixel, still in 16-bit lanes, so the left-to-right chain needs no pack/unpack.
 */
inline __m128i paeth16(__m128i a, __m128i b, __m128i c, __m128i x) {
  const __m128i dbc = _mm_sub_epi16(b, c), dac = _mm_sub_epi16(a, c);
  const __m128i pa = abs16(dbc), pb = abs16(dac), pc = abs16(_mm_add_epi16(dbc, dac));  // |p-a|, |p-b|, |p-c|
  const __m128i m = _mm_min_epi16(pc, _mm_min_epi16(pa, pb));
  // pa is the smallest: a; else pb is: b; else c (the scalar order of ties).
  const __m128i pred = select(_mm_cmpeq_epi16(pa, m), a, select(_mm_cmpeq_epi16(pb, m), b, c));
  return _mm_and_si128(_mm_add_epi16(pred, x), _mm_set1_epi16(0xff));
}
inline Px zero_px() { return _mm_setzero_si128(); }
#else
using Px = uint8x8_t;
/** As the SSE2 load_px: `wide` allows a 4- or 8-byte load past the pixel, inside the row. */
template <size_t B>
inline Px load_px(const uint8_t* p, bool wide) {
  if (B == 4 || (B == 3 && wide)) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return vreinterpret_u8_u32(vdup_n_u32(v));
  }
  if (B == 8 || wide) return vld1_u8(p);
  uint64_t v = 0;
  std::memcpy(&v, p, B);
  return vcreate_u8(v);
}
template <size_t B>
inline void store_px(uint8_t* p, Px x) {
  const uint64_t v = vget_lane_u64(vreinterpret_u64_u8(x), 0);
  std::memcpy(p, &v, B);
}
inline Px add8(Px a, Px b) { return vadd_u8(a, b); }
inline Px floor_avg(Px a, Px b) { return vhadd_u8(a, b); }  // truncating halving add: (a + b) >> 1
inline Px paeth_px(Px a, Px b, Px c) {
  const uint16x8_t pa = vmovl_u8(vabd_u8(b, c)), pb = vmovl_u8(vabd_u8(a, c));
  const uint16x8_t pc = vabdq_u16(vaddl_u8(a, b), vaddl_u8(c, c));  // |a + b - 2c|
  const uint16x8_t m = vminq_u16(pc, vminq_u16(pa, pb));
  const uint8x8_t use_a = vmovn_u16(vceqq_u16(pa, m)), use_b = vmovn_u16(vceqq_u16(pb, m));
  return vbsl_u8(use_a, a, vbsl_u8(use_b, b, c));
}
inline Px zero_px() { return vdup_n_u8(0); }
#endif

/** Bytes a wide load reads from a pixel's start (load_px). */
template <size_t B>
constexpr size_t kWide = B <= 4 ? 4 : 8;

template <size_t B>
void sub_px(uint8_t* cur, size_t n) {
  Px a = zero_px();
  for (size_t i = 0; i < n; i += B) {
    a = add8(load_px<B>(cur + i, i + kWide<B> <= n), a);
    store_px<B>(cur + i, a);
  }
}

template <size_t B>
void avg_px(uint8_t* cur, const uint8_t* prev, size_t n) {
  Px a = zero_px();
  for (size_t i = 0; i < n; i += B) {
    const bool wide = i + kWide<B> <= n;
    a = add8(load_px<B>(cur + i, wide), floor_avg(a, load_px<B>(prev + i, wide)));
    store_px<B>(cur + i, a);
  }
}

template <size_t B>
void paeth_row_px(uint8_t* cur, const uint8_t* prev, size_t n) {
#if defined(PANTO_PNG_SSE2)
  const __m128i z = _mm_setzero_si128();
  __m128i a = z, c = z;
  for (size_t i = 0; i < n; i += B) {
    const bool wide = i + kWide<B> <= n;
    const __m128i b = _mm_unpacklo_epi8(load_px<B>(prev + i, wide), z);
    a = paeth16(a, b, c, _mm_unpacklo_epi8(load_px<B>(cur + i, wide), z));
    store_px<B>(cur + i, _mm_packus_epi16(a, a));
    c = b;
  }
#else
  Px a = zero_px(), c = zero_px();
  for (size_t i = 0; i < n; i += B) {
    const bool wide = i + kWide<B> <= n;
    const Px b = load_px<B>(prev + i, wide);
    a = add8(load_px<B>(cur + i, wide), paeth_px(a, b, c));
    store_px<B>(cur + i, a);
    c = b;
  }
#endif
}

/** Sub / Average / Paeth (f 1, 3, 4) of a row of whole B-byte pixels with a previous row. */
template <size_t B>
void unfilter_px(uint8_t f, uint8_t* cur, const uint8_t* prev, size_t n) {
  if (f == 1) sub_px<B>(cur, n);
  else if (f == 3) avg_px<B>(cur, prev, n);
  else paeth_row_px<B>(cur, prev, n);
}

constexpr const char* kSimd =
#if defined(PANTO_PNG_SSE2)
    "sse2";
#else
    "neon";
#endif

#else
constexpr const char* kSimd = "none";
#endif

}  // namespace

bool png_unfilter_row_scalar(uint8_t f, uint8_t* __restrict cur, const uint8_t* __restrict prev, size_t n,
                             size_t bpp) {
  if (!prev) return unfilter_first_row(f, cur, n, bpp);
  switch (f) {
    case 0: return true;
    case 1:
      for (size_t i = bpp; i < n; i++) cur[i] = uint8_t(cur[i] + cur[i - bpp]);
      return true;
    case 2:
      for (size_t i = 0; i < n; i++) cur[i] = uint8_t(cur[i] + prev[i]);
      return true;
    case 3:
      for (size_t i = 0; i < bpp && i < n; i++) cur[i] = uint8_t(cur[i] + (prev[i] >> 1));
      for (size_t i = bpp; i < n; i++) cur[i] = uint8_t(cur[i] + ((cur[i - bpp] + prev[i]) >> 1));
      return true;
    case 4:
      for (size_t i = 0; i < bpp && i < n; i++) cur[i] = uint8_t(cur[i] + prev[i]);  // a = c = 0: predicts b
      for (size_t i = bpp; i < n; i++) cur[i] = uint8_t(cur[i] + paeth(cur[i - bpp], prev[i], prev[i - bpp]));
      return true;
    default: return false;
  }
}

bool png_unfilter_row(uint8_t f, uint8_t* cur, const uint8_t* prev, size_t n, size_t bpp) {
#if defined(PANTO_PNG_SSE2) || defined(PANTO_PNG_NEON)
  // The vector paths take whole pixels only (always true of 8/16-bit rows; sub-byte rows have bpp 1).
  if (!prev && f == 4) f = 1;  // first row: Paeth predicts the left byte
  if ((f == 1 || ((f == 3 || f == 4) && prev)) && n % bpp == 0) {
    switch (bpp) {
      case 3: unfilter_px<3>(f, cur, prev, n); return true;
      case 4: unfilter_px<4>(f, cur, prev, n); return true;
      case 6: unfilter_px<6>(f, cur, prev, n); return true;
      case 8: unfilter_px<8>(f, cur, prev, n); return true;
      default: break;
    }
  }
#endif
  return png_unfilter_row_scalar(f, cur, prev, n, bpp);
}

const char* png_unfilter_simd() { return kSimd; }

}  // namespace panto
