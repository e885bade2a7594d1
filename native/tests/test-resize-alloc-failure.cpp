// The resizers fail cleanly at every allocation (found by native/fuzz/fuzz-process.cpp, codec mode): each budget
// limit from 0 up to one that suffices makes resize_pixels and the row stream (decoded_resize_stream) either succeed
// or return ERR_MEDIA_TOO_LARGE, with nothing left charged. In sanitizer builds stb_image_resize2 allocates each of
// its buffers separately, and before cdeps/patches/stb/0010 a refused allocation made it free the uninitialised
// pointers of the buffers not yet allocated (UBSan: misaligned Header in panto_budget_free; ASan: bad free). The
// shipped build makes one allocation and passes either way; `PANTO_SANITIZE=ON` ctest is where this fails before the
// patch.
#include <cstdlib>
#include <cstring>
#include <string>

#include "budget.h"
#include "decoded-resize-stream.h"
#include "internal.h"
#include "test-util.h"

using namespace panto_test;

namespace {

/** Runs `resize` under budgets of 0, step, 2 * step, ... bytes until one succeeds (at most `max` bytes); every
 *  failure must be ERR_MEDIA_TOO_LARGE and every budget must end with nothing charged. Returns the number of
 *  limits refused. */
template <class Resize>
int sweep(const char* what, uint64_t step, uint64_t max, Resize resize) {
  int refused = 0;
  for (uint64_t limit = 0; limit <= max; limit += step) {
    panto::Status st;
    panto::Budget b(limit);
    {
      panto::BudgetScope scope(&b);
      st = resize();
    }
    if (b.used.load() != 0)
      record_failure(__FILE__, __LINE__, std::string(what) + ": bytes left charged at limit " + std::to_string(limit));
    if (st.ok()) return refused;
    if (st.code != "ERR_MEDIA_TOO_LARGE") {
      record_failure(__FILE__, __LINE__, std::string(what) + " at limit " + std::to_string(limit) + ": '" + st.code +
                                             "' " + st.message);
      return refused;
    }
    refused++;
  }
  record_failure(__FILE__, __LINE__, std::string(what) + ": never succeeded up to " + std::to_string(max));
  return refused;
}

panto::Pixels decoded(const char* name) {
  const auto in = fixture(name);
  panto::MediaInfo info;
  panto::Pixels px;
  if (!panto::probe(in.data(), in.size(), &info).ok() || !panto::decode_image(in.data(), in.size(), info, &px).ok())
    std::abort();
  return px;
}

}  // namespace

PANTO_TEST(budget, resizers_fail_cleanly_at_every_allocation) {
  for (const char* name : {"png-rgb.png", "png-rgba.png", "webp-lossless.webp"}) {
    const panto::Pixels px = decoded(name);  // (outside any budget)
    const uint32_t w = 1 + px.width / 3, h = 1 + px.height / 2;  // the fuzzer's shape: shrinks x3 and x2
    const int a = sweep(name, 64, 4u << 20, [&] {
      panto::Pixels out;
      return panto::resize_pixels(px, w, h, &out);
    });
    const int b = sweep(name, 64, 4u << 20, [&] {
      panto::Pixels copy, out;
      copy.width = px.width, copy.height = px.height, copy.channels = px.channels;
      if (!panto::alloc_owned(px.data.size, &copy.data))
        return panto::Status::Err("ERR_MEDIA_TOO_LARGE", "no budget for the copy");
      std::memcpy(copy.data.data, px.data.data, px.data.size);
      return panto::decoded_resize_stream(&copy, false, w, h, panto::MediaType::Png, &out);
    });
    // Both sweeps passed through the resizer's own allocations, not only the output buffer's.
    PANTO_CHECK(a > 2);
    PANTO_CHECK(b > 2);
  }
}
