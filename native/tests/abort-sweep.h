// The frame of the stream ctests' abort cases: each part-thread setting in turn, under a fresh budget with an abort
// flag, and nothing left charged afterwards.
#pragma once

#include <atomic>
#include <cstdint>

#include "budget.h"
#include "harness.h"
#include "parallel.h"

namespace panto_test {

/** Calls `body(threads, budget, flag)` with part threads on, then off (set_parts_concurrency, restored after each
 *  call), each time with a fresh 256 MiB budget (not put in scope: the body does) whose abort flag `flag` starts
 *  lowered; after each call, checks that nothing is left charged to that budget. */
template <class Body>
void abort_sweep(Body body) {
  for (bool threads : {true, false}) {
    const bool prev = panto::set_parts_concurrency(threads);
    std::atomic<int> flag{0};
    panto::Budget budget(256ull << 20, &flag);
    body(threads, budget, flag);
    PANTO_CHECK_EQ(budget.used.load(), uint64_t(0));
    panto::set_parts_concurrency(prev);
  }
}

}  // namespace panto_test
