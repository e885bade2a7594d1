// libjpeg-turbo's fast Huffman path as we patch it (cdeps/patches/libjpeg-turbo/0002): one table lookup per AC
// coefficient whose code and magnitude bits fit in 10 bits, 6-byte refills in one load when they hold no 0xFF, and the
// fast path inside restart intervals. Its results must equal upstream's unchanged slow decoder, which a source handing
// out fewer bytes than the fast path needs (61 at a time) always takes. Pinned on every coefficient of every
// component, on 1/8 (AC codes decoded and dropped) and 4/8 scaled pixels, and on damaged streams (truncated, bytes
// flipped, stray markers, stuffed runs), whose warnings and errors must match too.
#include <csetjmp>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include <jerror.h>
}

#include "harness.h"
#include "jpeg-maker.h"

using namespace panto_test;

namespace {

struct Decoded {
  bool failed = false;
  long warnings = 0;
  std::vector<int16_t> values;
  bool operator==(const Decoded& o) const {
    return failed == o.failed && warnings == o.warnings && values == o.values;
  }
};

struct ErrorMgr {
  jpeg_error_mgr pub;
  jmp_buf jmp;
};

void on_error_exit(j_common_ptr c) { longjmp(reinterpret_cast<ErrorMgr*>(c->err)->jmp, 1); }
void on_message(j_common_ptr) {}

/** A memory source that hands out at most `chunk` bytes per fill; at the end, a warning and a fake EOI (as
 * jpeg_mem_src does), so both sources see the same stream. */
struct ChunkSource {
  jpeg_source_mgr pub;
  const uint8_t* data;
  size_t size, pos, chunk;
};
const JOCTET kEoi[2] = {0xFF, JPEG_EOI};

boolean fill_chunk(j_decompress_ptr c) {
  auto* s = reinterpret_cast<ChunkSource*>(c->src);
  if (s->pos >= s->size) {
    WARNMS(c, JWRN_JPEG_EOF);
    s->pub.next_input_byte = kEoi;
    s->pub.bytes_in_buffer = 2;
    return TRUE;
  }
  const size_t n = std::min(s->chunk, s->size - s->pos);
  s->pub.next_input_byte = s->data + s->pos;
  s->pub.bytes_in_buffer = n;
  s->pos += n;
  return TRUE;
}
void skip_chunk(j_decompress_ptr c, long n) {
  if (n <= 0) return;
  while (size_t(n) > c->src->bytes_in_buffer) {
    n -= long(c->src->bytes_in_buffer);
    fill_chunk(c);
  }
  c->src->next_input_byte += n;
  c->src->bytes_in_buffer -= size_t(n);
}
void init_chunk(j_decompress_ptr) {}
void term_chunk(j_decompress_ptr) {}

enum class Read { Coefficients, Eighth, Half };

/** Decodes `jpeg` whole (chunk 0: jpeg_mem_src, the fast path) or `chunk` bytes at a time (the slow path). */
Decoded decode(const std::vector<uint8_t>& jpeg, size_t chunk, Read what) {
  panto::Budget budget(1ull << 30);
  panto::BudgetScope scope(&budget);
  Decoded out;
  jpeg_decompress_struct d;
  ErrorMgr err;
  ChunkSource src{};
  d.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = on_error_exit;
  err.pub.output_message = on_message;
  jpeg_create_decompress(&d);
  if (setjmp(err.jmp)) {
    out.failed = true;
    out.warnings = err.pub.num_warnings;
    jpeg_destroy_decompress(&d);
    return out;
  }
  if (chunk == 0) {
    jpeg_mem_src(&d, jpeg.data(), static_cast<unsigned long>(jpeg.size()));
  } else {
    src = ChunkSource{{}, jpeg.data(), jpeg.size(), 0, chunk};
    src.pub.init_source = init_chunk;
    src.pub.fill_input_buffer = fill_chunk;
    src.pub.skip_input_data = skip_chunk;
    src.pub.resync_to_restart = jpeg_resync_to_restart;
    src.pub.term_source = term_chunk;
    d.src = &src.pub;
  }
  jpeg_read_header(&d, TRUE);
  if (what == Read::Coefficients) {
    jvirt_barray_ptr* arrays = jpeg_read_coefficients(&d);
    for (int c = 0; c < d.num_components; c++) {
      const jpeg_component_info& ci = d.comp_info[c];
      for (JDIMENSION y = 0; y < ci.height_in_blocks; y++) {
        JBLOCKARRAY row = d.mem->access_virt_barray(reinterpret_cast<j_common_ptr>(&d), arrays[c], y, 1, FALSE);
        for (JDIMENSION x = 0; x < ci.width_in_blocks; x++)
          out.values.insert(out.values.end(), row[0][x], row[0][x] + DCTSIZE2);
      }
    }
  } else {
    d.scale_num = what == Read::Eighth ? 1 : 4;
    d.scale_denom = 8;
    jpeg_start_decompress(&d);
    std::vector<JSAMPLE> line(size_t(d.output_width) * d.output_components);
    while (d.output_scanline < d.output_height) {
      JSAMPROW rp = line.data();
      jpeg_read_scanlines(&d, &rp, 1);
      out.values.insert(out.values.end(), line.begin(), line.end());
    }
  }
  jpeg_finish_decompress(&d);
  out.warnings = err.pub.num_warnings;
  jpeg_destroy_decompress(&d);
  return out;
}

/** The fast and slow decoders agree on `jpeg` for all three reads; `name` says which input failed. */
void check_paths_agree(const std::string& name, const std::vector<uint8_t>& jpeg) {
  for (Read what : {Read::Coefficients, Read::Eighth, Read::Half}) {
    const Decoded fast = decode(jpeg, 0, what), slow = decode(jpeg, 61, what);
    if (!(fast == slow))
      record_failure(__FILE__, __LINE__,
                     name + " read " + show(int(what)) + ": fast path " + (fast.failed ? "failed" : "ok") + " w" +
                         show(fast.warnings) + " n" + show(fast.values.size()) + ", slow path " +
                         (slow.failed ? "failed" : "ok") + " w" + show(slow.warnings) + " n" +
                         show(slow.values.size()) + (fast.values == slow.values ? " same values" : " values differ"));
  }
}

/** Camera-like content at the highest quality (quantizers of 1: AC magnitudes past the 10-bit table) and the usual. */
std::vector<JSpec> huffman_layouts() {
  std::vector<JSpec> v = layouts();
  JSpec q100{"q100-noisy-420", 523, 389};
  q100.quality = 100;
  q100.noise = 60;
  v.push_back(q100);
  JSpec q100_444{"q100-noisy-444", 401, 277, 3, 1, 1};
  q100_444.quality = 100;
  q100_444.noise = 90;
  v.push_back(q100_444);
  for (int mcus : {1, 3, 7, 40}) {
    JSpec r{"restart-every-mcus", 611, 203, 3, 2, 1};
    r.restart_mcus = mcus;
    r.quality = 95;
    r.noise = 20;
    v.push_back(r);
  }
  JSpec grey_rst{"grey-restart-5", 333, 211, 1};
  grey_rst.restart_mcus = 5;
  v.push_back(grey_rst);
  return v;
}

}  // namespace

PANTO_TEST(jpeg, huffman_fast_path_equals_the_slow_decoder) {
  for (const JSpec& s : huffman_layouts())
    check_paths_agree(std::string(s.name) + " mcus " + show(s.restart_mcus), make_jpeg(s));
  for (const char* f : {"jpeg-baseline.jpg", "jpeg-cmyk.jpg", "jpeg-gray.jpg", "jpeg-metadata.jpg",
                        "jpeg-progressive.jpg", "jpeg-orient-6.jpg"})
    check_paths_agree(f, fixture(f));
}

PANTO_TEST(jpeg, huffman_fast_path_equals_the_slow_decoder_on_damaged_streams) {
  JSpec q100{"q100", 389, 271};
  q100.quality = 100;
  q100.noise = 50;
  JSpec rst{"restart", 401, 263, 3, 2, 1};
  rst.restart_mcus = 4;
  rst.noise = 30;
  const std::vector<std::vector<uint8_t>> bases = {make_jpeg(q100), make_jpeg(rst), fixture("jpeg-baseline.jpg")};
  Prng r(35);
  int b = 0;
  for (const auto& base : bases) {
    b++;
    // The entropy data starts after the SOS segment; damage only what follows it.
    size_t sos = 0;
    for (size_t i = 0; i + 1 < base.size(); i++)
      if (base[i] == 0xFF && base[i + 1] == 0xDA) sos = i + 2 + (size_t(base[i + 2]) << 8 | base[i + 3]);
    PANTO_REQUIRE(sos > 0 && sos < base.size());
    const size_t body = base.size() - sos;
    for (int k = 0; k < 24; k++) {
      std::vector<uint8_t> v = base;
      const size_t at = sos + r.next() % body;
      std::string what;
      switch (k % 4) {
        case 0:
          v.resize(at);
          what = "truncated";
          break;
        case 1:
          for (int j = 0; j < 3; j++) v[sos + r.next() % body] ^= uint8_t(1 + r.next() % 255);
          what = "flipped";
          break;
        case 2:
          v.insert(v.begin() + long(at), {0xFF, uint8_t(0xD0 + r.next() % 8)});
          what = "stray restart marker";
          break;
        default:
          for (size_t j = at; j + 1 < v.size() && j < at + 40; j += 2) {
            v[j] = 0xFF;
            v[j + 1] = 0x00;
          }
          what = "stuffed run";
      }
      check_paths_agree("base " + show(b) + " " + what + " at " + show(at), v);
    }
  }
}
