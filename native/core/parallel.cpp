#include "parallel.h"

#include <atomic>
#include <exception>
#include <mutex>
#include <vector>

#include "budget.h"

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
  std::vector<int> on_caller;  // parts run here, in order, after part 0
#if PANTO_THREADS
  std::vector<std::thread> helpers;
  if (parts > 1 && parts_run_concurrently()) {
    Budget* budget = current_budget();
    helpers.reserve(size_t(parts - 1));  // before any thread starts: emplace_back never reallocates below
    on_caller.reserve(size_t(parts - 1));
    for (int i = 1; i < parts; i++) {
      try {
        helpers.emplace_back([&guarded, budget, i] {
          BudgetScope scope(budget);
          guarded(i);
        });
      } catch (...) {  // std::system_error (no thread available) or std::bad_alloc (its state)
        on_caller.push_back(i);
      }
    }
  } else {
    for (int i = 1; i < parts; i++) on_caller.push_back(i);
  }
#else
  for (int i = 1; i < parts; i++) on_caller.push_back(i);
#endif
  if (parts > 0) guarded(0);
  for (int i : on_caller) guarded(i);
#if PANTO_THREADS
  for (std::thread& t : helpers) t.join();
#endif
  if (first) std::rethrow_exception(first);
}

}  // namespace panto
