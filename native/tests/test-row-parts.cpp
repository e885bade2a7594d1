// Row-split parallelism (parallel.h): the same bytes whether the parts run at once or one after another (the
// WebAssembly build runs them in order), helpers charging the caller's Budget and seeing its abort flag, and no
// exception escaping a helper thread.
#include <atomic>
#include <cstring>
#include <stdexcept>

#include "budget.h"
#include "internal.h"
#include "parallel.h"
#include "test-util.h"

using namespace panto_test;

namespace {

/** A photo-like RGB(A) image: gradients, hard edges and hashed grain, so every filter and resize tap matters. */
panto::Pixels pattern(uint32_t w, uint32_t h, int channels) {
  panto::Pixels px;
  px.width = w;
  px.height = h;
  px.channels = channels;
  if (!panto::alloc_owned(size_t(w) * h * channels, &px.data)) return px;
  uint32_t seed = 12345;
  for (uint32_t y = 0; y < h; y++)
    for (uint32_t x = 0; x < w; x++) {
      seed = seed * 1103515245u + 12345u;
      uint8_t* p = px.data.data + (size_t(y) * w + x) * channels;
      const bool box = (x / 97 + y / 61) % 3 == 0;
      p[0] = uint8_t(box ? 240 : (x * 255) / w);
      p[1] = uint8_t(box ? 20 : (y * 255) / h);
      p[2] = uint8_t((x ^ y) + (seed >> 28));
      if (channels == 4) p[3] = uint8_t(x % 200 == 0 ? 0 : 255 - (y % 7));
    }
  return px;
}

std::vector<uint8_t> bytes_of(const panto::OwnedBytes& b) { return std::vector<uint8_t>(b.data, b.data + b.size); }

/** Runs `fn` with the parts run concurrently and then sequentially; both results must be byte-identical. */
template <typename F>
void check_same_both_ways(const char* what, F fn) {
  const bool was = panto::set_parts_concurrency(true);
  const std::vector<uint8_t> a = fn();
  panto::set_parts_concurrency(false);
  const std::vector<uint8_t> b = fn();
  panto::set_parts_concurrency(was);
  if (a.empty()) record_failure(__FILE__, __LINE__, std::string(what) + ": no output");
  if (a != b) record_failure(__FILE__, __LINE__, std::string(what) + ": concurrent and sequential bytes differ");
}

}  // namespace

PANTO_TEST(process, resize_and_png_encode_bytes_do_not_depend_on_threads) {
  for (int channels : {3, 4}) {
    const panto::Pixels src = pattern(1531, 977, channels);
    PANTO_REQUIRE(src.data.data != nullptr);
    check_same_both_ways(channels == 4 ? "resize RGBA" : "resize RGB", [&] {
      panto::Pixels out;
      if (!panto::resize_pixels(src, 1000, 638, &out).ok()) return std::vector<uint8_t>();
      return bytes_of(out.data);
    });
    check_same_both_ways(channels == 4 ? "PNG RGBA" : "PNG RGB", [&] {
      panto::OwnedBytes out;
      if (!panto::encode_png(src.view(), &out).ok()) return std::vector<uint8_t>();
      return bytes_of(out);
    });
  }
  // Odd heights and one-row images split into uneven or empty parts.
  for (uint32_t h : {1u, 2u, 3u, 9u}) {
    const panto::Pixels src = pattern(40, h, 3);
    check_same_both_ways("PNG few rows", [&] {
      panto::OwnedBytes out;
      if (!panto::encode_png(src.view(), &out).ok()) return std::vector<uint8_t>();
      return bytes_of(out);
    });
  }
}

PANTO_TEST(process, whole_pipeline_bytes_do_not_depend_on_threads) {
  const panto::Pixels src = pattern(2400, 1500, 3);
  panto::OwnedBytes jpeg, png;
  PANTO_REQUIRE(panto::encode_jpeg(src.view(), 92, &jpeg).ok());
  PANTO_REQUIRE(panto::encode_png(src.view(), &png).ok());
  for (const panto::OwnedBytes* in : {&jpeg, &png}) {
    check_same_both_ways(in == &jpeg ? "process JPEG" : "process PNG", [&] {
      panto::ProcessOptions opts;
      opts.max_dimension = 1000;
      opts.max_encoded_bytes = 64u << 20;
      panto::ProcessResult r;
      if (!panto::process(in->data, in->size, opts, &r).ok() || r.unchanged) return std::vector<uint8_t>();
      return bytes_of(r.data);
    });
  }
}

PANTO_TEST(budget, helper_parts_charge_the_callers_budget_and_see_its_abort_flag) {
  std::atomic<int> flag{0};
  panto::Budget b(4u << 20, &flag);
  panto::BudgetScope scope(&b);
  void* blocks[panto::kRowParts] = {};
  panto::Budget* seen[panto::kRowParts] = {};
  panto::run_parts(panto::kRowParts, [&](int i) {
    seen[i] = panto::current_budget();
    blocks[i] = panto_budget_malloc(1u << 20);
  });
  for (int i = 0; i < panto::kRowParts; i++) {
    PANTO_CHECK(seen[i] == &b);
    PANTO_CHECK(blocks[i] != nullptr);
  }
  PANTO_CHECK_EQ(b.used.load(), uint64_t(panto::kRowParts) << 20);
  // Blocks allocated on a helper are uncharged when the caller frees them.
  for (void* p : blocks) panto_budget_free(p);
  PANTO_CHECK_EQ(b.used.load(), uint64_t(0));
  // The limit holds across the parts: together they cannot take more than the budget.
  std::atomic<int> refused{0};
  panto::run_parts(panto::kRowParts, [&](int i) {
    blocks[i] = panto_budget_malloc(3u << 20);
    if (!blocks[i]) refused++;
  });
  PANTO_CHECK_EQ(refused.load(), panto::kRowParts - 1);
  for (void* p : blocks) panto_budget_free(p);
  PANTO_CHECK_EQ(b.used.load(), uint64_t(0));
  flag = 1;
  std::atomic<int> aborted{0};
  panto::run_parts(panto::kRowParts, [&](int) {
    if (panto::should_abort()) aborted++;
  });
  PANTO_CHECK_EQ(aborted.load(), panto::kRowParts);
}

PANTO_TEST(budget, an_exception_in_a_part_reaches_the_caller_after_all_parts_finished) {
  for (bool concurrent : {true, false}) {
    const bool was = panto::set_parts_concurrency(concurrent);
    std::atomic<int> finished{0};
    bool caught = false;
    try {
      panto::run_parts(panto::kRowParts, [&](int i) {
        finished++;
        if (i == 0) throw std::runtime_error("part failed");
      });
    } catch (const std::runtime_error& e) {
      caught = std::strcmp(e.what(), "part failed") == 0;
    }
    panto::set_parts_concurrency(was);
    PANTO_CHECK(caught);
    PANTO_CHECK_EQ(finished.load(), panto::kRowParts);
  }
}
