// The frame of the tight-budget cases: one call under budgets from far too small to enough.
#pragma once

#include <cstdint>
#include <string>

#include "budget.h"
#include "harness.h"
#include "media-core.h"

namespace panto_test {

/** Runs `call()` (returning a panto::Status) in the scope of budgets from 64 KiB to 48 MiB (x1.5 each step). Every
 *  stop must be ERR_MEDIA_TOO_LARGE and leave nothing charged; at least 4 steps must stop and 2 complete (the ladder
 *  spans the call's needs). `what` names the call in failures. */
template <class Call>
void budget_ladder(const std::string& what, Call call) {
  int too_large = 0, ok = 0;
  for (uint64_t limit = 64 << 10; limit <= (uint64_t(48) << 20); limit = limit * 3 / 2) {
    panto::Budget b(limit);
    panto::Status st;
    {
      panto::BudgetScope scope(&b);
      st = call();
    }
    const std::string at = what + " under " + std::to_string(limit) + " bytes: ";
    if (st.ok()) ok++;
    else if (st.code == "ERR_MEDIA_TOO_LARGE") too_large++;
    else record_failure(__FILE__, __LINE__, at + st.code + " " + st.message);
    if (b.used.load() != 0) record_failure(__FILE__, __LINE__, at + std::to_string(b.used.load()) + " bytes left charged");
  }
  if (too_large < 4 || ok < 2)
    record_failure(__FILE__, __LINE__, what + ": " + std::to_string(too_large) + " stops and " + std::to_string(ok) +
                                           " completions; the ladder no longer spans the call's needs");
}

}  // namespace panto_test
