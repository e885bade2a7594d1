// The PNG encoder's chunked zlib stream (png-encode.cpp): kPngDeflateChunk filtered bytes per libdeflate call, each
// but the last ended by a sync flush (cdeps/patches/libdeflate). Checked at every kind of chunk boundary (rows
// straddling chunks, a filtered image of exactly one and two chunks, one-row images, rows wider than a chunk): the row
// encoder gives encode_png's bytes; the stream inflates exactly with libdeflate (whole buffer, Adler-32 checked) and
// with zlib row by row (PngRowReader, which also requires the stream to end right after the last row); take_pixels()
// gives the pixels back; an abort mid-chunk or a refused budget produces no PNG at all; the chunked stream costs
// under 1% more bytes than one libdeflate call.
#include <libdeflate.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "budget.h"
#include "internal.h"
#include "png-decode.h"
#include "png-encode.h"
#include "test-util.h"

using namespace panto_test;

namespace {

struct Shape {
  const char* name;
  uint32_t w, h;
  int c;
};

/** Smooth gradients with noise and flat runs (a filter and deflate both have work to do). */
std::vector<uint8_t> pixels_of(const Shape& s) {
  std::vector<uint8_t> px(size_t(s.w) * s.h * s.c);
  uint32_t r = s.w * 31u + s.h * 7u + uint32_t(s.c);
  for (uint32_t y = 0; y < s.h; y++)
    for (uint32_t x = 0; x < s.w; x++)
      for (int k = 0; k < s.c; k++) {
        r = r * 1103515245u + 12345u;
        const bool flat = ((x / 64) + (y / 32)) % 3 == 0;
        px[(size_t(y) * s.w + x) * s.c + k] = flat ? uint8_t(40 * k + 17) : uint8_t(x * (k + 1) + y * 3 + ((r >> 16) & 7));
      }
  return px;
}

size_t idat_length(const panto::OwnedBytes& png) {
  return (size_t(png.data[33]) << 24) | (size_t(png.data[34]) << 16) | (size_t(png.data[35]) << 8) | png.data[36];
}

/** The row encoder's PNG of `px` (rows one at a time). */
panto::Status row_encode(const Shape& s, const std::vector<uint8_t>& px, panto::PngRowEncoder* enc,
                         panto::OwnedBytes* out) {
  panto::Status st = enc->begin(s.w, s.h, s.c);
  if (!st.ok()) return st;
  const size_t n = size_t(s.w) * s.c;
  for (uint32_t y = 0; y < s.h; y++) enc->put_row(px.data() + n * y);
  return enc->finish(out);
}

}  // namespace

PANTO_TEST(png, chunked_stream_is_one_valid_zlib_stream_at_every_chunk_boundary) {
  const uint32_t chunk = uint32_t(panto::kPngDeflateChunk);
  const std::vector<Shape> shapes = {
      {"1x1 grey", 1, 1, 1},
      {"one RGB row", 5000, 1, 3},
      {"rows straddling chunks (RGB)", 700, 1000, 3},
      {"exactly one chunk (grey, rows of 1024 filtered bytes)", 1023, chunk / 1024, 1},
      {"exactly two chunks", 1023, 2 * (chunk / 1024), 1},
      {"two chunks and one row", 1023, 2 * (chunk / 1024) + 1, 1},
      {"rows wider than a chunk (RGBA)", chunk / 4 + 1000, 3, 4},
      {"one row wider than two chunks (RGB)", (2 * chunk) / 3 + 5, 1, 3},
      {"RGBA, odd", 1999, 1251, 4},
  };
  for (const Shape& s : shapes) {
    const std::vector<uint8_t> px = pixels_of(s);
    const size_t n = size_t(s.w) * s.c, filtered = (n + 1) * s.h;
    panto::Budget budget(1ull << 30);
    panto::BudgetScope scope(&budget);
    panto::OwnedBytes whole, rows;
    PANTO_REQUIRE(panto::encode_png(panto::PixelView{s.w, s.h, s.c, px.data()}, &whole).ok());
    panto::PngRowEncoder enc;
    PANTO_REQUIRE(row_encode(s, px, &enc, &rows).ok());
    std::printf("  %s: %ux%ux%d, %zu filtered bytes (%zu chunks) -> %zu bytes\n", s.name, s.w, s.h, s.c, filtered,
                (filtered + chunk - 1) / chunk, rows.size);
    PANTO_CHECK_EQ(rows.size, whole.size);
    PANTO_CHECK(rows.size == whole.size && std::memcmp(rows.data, whole.data, rows.size) == 0);

    // libdeflate, whole buffer: exactly the filtered size, Adler-32 checked.
    std::vector<uint8_t> inflated(filtered + 1);
    size_t got = 0;
    libdeflate_decompressor* d = libdeflate_alloc_decompressor();
    const libdeflate_result rc =
        libdeflate_zlib_decompress(d, rows.data + 41, idat_length(rows), inflated.data(), inflated.size(), &got);
    libdeflate_free_decompressor(d);
    PANTO_CHECK(rc == LIBDEFLATE_SUCCESS);
    PANTO_CHECK_EQ(got, filtered);

    // zlib, row by row (the streaming decoder; its finish() requires the stream to end right after the last row).
    panto::MediaInfo info;
    PANTO_REQUIRE(panto::probe(rows.data, rows.size, &info).ok());
    panto::PngRowReader reader;
    PANTO_REQUIRE(reader.open(rows.data, rows.size, info, 1).ok());
    const int oc = reader.plan().channels;
    std::vector<uint8_t> line(size_t(s.w) * oc);
    bool same = true;
    for (uint32_t y = 0; y < s.h; y++) {
      PANTO_REQUIRE(reader.next_row(line.data()).ok());
      for (uint32_t x = 0; x < s.w && same; x++)
        for (int k = 0; k < oc; k++) {
          const uint8_t want = px[(size_t(y) * s.w + x) * s.c + (s.c == 1 ? 0 : k)];
          if (line[size_t(x) * oc + k] != want) same = false;
        }
    }
    PANTO_CHECK(same);
    PANTO_CHECK(reader.finish().ok());

    // The pixels back from the PNG (the byte-cap ladder's input).
    panto::Pixels back;
    PANTO_REQUIRE(enc.take_pixels(rows, &back).ok());
    PANTO_CHECK(back.width == s.w && back.height == s.h && back.channels == s.c);
    PANTO_CHECK(back.data.size == px.size() && std::memcmp(back.data.data, px.data(), px.size()) == 0);
  }
}

PANTO_TEST(png, chunked_stream_costs_under_one_percent_over_one_libdeflate_call) {
  // A screenshot-sized RGB image: the chunked PNG against one zlib stream of the same filtered rows (what the encoder
  // made before chunking), at the same level.
  const Shape s{"2000x1250 RGB", 2000, 1250, 3};
  const std::vector<uint8_t> px = pixels_of(s);
  const size_t n = size_t(s.w) * s.c;
  std::vector<uint8_t> filtered((n + 1) * s.h), zeros(n, 0);
  for (uint32_t y = 0; y < s.h; y++)
    panto::png_filter_row(px.data() + n * y, y ? px.data() + n * (y - 1) : zeros.data(), n, s.c,
                          filtered.data() + (n + 1) * y);
  libdeflate_compressor* c = libdeflate_alloc_compressor(4);
  std::vector<uint8_t> one(libdeflate_zlib_compress_bound(c, filtered.size()));
  const size_t single = libdeflate_zlib_compress(c, filtered.data(), filtered.size(), one.data(), one.size());
  libdeflate_free_compressor(c);
  panto::OwnedBytes png;
  PANTO_REQUIRE(panto::encode_png(panto::PixelView{s.w, s.h, s.c, px.data()}, &png).ok());
  const size_t chunked = idat_length(png);
  std::printf("  zlib stream: one call %zu bytes, chunked %zu bytes (%+.3f%%)\n", single, chunked,
              100.0 * (double(chunked) - double(single)) / double(single));
  PANTO_CHECK(single > 0);
  PANTO_CHECK(chunked * 100 < single * 101);
}

PANTO_TEST(png, chunked_encoder_abort_mid_chunk_produces_no_png) {
  // The flag is raised after the rows of half a chunk: the next chunk's compression does not start, finish() says
  // ERR_ABORTED and writes nothing; every block is freed.
  const Shape s{"RGB", 1500, 1200, 3};
  const std::vector<uint8_t> px = pixels_of(s);
  const size_t n = size_t(s.w) * s.c;
  std::atomic<int> flag{0};
  panto::Budget budget(256ull << 20, &flag);
  {
    panto::BudgetScope scope(&budget);
    panto::PngRowEncoder enc;
    PANTO_REQUIRE(enc.begin(s.w, s.h, s.c).ok());
    const uint32_t stop_at = uint32_t(panto::kPngDeflateChunk / (n + 1) / 2) + 1;
    for (uint32_t y = 0; y < s.h; y++) {
      if (y == stop_at) flag.store(1);
      enc.put_row(px.data() + n * y);
    }
    panto::OwnedBytes out;
    const panto::Status st = enc.finish(&out);
    PANTO_CHECK_EQ(st.code, std::string("ERR_ABORTED"));
    PANTO_CHECK(out.data == nullptr && out.size == 0);
  }
  PANTO_CHECK_EQ(budget.used.load(), uint64_t(0));
}

PANTO_TEST(png, chunked_encoder_refused_budget_produces_no_png) {
  // A budget too small for the output bound: begin() fails with ERR_MEDIA_TOO_LARGE, later rows are ignored and
  // finish() repeats the error without writing anything.
  const Shape s{"RGB", 2000, 1500, 3};
  const std::vector<uint8_t> row(size_t(s.w) * s.c, 7);
  panto::Budget budget(2ull << 20);
  {
    panto::BudgetScope scope(&budget);
    panto::PngRowEncoder enc;
    PANTO_CHECK_EQ(enc.begin(s.w, s.h, s.c).code, std::string("ERR_MEDIA_TOO_LARGE"));
    for (uint32_t y = 0; y < s.h; y++) enc.put_row(row.data());
    panto::OwnedBytes out;
    PANTO_CHECK_EQ(enc.finish(&out).code, std::string("ERR_MEDIA_TOO_LARGE"));
    PANTO_CHECK(out.data == nullptr);
  }
  PANTO_CHECK_EQ(budget.used.load(), uint64_t(0));
}
