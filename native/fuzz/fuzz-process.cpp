// libFuzzer target over the whole decode path: sniff -> probe -> process (decode, orient, resize, encode, strip) and
// decode_to_rgba, with small caps so each input stays fast and bounded. The whole input is the file (so the fixture
// seed corpus is exercised as is); its last byte also selects options, so the fuzzer explores resize, forced JPEG
// output (flatten) and the byte-cap ladder.
//
// Build: CC=clang CXX=clang++ cmake -S . -B build-fuzz -DPANTO_FUZZ=ON && cmake --build build-fuzz --target fuzz_process
// Run:   build-fuzz/fuzz_process -max_total_time=60 -rss_limit_mb=2048 -timeout=10 CORPUS_DIR test/fixtures/media
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "media-core.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t selector = data[size - 1];
  const uint8_t* img = data;
  const size_t len = size;

  (void)panto::sniff(img, len);
  panto::MediaInfo info;
  (void)panto::probe(img, len, &info);

  panto::ProcessOptions o;
  o.max_pixels = 4u << 20;  // 4 MP keeps every iteration fast; the header check is exercised at this cap
  o.max_input_bytes = 1u << 20;
  o.max_dimension = (selector & 2) ? 16 : 2000;
  if (selector & 4) o.format = panto::OutputFormat::Jpeg;
  if (selector & 8) o.max_encoded_bytes = 200 + (selector >> 4) * 64;  // drive the quality/size ladder
  o.keep_metadata = (selector & 0x10) != 0 && !(selector & 8);
  panto::ProcessResult r;
  const panto::Status st = panto::process(img, len, o, &r);
  if (st.ok()) {
    const size_t out_size = r.unchanged ? len : r.data.size;
    if (out_size > o.max_encoded_bytes && r.type != panto::MediaType::Pdf) std::abort();  // contract: never over
    if (!r.unchanged && (r.data.data == nullptr) != (r.data.size == 0)) std::abort();
  } else if (st.code == "ERR_INTERNAL") {
    std::abort();  // ERR_INTERNAL means a bug
  }

  panto::DecodedImage d;
  const panto::Status ds = panto::decode_to_rgba(img, len, o.max_pixels, &d);
  if (ds.ok() && d.rgba.size != static_cast<size_t>(d.width) * d.height * 4) std::abort();
  return 0;
}
