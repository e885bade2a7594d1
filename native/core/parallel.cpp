#include "parallel.h"

#include <atomic>
#include <exception>
#include <mutex>
#include <system_error>
#include <vector>

#include "budget.h"

// WebAssembly without -pthread (scripts/build-wasm.sh): std::thread cannot start, so the parts run in order.
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define PANTO_THREADS 0
#elif !defined(PANTO_THREADS)
#define PANTO_THREADS 1
#endif

#if PANTO_THREADS
#include <thread>
#endif

namespace panto {

namespace {
std::atomic<bool> g_allowed{true};
}  // namespace

bool set_parts_concurrency(bool allowed) { return g_allowed.exchange(allowed); }

bool parts_run_concurrently() {
#if PANTO_THREADS
  static const bool many = std::thread::hardware_concurrency() >= 2;
  return many && g_allowed.load(std::memory_order_relaxed);
#else
  return false;
#endif
}

void run_parts(int parts, const std::function<void(int)>& fn) {
  if (parts <= 1 || !parts_run_concurrently()) {
    for (int i = 0; i < parts; i++) fn(i);
    return;
  }
#if PANTO_THREADS
  std::exception_ptr first;
  std::mutex m;
  auto guarded = [&](int i) {
    try {
      fn(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(m);
      if (!first) first = std::current_exception();
    }
  };
  Budget* budget = current_budget();
  std::vector<std::thread> helpers;
  std::vector<int> inline_parts;
  helpers.reserve(size_t(parts - 1));
  for (int i = 1; i < parts; i++) {
    try {
      helpers.emplace_back([&guarded, budget, i] {
        BudgetScope scope(budget);
        guarded(i);
      });
    } catch (const std::system_error&) {
      inline_parts.push_back(i);  // no thread: this part runs on the caller below
    }
  }
  guarded(0);
  for (int i : inline_parts) guarded(i);
  for (std::thread& t : helpers) t.join();
  if (first) std::rethrow_exception(first);
#endif
}

}  // namespace panto
