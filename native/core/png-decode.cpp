// PNG decoding paths (see png-decode.h): whole-buffer libdeflate for small 8-bit RGB(A), streaming zlib row by row
// (with shrink-on-load) for the rest of the handled layouts. Rows are unfiltered by png-unfilter.cpp (SIMD for 3/4/6/8
// bytes per pixel).
#include "png-decode.h"

#include <libdeflate.h>

// zlib is compiled with Z_PREFIX and Z_SOLO (scripts/native-sources.cjs): its API is z_inflate, ... so it never meets
// the host's own zlib, and it has no allocator of its own (ours charges the call's budget).
#define Z_PREFIX 1
#define Z_SOLO 1
#include <zlib/zlib.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "budget.h"
#include "codec-handles.h"
#include "png-unfilter.h"

namespace panto {
namespace {

constexpr MediaType T = MediaType::Png;

Status corrupt(const std::string& why) { return Status::Err("ERR_CORRUPT_MEDIA", "image/png is corrupt: " + why, T); }
Status oom() {
  return Status::Err("ERR_MEDIA_TOO_LARGE", "image/png needs more memory to decode than its header implies (budget "
                     "exceeded)", T);
}
Status aborted() { return Status::Err("ERR_ABORTED", "processing was aborted", T); }
Status bad_data() { return corrupt("image data does not inflate to exactly the image (zlib stream or filters)"); }

/**
 * Moves `n` bytes from `src` down to `dst` (dst < src, the regions may overlap): forward, in chunks no longer than the
 * distance, so every chunk is a non-overlapping memcpy (an overlapping memmove by a few bytes is many times slower).
 */
inline void compact_row(uint8_t* dst, const uint8_t* src, size_t n) {
  const size_t step = size_t(src - dst);
  for (size_t o = 0; o < n; o += step) std::memcpy(dst + o, src + o, step < n - o ? step : n - o);
}

/** The file's layout from IHDR (checked by probe). */
struct Layout {
  uint32_t w = 0, h = 0;
  unsigned depth = 0, ct = 0, interlace = 0;
  unsigned samples = 0;  // per pixel in the file
  size_t bpp = 1;        // filter unit in bytes
};

Layout layout_of(const uint8_t* d, const MediaInfo& info) {
  Layout l;
  l.w = info.width;
  l.h = info.height;
  l.depth = d[24];
  l.ct = d[25];
  l.interlace = d[28];
  l.samples = l.ct == 0 ? 1 : l.ct == 2 ? 3 : l.ct == 3 ? 1 : l.ct == 4 ? 2 : 4;
  l.bpp = std::max<size_t>(1, size_t(l.samples) * l.depth / 8);
  return l;
}

/** Walks the chunks before IEND: each IDAT's payload to `idat`, PLTE/tRNS to the palette table. */
struct Chunks {
  std::vector<std::pair<size_t, size_t>> idat;  // offset, length
  const uint8_t* plte = nullptr;
  size_t plte_len = 0;
  const uint8_t* trns = nullptr;
  size_t trns_len = 0;
  bool ok = false;
};

Chunks walk_chunks(const uint8_t* d, size_t len) {
  Chunks c;
  for (size_t i = 8; i + 12 <= len;) {
    const uint32_t n = be32(d + i);
    if (n > len - i - 12) return c;
    const uint8_t* type = d + i + 4;
    if (!std::memcmp(type, "IDAT", 4)) c.idat.emplace_back(i + 8, n);
    else if (!std::memcmp(type, "PLTE", 4)) c.plte = d + i + 8, c.plte_len = n;
    else if (!std::memcmp(type, "tRNS", 4)) c.trns = d + i + 8, c.trns_len = n;
    else if (!std::memcmp(type, "IEND", 4)) break;
    i += 12 + size_t(n);
  }
  c.ok = !c.idat.empty();
  return c;
}

/** Turns unfiltered rows of the file's layout into 8-bit RGB/RGBA rows. */
struct RowConverter {
  Layout l;
  int channels = 3;
  uint8_t palette[256 * 4];

  void init_palette(const Chunks& c) {
    for (int k = 0; k < 256; k++) {  // indices past PLTE: opaque black (libpng)
      palette[k * 4] = palette[k * 4 + 1] = palette[k * 4 + 2] = 0;
      palette[k * 4 + 3] = 255;
    }
    const size_t n = std::min<size_t>(256, c.plte_len / 3);
    for (size_t k = 0; k < n; k++) std::memcpy(palette + k * 4, c.plte + k * 3, 3);
    const size_t t = std::min<size_t>(n, c.trns_len);
    for (size_t k = 0; k < t; k++) palette[k * 4 + 3] = c.trns[k];
  }

  void convert(const uint8_t* __restrict src, uint8_t* __restrict dst) const {
    const uint32_t w = l.w;
    const bool wide = l.depth == 16;
    switch (l.ct) {
      case 0:
        for (uint32_t x = 0; x < w; x++) dst[x * 3] = dst[x * 3 + 1] = dst[x * 3 + 2] = src[wide ? x * 2 : x];
        break;
      case 2:
        if (!wide) std::memcpy(dst, src, size_t(w) * 3);
        else
          for (size_t i = 0; i < size_t(w) * 3; i++) dst[i] = src[i * 2];
        break;
      case 4:
        for (uint32_t x = 0; x < w; x++) {
          const uint8_t v = src[wide ? x * 4 : x * 2], a = src[wide ? x * 4 + 2 : x * 2 + 1];
          dst[x * 4] = dst[x * 4 + 1] = dst[x * 4 + 2] = v;
          dst[x * 4 + 3] = a;
        }
        break;
      case 6:
        if (!wide) std::memcpy(dst, src, size_t(w) * 4);
        else
          for (size_t i = 0; i < size_t(w) * 4; i++) dst[i] = src[i * 2];
        break;
      case 3: {
        const unsigned b = l.depth, mask = (1u << b) - 1;
        for (uint32_t x = 0; x < w; x++) {
          unsigned idx;
          if (b == 8) idx = src[x];
          else {
            const size_t bit = size_t(x) * b;
            idx = (src[bit >> 3] >> (8 - b - (bit & 7))) & mask;
          }
          std::memcpy(dst + size_t(x) * channels, palette + idx * 4, size_t(channels));
        }
        break;
      }
    }
  }
};

/**
 * Box-averages k x k blocks of 8-bit rows into `out` (ceil(w/k) x ceil(h/k); edge blocks average the pixels they
 * have). RGBA is averaged alpha-weighted, so transparent pixels lend no colour.
 */
struct BoxShrinker {
  uint32_t w = 0, h = 0, k = 1, ow = 0;
  int c = 3;
  uint32_t* sums = nullptr;  // ow * c, owned by the caller's buffer
  uint32_t rows = 0;         // rows accumulated in the current block row

  /** Adds one 8-bit row of w pixels (c channels) to the block sums. */
  void add(const uint8_t* __restrict px) {
    if (c == 3) add_c<3>(px);
    else add_c<4>(px);
    rows++;
  }

  /** Writes the finished block row to `dst` and clears the sums. */
  void flush(uint8_t* __restrict dst) {
    // (t + n/2) / n by a multiply: with m = ceil(2^40 / n), (x * m) >> 40 == x / n for every x with x * n < 2^40.
    // Here x = t + n/2 <= 256 n and n <= kPngMaxShrink^2 = 2^12, so x * n <= 2^32: the same bytes as the division.
    const uint32_t n_full = k * rows;
    const uint64_t m_full = ((uint64_t(1) << 40) + n_full - 1) / n_full;
    for (uint32_t ox = 0, x0 = 0; ox < ow; ox++, x0 += k) {
      const uint32_t n = (std::min(w, x0 + k) - x0) * rows;
      const uint64_t m = n == n_full ? m_full : ((uint64_t(1) << 40) + n - 1) / n;
      uint32_t* t = sums + size_t(ox) * c;
      uint8_t* o = dst + size_t(ox) * c;
      if (c == 3) {
        for (int i = 0; i < 3; i++) o[i] = uint8_t((uint64_t(t[i] + n / 2) * m) >> 40);
        t[0] = t[1] = t[2] = 0;
      } else {
        const uint32_t a = t[3];
        o[3] = uint8_t((uint64_t(a + n / 2) * m) >> 40);
        for (int i = 0; i < 3; i++) o[i] = a ? uint8_t(std::min<uint32_t>(255, (t[i] + a / 2) / a)) : 0;
        t[0] = t[1] = t[2] = t[3] = 0;
      }
    }
    rows = 0;
  }

 private:
  /** Sums pixels x0 .. x0 + len - 1 (len <= K when K > 0) into t: C = 3 plain, C = 4 alpha-weighted. */
  template <int C, uint32_t K>
  static inline void add_block(const uint8_t* __restrict p, uint32_t len, uint32_t* __restrict t) {
    const uint32_t n = K ? K : len;
    uint32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (uint32_t j = 0; j < n; j++, p += C) {
      if (C == 3) {
        s0 += p[0], s1 += p[1], s2 += p[2];
      } else {
        const uint32_t al = p[3];
        s0 += p[0] * al, s1 += p[1] * al, s2 += p[2] * al, s3 += al;
      }
    }
    t[0] += s0, t[1] += s1, t[2] += s2;
    if (C == 4) t[3] += s3;
  }

  /** The whole blocks with a compile-time width K (0 = runtime k), then the narrower last block if any. */
  template <int C, uint32_t K>
  void add_row(const uint8_t* __restrict px) {
    const uint32_t full = w / k;
    uint32_t* t = sums;
    const uint8_t* p = px;
    for (uint32_t ox = 0; ox < full; ox++, t += C, p += size_t(k) * C) add_block<C, K>(p, k, t);
    if (full < ow) add_block<C, 0>(p, w - full * k, t);
  }

  template <int C>
  void add_c(const uint8_t* __restrict px) {
    switch (k) {
      case 2: add_row<C, 2>(px); break;
      case 3: add_row<C, 3>(px); break;
      case 4: add_row<C, 4>(px); break;
      default: add_row<C, 0>(px); break;
    }
  }
};

voidpf z_budget_alloc(voidpf, uInt items, uInt size) {
  if (size && items > SIZE_MAX / size) return Z_NULL;
  return panto_budget_malloc(size_t(items) * size);
}
void z_budget_free(voidpf, voidpf p) { panto_budget_free(p); }

/** zlib's inflate state, ended on destruction. */
struct Inflater {
  z_stream zs{};
  bool live = false;
  ~Inflater() {
    if (live) inflateEnd(&zs);
  }
};

}  // namespace

/** The reader's state: zlib, the two filtered rows, the converted line and the box sums (one budget block). */
struct PngRowReader::Impl {
  const uint8_t* d = nullptr;
  Chunks chunks;
  Layout l;
  PngPlan plan;
  RowConverter conv;
  BoxShrinker box;
  OwnedBytes work;
  uint8_t* cur = nullptr;
  uint8_t* prev = nullptr;
  uint8_t* line = nullptr;
  Inflater inf;
  size_t next_chunk = 0;
  bool ended = false;
  uint32_t y = 0;  // next input row
  // zlib's own Adler-32 (scalar) is turned off (inflateValidate): libdeflate's vector one runs over each row instead,
  // checked against the stream's trailer in finish() — the same verdict, measured ~5% of a streaming call's CPU less.
  uint32_t adler = 1;
  uint32_t trailer = 0;  // the stream's Adler-32, read when it ends
  size_t discarded = 0;  // input offset from which consumed bytes have not been offered to discard_input yet

  /**
   * Offers the input consumed so far to discard_input (budget.h: a no-op unless the call declared its input
   * discardable, process.cpp). Keeps the 4 bytes before next_in that read_trailer may read back, offering only when
   * they lie in the current chunk; in steps of 256 KiB. The next offer starts 64 KiB-aligned below this one's end, so
   * a page cut by it is offered again whole.
   */
  void discard_consumed() {
    if (next_chunk == 0) return;
    const auto& chunk = chunks.idat[next_chunk - 1];
    const size_t pos = chunk.second - inf.zs.avail_in;
    if (pos < 4) return;
    const size_t upto = chunk.first + pos - 4;
    if (upto < discarded + (256u << 10)) return;
    discard_input(d + discarded, d + upto);
    const uintptr_t again = reinterpret_cast<uintptr_t>(d + upto) & ~uintptr_t(0xFFFF);
    if (again > reinterpret_cast<uintptr_t>(d + discarded)) discarded = size_t(again - reinterpret_cast<uintptr_t>(d));
  }

  /** At Z_STREAM_END: the 4 bytes before next_in in the concatenated IDAT data are the Adler-32 (big-endian). */
  void read_trailer() {
    uint32_t v = 0, shift = 0;
    size_t chunk = next_chunk - 1;
    size_t pos = chunks.idat[chunk].second - inf.zs.avail_in;  // bytes of this chunk consumed
    for (int k = 0; k < 4; k++) {
      while (pos == 0 && chunk > 0) pos = chunks.idat[--chunk].second;
      if (pos == 0) break;  // fewer than 4 bytes in all (zlib would not have ended)
      v |= uint32_t(d[chunks.idat[chunk].first + --pos]) << shift;
      shift += 8;
    }
    trailer = v;
  }

  /** Inflates exactly `n` bytes into `dst`; false when the stream ends early or is damaged (`*st` says why). */
  bool fill(uint8_t* dst, size_t n, Status* st) {
    inf.zs.next_out = dst;
    inf.zs.avail_out = uInt(n);
    while (inf.zs.avail_out > 0) {
      if (inf.zs.avail_in == 0) {
        if (next_chunk == chunks.idat.size()) {
          *st = corrupt("truncated image data");
          return false;
        }
        const auto& [off, len] = chunks.idat[next_chunk++];
        inf.zs.next_in = const_cast<Bytef*>(d + off);
        inf.zs.avail_in = uInt(len);
        continue;
      }
      const int rc = inflate(&inf.zs, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        ended = true;
        read_trailer();
        if (inf.zs.avail_out > 0) {
          *st = bad_data();
          return false;
        }
        return true;
      }
      if (rc == Z_MEM_ERROR) {
        *st = oom();
        return false;
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR) {
        *st = bad_data();
        return false;
      }
    }
    return true;
  }

  /** Reads, unfilters and converts the next input row; `*row` points at it in 8-bit RGB/RGBA (plan.channels). */
  Status read_row(const uint8_t** row) {
    if ((y & 15) == 0) {
      if (should_abort()) return aborted();
      discard_consumed();
    }
    Status st;
    if (ended || !fill(cur, size_t(plan.rowbytes) + 1, &st)) return ended && st.ok() ? bad_data() : st;
    adler = libdeflate_adler32(adler, cur, size_t(plan.rowbytes) + 1);
    if (!png_unfilter_row(cur[0], cur + 1, y ? prev + 1 : nullptr, size_t(plan.rowbytes), l.bpp)) return bad_data();
    // 8-bit RGB/RGBA rows are already in the output layout.
    if (l.depth == 8 && (l.ct == 2 || l.ct == 6)) {
      *row = cur + 1;
    } else {
      conv.convert(cur + 1, line);
      *row = line;
    }
    std::swap(cur, prev);  // the row just read is `prev` now (and *row points into it or into `line`)
    y++;
    return Status::Ok();
  }
};

PngRowReader::PngRowReader() = default;
PngRowReader::~PngRowReader() = default;

Status PngRowReader::open(const uint8_t* d, size_t len, const MediaInfo& info, uint32_t shrink) {
  impl_.reset(new Impl());
  Impl& m = *impl_;
  m.d = d;
  m.plan = png_plan(d, len, info, shrink, true);
  const PngPlan& plan = m.plan;
  if (plan.path != PngPath::Streaming) return Status::Err("ERR_INTERNAL", "PNG layout is not streamable", T);
  m.chunks = walk_chunks(d, len);
  if (!m.chunks.ok) return corrupt("no image data");
  if (d[25] == 3 && !m.chunks.plte) return corrupt("palette image without PLTE");
  m.discarded = m.chunks.idat[0].first;  // the header and the chunks before the first IDAT stay
  m.l = layout_of(d, info);
  m.conv.l = m.l;
  m.conv.channels = plan.channels;
  if (m.l.ct == 3) m.conv.init_palette(m.chunks);
  const size_t rb = size_t(plan.rowbytes);
  const uint32_t k = plan.shrink;
  const size_t line_bytes = size_t(m.l.w) * plan.channels;
  // One block: two filtered rows (current, previous), the converted line, the block sums when shrinking.
  const size_t sums_bytes = k > 1 ? size_t(plan.out_w) * plan.channels * sizeof(uint32_t) : 0;
  if (!alloc_owned(2 * (rb + 1) + line_bytes + sums_bytes + 16, &m.work)) return oom();
  m.cur = m.work.data;
  m.prev = m.cur + rb + 1;
  m.line = m.prev + rb + 1;
  if (k > 1) {
    std::memset(m.work.data, 0, m.work.size);
    m.box.w = m.l.w, m.box.h = m.l.h, m.box.k = k, m.box.ow = plan.out_w, m.box.c = plan.channels;
    // 4-byte aligned: the block is 16-byte aligned and the offset is rounded up.
    const size_t off = (2 * (rb + 1) + line_bytes + 3) & ~size_t(3);
    m.box.sums = reinterpret_cast<uint32_t*>(m.work.data + off);
  } else {
    std::memset(m.prev, 0, rb + 1);
  }
  m.inf.zs.zalloc = z_budget_alloc;
  m.inf.zs.zfree = z_budget_free;
  m.inf.zs.opaque = Z_NULL;
  const int init = inflateInit(&m.inf.zs);
  if (init == Z_MEM_ERROR) return oom();
  if (init != Z_OK) return Status::Err("ERR_INTERNAL", "zlib inflateInit failed", T);
  m.inf.live = true;
  inflateValidate(&m.inf.zs, 0);  // Adler-32 checked here instead (Impl::adler)
  return Status::Ok();
}

const PngPlan& PngRowReader::plan() const { return impl_->plan; }

Status PngRowReader::next_row(uint8_t* dst) {
  Impl& m = *impl_;
  const uint32_t k = m.plan.shrink;
  const size_t out_bytes = size_t(m.plan.out_w) * m.plan.channels;
  if (k == 1) {
    const uint8_t* row = nullptr;
    Status s = m.read_row(&row);
    if (!s.ok()) return s;
    std::memcpy(dst, row, out_bytes);
    return Status::Ok();
  }
  for (;;) {
    const uint8_t* row = nullptr;
    Status s = m.read_row(&row);
    if (!s.ok()) return s;
    m.box.add(row);
    if (m.box.rows == k || m.y == m.l.h) {
      m.box.flush(dst);
      return Status::Ok();
    }
  }
}

Status PngRowReader::finish() {
  Impl& m = *impl_;
  // The image is complete: the stream must end here. One more byte of image data means it overruns (corrupt, and no
  // reason to inflate the rest); an end that needs input nobody has is a truncated checksum (also corrupt).
  if (!m.ended) {
    uint8_t extra;
    for (;;) {
      m.inf.zs.next_out = &extra;
      m.inf.zs.avail_out = 1;
      if (m.inf.zs.avail_in == 0) {
        if (m.next_chunk == m.chunks.idat.size()) return corrupt("truncated image data (zlib stream does not end)");
        const auto& [off, len] = m.chunks.idat[m.next_chunk++];
        m.inf.zs.next_in = const_cast<Bytef*>(m.d + off);
        m.inf.zs.avail_in = uInt(len);
        continue;
      }
      const int rc = inflate(&m.inf.zs, Z_NO_FLUSH);
      if (m.inf.zs.avail_out == 0) return corrupt("zlib stream overruns the image");
      if (rc == Z_STREAM_END) {
        m.read_trailer();
        break;
      }
      if (rc == Z_MEM_ERROR) return oom();
      if (rc != Z_OK && rc != Z_BUF_ERROR) return bad_data();
    }
  }
  if (m.adler != m.trailer) return bad_data();
  return Status::Ok();
}

namespace {

Status decode_streaming(const uint8_t* d, size_t len, const MediaInfo& info, uint32_t shrink, Pixels* out) {
  PngRowReader reader;
  Status s = reader.open(d, len, info, shrink);
  if (!s.ok()) return s;
  const PngPlan& plan = reader.plan();
  const size_t row_bytes = size_t(plan.out_w) * plan.channels;
  // On 4 KiB pages (the sparse kind of block): the rows become resident as they are written while the input they come
  // from is returned to the OS (discard_input), instead of 2 MiB at a time on top of the whole input.
  if (!alloc_owned_sparse(row_bytes * plan.out_h, &out->data)) return oom();
  for (uint32_t y = 0; y < plan.out_h; y++) {
    s = reader.next_row(out->data.data + row_bytes * y);
    if (!s.ok()) return s;
  }
  s = reader.finish();
  if (!s.ok()) return s;
  out->width = plan.out_w;
  out->height = plan.out_h;
  out->channels = plan.channels;
  return Status::Ok();
}

/** libdeflate into an exact-size buffer, unfilter and compact in place (8-bit RGB/RGBA, no shrink). */
Status decode_whole_buffer(const uint8_t* d, const Chunks& chunks, const PngPlan& plan, const Layout& l,
                           Pixels* out) {
  size_t total = 0;
  for (auto& [off, n] : chunks.idat) total += n;
  OwnedBytes joined;
  const uint8_t* z = d + chunks.idat[0].first;
  // The input's image data, offered to discard_input (budget.h; a no-op unless the call allows it) once it has been
  // read for good: joined, or inflated.
  const uint8_t* idat_end = d + chunks.idat.back().first + chunks.idat.back().second;
  if (chunks.idat.size() > 1) {
    if (!alloc_owned(total, &joined)) return oom();
    size_t o = 0;
    for (auto& [off, n] : chunks.idat) {
      std::memcpy(joined.data + o, d + off, n);
      o += n;
    }
    z = joined.data;
    discard_input(d + chunks.idat[0].first, idat_end);
  }
  const size_t row = size_t(plan.rowbytes);
  const size_t raw_size = size_t(plan.raw_bytes);
  OwnedBytes raw;
  if (!alloc_owned(raw_size, &raw)) return oom();
  DeflateDecompressor dec(libdeflate_alloc_decompressor());
  if (!dec) return oom();
  size_t got = 0;
  const libdeflate_result rc = libdeflate_zlib_decompress(dec.get(), z, total, raw.data, raw_size, &got);
  dec.reset();
  joined.reset();
  if (chunks.idat.size() == 1) discard_input(d + chunks.idat[0].first, idat_end);
  // A stream that produces more than the image needs is corrupt (libdeflate stops at the buffer's end).
  if (rc != LIBDEFLATE_SUCCESS || got != raw_size) return bad_data();
  uint8_t* base = raw.data;
  const uint8_t* prev = nullptr;  // previous unfiltered row (already compacted)
  for (uint32_t y = 0; y < l.h; y++) {
    if ((y & 63) == 0 && should_abort()) return aborted();
    const uint8_t f = base[size_t(y) * (row + 1)];
    uint8_t* src = base + size_t(y) * (row + 1) + 1;
    uint8_t* dst = base + size_t(y) * row;  // dst <= src: forward in-place compaction is safe
    if (!png_unfilter_row(f, src, prev, row, l.bpp)) return bad_data();  // prev: compacted already, before src
    if (dst != src) compact_row(dst, src, row);
    prev = dst;
  }
  raw.shrink_to(size_t(l.w) * l.h * plan.channels);
  out->data = std::move(raw);
  out->width = l.w;
  out->height = l.h;
  out->channels = plan.channels;
  return Status::Ok();
}

}  // namespace

uint32_t png_shrink_factor(uint32_t w, uint32_t h, uint32_t tw, uint32_t th) {
  if (!tw || !th) return 1;
  const uint32_t k = std::min(w / tw, h / th);
  return k < 2 ? 1 : std::min(k, kPngMaxShrink);
}

PngPlan png_plan(const uint8_t* d, size_t len, const MediaInfo& info, uint32_t shrink, bool streaming) {
  PngPlan p;
  if (len < 33 || info.type != MediaType::Png || !info.width || !info.height) return p;
  const Layout l = layout_of(d, info);
  if (l.interlace) return p;
  const bool wide_ok = l.depth == 8 || l.depth == 16;
  switch (l.ct) {
    case 0:
    case 2:
      if (!wide_ok || info.has_alpha) return p;  // tRNS colour key: stb
      p.channels = 3;
      break;
    case 3:
      if (l.depth > 8) return p;
      p.channels = info.has_alpha ? 4 : 3;
      break;
    case 4:
    case 6:
      if (!wide_ok) return p;
      p.channels = 4;
      break;
    default: return p;
  }
  p.rowbytes = (uint64_t(l.w) * l.samples * l.depth + 7) / 8;
  p.raw_bytes = (p.rowbytes + 1) * l.h;
  p.shrink = shrink < 2 ? 1 : std::min(shrink, kPngMaxShrink);
  if (!streaming && p.shrink == 1 && l.depth == 8 && (l.ct == 2 || l.ct == 6) && p.raw_bytes <= kPngWholeBufferMax) {
    p.path = PngPath::WholeBuffer;
  } else {
    p.path = PngPath::Streaming;
  }
  p.out_w = uint32_t((uint64_t(l.w) + p.shrink - 1) / p.shrink);
  p.out_h = uint32_t((uint64_t(l.h) + p.shrink - 1) / p.shrink);
  return p;
}

Status decode_png(const uint8_t* d, size_t len, const MediaInfo& info, uint32_t shrink, Pixels* out,
                  bool* not_handled) {
  *not_handled = false;
  const PngPlan plan = png_plan(d, len, info, shrink);
  if (plan.path == PngPath::Stb) {
    *not_handled = true;
    return Status::Ok();
  }
  Status s;
  if (plan.path == PngPath::WholeBuffer) {
    const Chunks chunks = walk_chunks(d, len);
    if (!chunks.ok) return corrupt("no image data");
    s = decode_whole_buffer(d, chunks, plan, layout_of(d, info), out);
  } else {
    s = decode_streaming(d, len, info, shrink, out);
  }
  if (!s.ok()) out->data.reset();
  return s;
}

}  // namespace panto
