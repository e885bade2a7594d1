// PNG encoder: adaptive per-row filter (None/Sub/Up/Paeth by minimum sum of absolute signed residuals, libpng's
// heuristic) + one zlib stream from libdeflate, written straight into the final buffer (no copy of the IDAT data).
//
// The zlib stream is made of chunks of kPngDeflateChunk filtered bytes (the last one shorter), each compressed by its
// own libdeflate call: every chunk but the last ends with a non-final block and an empty stored block (a sync flush,
// libdeflate_deflate_compress_sync from cdeps/patches/libdeflate), so the chunks concatenate into one valid DEFLATE
// stream; the Adler-32 runs on across them. Matches never reach into the previous chunk (libdeflate has no preset
// dictionary): measured on the bench inputs, under 0.5% more bytes than one call (docs/images-and-pdfs.md). The chunk
// boundaries are at fixed offsets of the filtered data, so the row encoder (which compresses each chunk as soon as its
// rows are filtered) and encode_png (which filters the whole image first, in parallel) make the same bytes.
//
// Abort: the flag is polled every 64 filtered rows (encode_png) and before each chunk, so a stop waits for at most one
// chunk's compression.
#include <libdeflate.h>

// SSE2 is baseline on x86-64 (no runtime check); elsewhere (arm64, wasm) the scalar code, auto-vectorised.
#if defined(__SSE2__) && (defined(__x86_64__) || defined(_M_X64))
#define PANTO_FILTER_SSE2 1
#include <emmintrin.h>
#else
#define PANTO_FILTER_SSE2 0
#endif

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#include "budget.h"
#include "codec-handles.h"
#include "internal.h"
#include "parallel.h"
#include "png-encode.h"
#include "png-unfilter.h"

#if PANTO_THREADS
#include <thread>
#endif

namespace panto {
namespace {

// libdeflate level 2 (greedy, shallow search). Measured on the filtered rows of our own output, 512 KiB pieces as
// encoded: a 12 MP camera photo -> 2000x1333, level 2 62 ms / 2.84 MB vs level 4 86 ms / 2.77 MB (+2.4% bytes; level
// 1: 42 ms, +4.7%); a 2880x1800 UI screenshot -> 2000 px, 17.5 ms at both (level 1: 26 ms), +0.4% bytes. Both stay far
// smaller than sharp's PNG of the same pixels (zlib level 6, no filtering: 4.34 MB and 0.71 MB).
constexpr int kDeflateLevel = 2;
// The zlib header's FLEVEL for it, as libdeflate_zlib_compress writes it (levels 2-5: "fast").
constexpr int kZlibLevelHint = 1;

inline int paeth_pred(int a, int b, int c) {
  const int pa = std::abs(b - c), pb = std::abs(a - c), pc = std::abs(a + b - 2 * c);
  return (pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c);
}

/** Per-candidate sums of absolute signed residuals (libpng's heuristic): the filter with the smallest wins. */
struct FilterSums {
  uint32_t none = 0, sub = 0, up = 0, paeth = 0;
};

/** Adds bytes [0, k) (the first pixel: a = c = 0, so Sub is None and Paeth predicts b) to `s`. */
inline void add_first_pixel_sums(const uint8_t* row, const uint8_t* prev, size_t k, FilterSums* s) {
  for (size_t i = 0; i < k; i++) {
    const uint32_t r = uint32_t(std::abs(int(int8_t(row[i])))), u = uint32_t(std::abs(int(int8_t(row[i] - prev[i]))));
    s->none += r, s->sub += r, s->up += u, s->paeth += u;
  }
}

/** Adds bytes [from, n) (from >= bpp) to `s`. */
inline void add_sums(const uint8_t* row, const uint8_t* prev, size_t from, size_t n, int bpp, FilterSums* s) {
  for (size_t i = from; i < n; i++) {
    const int a = row[i - bpp], b = prev[i], c = prev[i - bpp];
    s->none += uint32_t(std::abs(int(int8_t(row[i]))));
    s->sub += uint32_t(std::abs(int(int8_t(row[i] - a))));
    s->up += uint32_t(std::abs(int(int8_t(row[i] - b))));
    s->paeth += uint32_t(std::abs(int(int8_t(row[i] - paeth_pred(a, b, c)))));
  }
}

/** PNG filter type with the smallest sum (ties: None, Sub, Up, Paeth in that order). */
inline uint8_t pick_filter(const FilterSums& s) {
  uint8_t f = 0;
  uint32_t best = s.none;
  if (s.sub < best) best = s.sub, f = 1;
  if (s.up < best) best = s.up, f = 2;
  if (s.paeth < best) best = s.paeth, f = 4;
  return f;
}

/** Writes `row` filtered with None, Sub or Up (f = 0, 1, 2) into `o`; k = min(bpp, n). */
inline void write_simple_filter(uint8_t f, const uint8_t* __restrict row, const uint8_t* __restrict prev, size_t n,
                                int bpp, size_t k, uint8_t* __restrict o) {
  switch (f) {
    case 0: std::memcpy(o, row, n); break;
    case 1:
      for (size_t i = 0; i < k; i++) o[i] = row[i];
      for (size_t i = k; i < n; i++) o[i] = uint8_t(row[i] - row[i - bpp]);
      break;
    default:
      for (size_t i = 0; i < n; i++) o[i] = uint8_t(row[i] - prev[i]);
  }
}

/** Writes Paeth residuals of bytes [from, n) (from >= bpp) into `o`. */
inline void write_paeth(const uint8_t* __restrict row, const uint8_t* __restrict prev, size_t from, size_t n, int bpp,
                        uint8_t* __restrict o) {
  for (size_t i = from; i < n; i++) o[i] = uint8_t(row[i] - paeth_pred(row[i - bpp], prev[i], prev[i - bpp]));
}

/**
 * Writes the filtered `row` (filter byte first) into `dst`; `prev` is the previous raw row (zeros for the first).
 * One pass sums the residuals of every candidate (nothing stored), a second writes only the chosen filter straight
 * into `dst`. Loops are branch-free past the first pixel so the compiler vectorises them. The scalar reference the
 * SSE2 version below is tested against.
 */
void filter_row_scalar_impl(const uint8_t* __restrict row, const uint8_t* __restrict prev, size_t n, int bpp,
                            uint8_t* __restrict dst) {
  const size_t k = size_t(bpp) < n ? size_t(bpp) : n;
  FilterSums s;
  add_first_pixel_sums(row, prev, k, &s);
  add_sums(row, prev, k, n, bpp, &s);
  const uint8_t f = pick_filter(s);
  dst[0] = f;
  uint8_t* __restrict o = dst + 1;
  if (f != 4) return write_simple_filter(f, row, prev, n, bpp, k, o);
  for (size_t i = 0; i < k; i++) o[i] = uint8_t(row[i] - prev[i]);
  write_paeth(row, prev, k, n, bpp, o);
}

#if PANTO_FILTER_SSE2
/** |int8(x)| of 16 bytes, summed by halves (psadbw): min(x, -x) as unsigned bytes is |int8(x)| (128 included). */
inline __m128i sad_abs8(__m128i d) {
  const __m128i z = _mm_setzero_si128();
  return _mm_sad_epu8(_mm_min_epu8(d, _mm_sub_epi8(z, d)), z);
}

inline __m128i abs16(__m128i x) { return _mm_max_epi16(x, _mm_sub_epi16(_mm_setzero_si128(), x)); }

/** paeth_pred on 8 lanes of 16 bits (values 0..255): the same comparisons, so the same choice. */
inline __m128i paeth16(__m128i a, __m128i b, __m128i c) {
  const __m128i pa = abs16(_mm_sub_epi16(b, c)), pb = abs16(_mm_sub_epi16(a, c));
  const __m128i pc = abs16(_mm_add_epi16(_mm_sub_epi16(a, c), _mm_sub_epi16(b, c)));
  const __m128i not_a = _mm_or_si128(_mm_cmpgt_epi16(pa, pb), _mm_cmpgt_epi16(pa, pc));  // !(pa <= pb && pa <= pc)
  const __m128i not_b = _mm_cmpgt_epi16(pb, pc);                                         // !(pb <= pc)
  const __m128i bc = _mm_or_si128(_mm_and_si128(not_b, c), _mm_andnot_si128(not_b, b));
  return _mm_or_si128(_mm_and_si128(not_a, bc), _mm_andnot_si128(not_a, a));
}

/** The Paeth prediction of 16 bytes at p (row) / q (previous row), `bpp` bytes back for a and c. */
inline __m128i paeth8x16(const uint8_t* p, const uint8_t* q, size_t bpp) {
  const __m128i z = _mm_setzero_si128();
  const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p - bpp));
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
  const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q - bpp));
  const __m128i lo = paeth16(_mm_unpacklo_epi8(a, z), _mm_unpacklo_epi8(b, z), _mm_unpacklo_epi8(c, z));
  const __m128i hi = paeth16(_mm_unpackhi_epi8(a, z), _mm_unpackhi_epi8(b, z), _mm_unpackhi_epi8(c, z));
  return _mm_packus_epi16(lo, hi);
}

inline uint32_t sum64(__m128i v) {
  return uint32_t(_mm_cvtsi128_si64(v) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(v, v)));
}
#endif

/**
 * filter_row_scalar_impl with SSE2 where the build has it (x86-64 baseline): the sums of pass 1 and the Paeth bytes
 * of pass 2 16 bytes at a time, exact integer arithmetic, so the same filter choice and bytes (pinned by
 * native/tests/test-png-stream.cpp against the scalar code on random and extreme rows).
 */
void filter_row(const uint8_t* __restrict row, const uint8_t* __restrict prev, size_t n, int bpp,
                uint8_t* __restrict dst) {
#if PANTO_FILTER_SSE2
  const size_t k = size_t(bpp) < n ? size_t(bpp) : n;
  if (n < k + 16 || bpp > 8) return filter_row_scalar_impl(row, prev, n, bpp, dst);
  FilterSums s;
  add_first_pixel_sums(row, prev, k, &s);
  __m128i v_none = _mm_setzero_si128(), v_sub = v_none, v_up = v_none, v_paeth = v_none;
  size_t i = k;
  for (; i + 16 <= n; i += 16) {
    const __m128i r = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + i));
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + i - bpp));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(prev + i));
    v_none = _mm_add_epi64(v_none, sad_abs8(r));
    v_sub = _mm_add_epi64(v_sub, sad_abs8(_mm_sub_epi8(r, a)));
    v_up = _mm_add_epi64(v_up, sad_abs8(_mm_sub_epi8(r, b)));
    v_paeth = _mm_add_epi64(v_paeth, sad_abs8(_mm_sub_epi8(r, paeth8x16(row + i, prev + i, size_t(bpp)))));
  }
  s.none += sum64(v_none), s.sub += sum64(v_sub), s.up += sum64(v_up), s.paeth += sum64(v_paeth);
  add_sums(row, prev, i, n, bpp, &s);
  const uint8_t f = pick_filter(s);
  dst[0] = f;
  uint8_t* __restrict o = dst + 1;
  if (f != 4) return write_simple_filter(f, row, prev, n, bpp, k, o);
  for (size_t j = 0; j < k; j++) o[j] = uint8_t(row[j] - prev[j]);
  size_t j = k;
  for (; j + 16 <= n; j += 16) {
    const __m128i r = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + j));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o + j), _mm_sub_epi8(r, paeth8x16(row + j, prev + j, size_t(bpp))));
  }
  write_paeth(row, prev, j, n, bpp, o);
#else
  filter_row_scalar_impl(row, prev, n, bpp, dst);
#endif
}

void put32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v >> 24);
  p[1] = uint8_t(v >> 16);
  p[2] = uint8_t(v >> 8);
  p[3] = uint8_t(v);
}

Status aborted() { return Status::Err("ERR_ABORTED", "processing was aborted", MediaType::Png); }

constexpr size_t kHead = 8 + 25 + 8;  // signature, IHDR chunk, IDAT length + type
constexpr size_t kTail = 4 + 12;      // IDAT CRC, IEND chunk

/**
 * One PNG made of chunked libdeflate calls (see the top of the file): begin() allocates the compressor and the output
 * buffer for `total` filtered bytes, put() compresses the next chunk (exactly kPngDeflateChunk bytes, or the rest for
 * the last), end() writes the signature, IHDR, IDAT framing, Adler-32 and IEND and hands the PNG over. The one place
 * both encode_png and PngRowEncoder make their bytes.
 */
class ChunkedPng {
 public:
  Status begin(size_t total) {
    total_ = total, done_ = 0, pos_ = kHead + 2, adler_ = 1;
    c_.reset(libdeflate_alloc_compressor(kDeflateLevel));
    if (!c_) return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory while encoding PNG");
    const size_t full = total / kPngDeflateChunk, rest = total % kPngDeflateChunk;
    size_t bound = full * libdeflate_deflate_compress_bound(c_.get(), kPngDeflateChunk);
    if (rest || !full) bound += libdeflate_deflate_compress_bound(c_.get(), rest);
    // Sized by libdeflate's worst case; a screenshot compresses to a tenth of it, and only what is written is resident.
    if (!alloc_owned_sparse(kHead + 2 + bound + 4 + kTail, &out_))
      return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory budget while encoding PNG");
    return Status::Ok();
  }

  /** The size of the next chunk (0 when all were compressed). */
  size_t next_chunk() const {
    const size_t left = total_ - done_;
    return left < kPngDeflateChunk ? left : kPngDeflateChunk;
  }

  /** Compresses the next chunk, next_chunk() bytes at `p`. */
  Status put(const uint8_t* p) {
    if (should_abort()) return aborted();
    const size_t n = next_chunk();
    const bool last = done_ + n == total_;
    uint8_t* o = out_.data + pos_;
    const size_t avail = out_.size - pos_ - 4 - kTail;
    const size_t z = last ? libdeflate_deflate_compress(c_.get(), p, n, o, avail)
                          : libdeflate_deflate_compress_sync(c_.get(), p, n, o, avail);
    if (z == 0) return Status::Err("ERR_MEDIA_TOO_LARGE", "PNG encoding failed");
    adler_ = libdeflate_adler32(adler_, p, n);
    pos_ += z, done_ += n;
    if (last) c_.reset();
    return Status::Ok();
  }

  /** After the last chunk: completes the PNG into `out`. */
  Status end(uint32_t w, uint32_t h, int bpp, OwnedBytes* out) {
    if (done_ != total_ || !out_.data) return Status::Err("ERR_INTERNAL", "PNG encoder ended before its last chunk");
    const size_t z = pos_ + 4 - kHead;  // zlib header, DEFLATE data, Adler-32
    if (z > 0x7FFFFFFF) return Status::Err("ERR_MEDIA_TOO_LARGE", "PNG encoding failed");
    uint8_t* p = out_.data;
    std::memcpy(p, "\x89PNG\r\n\x1a\n", 8);
    put32(p + 8, 13);
    std::memcpy(p + 12, "IHDR", 4);
    put32(p + 16, w);
    put32(p + 20, h);
    p[24] = 8;                               // bit depth
    p[25] = bpp == 4 ? 6 : bpp == 3 ? 2 : 0;  // colour type: RGBA, RGB, grey
    p[26] = p[27] = p[28] = 0;               // deflate, adaptive filtering, no interlace
    put32(p + 29, libdeflate_crc32(0, p + 12, 17));
    put32(p + 33, uint32_t(z));
    std::memcpy(p + 37, "IDAT", 4);
    // zlib header as libdeflate_zlib_compress writes it: deflate, 32 KiB window, its level hint, FCHECK.
    unsigned hdr = (8u << 8) | (7u << 12) | (unsigned(kZlibLevelHint) << 6);
    hdr |= 31 - hdr % 31;
    p[kHead] = uint8_t(hdr >> 8);
    p[kHead + 1] = uint8_t(hdr);
    put32(p + pos_, adler_);
    uint8_t* t = p + kHead + z;
    put32(t, libdeflate_crc32(0, p + 37, 4 + z));
    put32(t + 4, 0);
    std::memcpy(t + 8, "IEND", 4);
    put32(t + 12, libdeflate_crc32(0, t + 8, 4));
    out_.shrink_to(kHead + z + kTail);
    *out = std::move(out_);
    return Status::Ok();
  }

 private:
  DeflateCompressor c_;
  OwnedBytes out_;
  size_t total_ = 0, done_ = 0, pos_ = 0;
  uint32_t adler_ = 1;
};

/**
 * PngRowEncoder's helper thread: compresses the chunks it is handed, in order, with the same put() calls the caller
 * would make (so the same bytes), while the caller filters the next chunk into its other buffer. One chunk in flight
 * at most. Runs under the caller's budget (its abort flag is polled by put()). No thread on builds without threads or
 * when none can start: start() is then false and the caller compresses inline.
 */
class ChunkCompressor {
 public:
  explicit ChunkCompressor(ChunkedPng* png) : png_(png) {}
  ~ChunkCompressor() { stop(); }
  ChunkCompressor(const ChunkCompressor&) = delete;
  ChunkCompressor& operator=(const ChunkCompressor&) = delete;

  bool start() {
#if PANTO_THREADS
    if (!parts_run_concurrently()) return false;
    Budget* budget = current_budget();
    try {
      thread_ = std::thread([this, budget] {
        BudgetScope scope(budget);
        run();
      });
      return true;
    } catch (...) {  // std::system_error (no thread available) or std::bad_alloc (its state)
      return false;
    }
#else
    return false;
#endif
  }

  /** Waits until no chunk is in flight; the first error of the chunks compressed so far (Ok if none). */
  Status wait_idle() {
    std::unique_lock<std::mutex> lock(m_);
    cv_.wait(lock, [this] { return job_ == nullptr; });
    return status_;
  }

  /** Hands over the next chunk (png.next_chunk() bytes at `chunk`, untouched until wait_idle returns). Call only when
   *  idle and no error so far. */
  void submit(const uint8_t* chunk) {
    {
      std::lock_guard<std::mutex> lock(m_);
      job_ = chunk;
    }
    cv_.notify_all();
  }

  /** Finishes the chunk in flight, if any, and ends the thread. */
  void stop() {
#if PANTO_THREADS
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(m_);
      quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
#endif
  }

 private:
  void run() {
    std::unique_lock<std::mutex> lock(m_);
    for (;;) {
      cv_.wait(lock, [this] { return job_ != nullptr || quit_; });
      if (job_ == nullptr) return;
      const uint8_t* p = job_;
      lock.unlock();
      const Status s = png_->put(p);
      lock.lock();
      if (status_.ok()) status_ = s;
      job_ = nullptr;
      cv_.notify_all();
    }
  }

  ChunkedPng* png_;
  std::mutex m_;
  std::condition_variable cv_;
  const uint8_t* job_ = nullptr;
  bool quit_ = false;
  Status status_;
#if PANTO_THREADS
  std::thread thread_;
#endif
};

/** Compresses `filtered_size` bytes of filtered rows into a complete PNG in `out`, chunk by chunk. */
Status compress_filtered(const uint8_t* filtered, size_t filtered_size, uint32_t w, uint32_t h, int bpp,
                         OwnedBytes* out) {
  ChunkedPng png;
  Status s = png.begin(filtered_size);
  for (size_t off = 0; s.ok() && png.next_chunk() > 0; off += kPngDeflateChunk) s = png.put(filtered + off);
  return s.ok() ? png.end(w, h, bpp, out) : s;
}

}  // namespace

Status encode_png(const PixelView& px, OwnedBytes* out) {
  const int bpp = px.channels;
  const size_t n = size_t(px.width) * bpp;
  const size_t filtered_size = (n + 1) * px.height;
  OwnedBytes filtered, zeros;
  if (!alloc_owned(filtered_size, &filtered) || !alloc_owned(n, &zeros))
    return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory budget while encoding PNG");
  std::memset(zeros.data, 0, n);
  // Each row's filter depends only on that row and the one above it, so the rows split in kRowParts ranges filter
  // independently (parallel.h) into disjoint parts of `filtered`: the same bytes however the parts run.
  std::atomic<bool> stopped{false};
  run_parts(kRowParts, [&](int part) {
    const uint32_t y0 = uint32_t(uint64_t(px.height) * uint32_t(part) / kRowParts);
    const uint32_t y1 = uint32_t(uint64_t(px.height) * uint32_t(part + 1) / kRowParts);
    for (uint32_t y = y0; y < y1; y++) {
      if (((y - y0) & 63) == 0 && (stopped.load(std::memory_order_relaxed) || should_abort())) {
        stopped.store(true, std::memory_order_relaxed);
        return;
      }
      const uint8_t* row = px.data + size_t(y) * n;
      const uint8_t* prev = y ? row - n : zeros.data;
      filter_row(row, prev, n, bpp, filtered.data + size_t(y) * (n + 1));
    }
  });
  zeros.reset();
  if (stopped.load() || should_abort()) return aborted();
  Status s = compress_filtered(filtered.data, filtered_size, px.width, px.height, bpp, out);
  filtered.reset();
  return s;
}

void png_filter_row(const uint8_t* row, const uint8_t* prev, size_t n, int bpp, uint8_t* dst) {
  filter_row(row, prev, n, bpp, dst);
}
void png_filter_row_scalar(const uint8_t* row, const uint8_t* prev, size_t n, int bpp, uint8_t* dst) {
  filter_row_scalar_impl(row, prev, n, bpp, dst);
}

struct PngRowEncoder::Impl {
  uint32_t w = 0, h = 0, y = 0;
  int c = 0;
  bool overflow = false;
  size_t n = 0;       // bytes of a raw row
  size_t total = 0;   // filtered bytes of the image
  size_t handed = 0;  // filtered bytes handed to compression so far (whole chunks)
  size_t fill = 0;    // filtered bytes waiting in `pending` (less than one chunk between rows)
  OwnedBytes pending, prev;
  OwnedBytes spare;  // with `helper`: the chunk being compressed while `pending` fills
  ChunkedPng png;
  Status status;  // the first error of put_row (compression, abort), reported by finish()
  // Last: destroyed first, so the chunk in flight finishes before the buffers and `png` go.
  std::unique_ptr<ChunkCompressor> helper;

  /** Bytes of the next chunk to hand over (0: all handed). */
  size_t next_chunk() const { return std::min(kPngDeflateChunk, total - handed); }
};

PngRowEncoder::PngRowEncoder() = default;
PngRowEncoder::~PngRowEncoder() = default;

Status PngRowEncoder::begin(uint32_t w, uint32_t h, int channels) {
  impl_.reset(new Impl());
  Impl& m = *impl_;
  m.w = w, m.h = h, m.c = channels;
  m.n = size_t(w) * channels;
  m.total = (m.n + 1) * h;
  const size_t cap = (m.total < kPngDeflateChunk ? m.total : kPngDeflateChunk) + m.n + 1;
  if (!alloc_owned(cap, &m.pending) || !alloc_owned(m.n, &m.prev))
    m.status = Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory budget while encoding PNG");
  else
    m.status = m.png.begin(m.total);
  if (!m.status.ok()) return m.status;
  std::memset(m.prev.data, 0, m.n);
  // More than one chunk: compressed on a helper thread while the next one is filtered (cost.cpp counts `spare`);
  // without one (no thread, no memory for the spare), inline.
  if (m.total > kPngDeflateChunk && alloc_owned(cap, &m.spare)) {
    m.helper.reset(new ChunkCompressor(&m.png));
    if (!m.helper->start()) {
      m.helper.reset();
      m.spare.reset();
    }
  }
  return m.status;
}

void PngRowEncoder::put_row(const uint8_t* row) {
  if (!impl_) return;  // finish() reports it
  Impl& m = *impl_;
  if (m.y >= m.h) {
    m.overflow = true;
    return;
  }
  m.y++;
  if (!m.status.ok()) return;
  filter_row(row, m.prev.data, m.n, m.c, m.pending.data + m.fill);
  std::memcpy(m.prev.data, row, m.n);
  m.fill += m.n + 1;
  // Every full chunk (a row wider than a chunk fills several), and the rest after the last row.
  for (size_t k = m.next_chunk(); k > 0 && m.fill >= k; k = m.next_chunk()) {
    if (m.helper) {
      // The previous chunk is compressed: its buffer takes what follows this chunk, this one is handed over.
      m.status = m.helper->wait_idle();
      if (!m.status.ok()) return;
      std::swap(m.pending, m.spare);
      std::memcpy(m.pending.data, m.spare.data + k, m.fill - k);
      m.helper->submit(m.spare.data);
    } else {
      m.status = m.png.put(m.pending.data);
      if (!m.status.ok()) return;
      std::memmove(m.pending.data, m.pending.data + k, m.fill - k);
    }
    m.handed += k;
    m.fill -= k;
  }
}

Status PngRowEncoder::finish(OwnedBytes* out) {
  if (!impl_) return Status::Err("ERR_INTERNAL", "PNG row encoder was not begun");
  Impl& m = *impl_;
  if (m.helper) {
    const Status s = m.helper->wait_idle();
    m.helper.reset();
    m.spare.reset();
    if (m.status.ok()) m.status = s;
  }
  if (m.overflow || m.y != m.h) return Status::Err("ERR_INTERNAL", "PNG row encoder got the wrong number of rows");
  if (!m.status.ok()) return m.status;
  if (should_abort()) return aborted();
  m.pending.reset();
  m.prev.reset();
  return m.png.end(m.w, m.h, m.c, out);
}

Status PngRowEncoder::take_pixels(const OwnedBytes& png, Pixels* px) {
  if (!impl_) return Status::Err("ERR_INTERNAL", "PNG row encoder was not begun");
  const Impl& m = *impl_;
  const size_t n = m.n, h = m.h;
  // The PNG is ours: one IDAT right after IHDR, holding the whole zlib stream.
  if (png.size < kHead + kTail || png.data[25] != (m.c == 4 ? 6 : m.c == 3 ? 2 : 0))
    return Status::Err("ERR_INTERNAL", "PNG row encoder was handed a PNG it did not make");
  const size_t z = (size_t(png.data[33]) << 24) | (size_t(png.data[34]) << 16) | (size_t(png.data[35]) << 8) |
                   png.data[36];
  if (z > png.size - kHead - kTail)
    return Status::Err("ERR_INTERNAL", "PNG row encoder was handed a PNG it did not make");
  OwnedBytes filtered;
  if (!alloc_owned((n + 1) * h, &filtered))
    return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory budget while recovering the PNG's pixels");
  {
    DeflateDecompressor dec(libdeflate_alloc_decompressor());
    if (!dec) return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory while recovering the PNG's pixels");
    if (libdeflate_zlib_decompress(dec.get(), png.data + kHead, z, filtered.data, (n + 1) * h, nullptr) !=
        LIBDEFLATE_SUCCESS)
      return Status::Err("ERR_INTERNAL", "PNG row encoder's own stream does not inflate to the image");
  }
  uint8_t* base = filtered.data;
  const uint8_t* prev = nullptr;  // previous unfiltered row (already moved down)
  for (size_t y = 0; y < h; y++) {
    if ((y & 255) == 0 && should_abort()) return aborted();
    uint8_t* src = base + y * (n + 1) + 1;
    uint8_t* dst = base + y * n;  // dst = src - (y + 1): moving forward in place is safe
    if (!png_unfilter_row(src[-1], src, prev, n, size_t(m.c)))
      return Status::Err("ERR_INTERNAL", "PNG row encoder wrote an unknown filter type");
    std::memmove(dst, src, n);
    prev = dst;
  }
  filtered.shrink_to(n * h);
  px->data = std::move(filtered);
  px->width = m.w;
  px->height = m.h;
  px->channels = m.c;
  return Status::Ok();
}

}  // namespace panto
