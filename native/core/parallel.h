// Row-split parallelism for one call into the core: the work of a stage is cut into a FIXED number of parts (by
// output rows) whose arithmetic does not depend on how many threads run them, so the bytes are the same whether the
// parts run at once (native builds) or one after another (WebAssembly without threads, one-core machines, or when a
// thread cannot be started).
#pragma once

#include <functional>

// Whether this build can start threads: not WebAssembly without -pthread (scripts/build-wasm.sh), where std::thread
// cannot start and every threaded stage runs its work on the caller, in order.
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define PANTO_THREADS 0
#elif !defined(PANTO_THREADS)
#define PANTO_THREADS 1
#endif

namespace panto {

/** The number of parts row-split stages use, everywhere: never derived from the machine, so outputs stay identical. */
constexpr int kRowParts = 2;

/** True when this build can run parts on a helper thread, the machine has more than one hardware thread and
 *  set_parts_concurrency has not turned it off. */
bool parts_run_concurrently();

/** Process-wide switch (default on) for tests that compare the concurrent and the sequential runs of the same parts;
 *  returns the previous setting. Off, every part runs on the caller. */
bool set_parts_concurrency(bool allowed);

/**
 * Runs fn(0) .. fn(parts - 1) and returns when all have finished. Part 0 runs on the calling thread; the others on
 * helper threads when parts_run_concurrently(), else on the caller in order (also when a thread cannot be started).
 * Each helper runs under the caller's Budget (a BudgetScope on the same Budget, see budget.h): its allocations charge
 * the same call and it sees the same abort flag. Parts must write disjoint memory. No exception escapes a helper: the
 * first one thrown by any part is rethrown on the caller after every part has finished.
 */
void run_parts(int parts, const std::function<void(int)>& fn);

}  // namespace panto
