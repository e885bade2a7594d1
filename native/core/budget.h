// Per-call allocation budget for the decoders and encoders compiled from cdeps (stb). Every STBI_/STBIW_/STBIR_
// allocation goes through panto_budget_*; while a BudgetScope is active on a thread, allocations that would push that
// call's live bytes past its limit fail (return NULL), which the decoders report as out-of-memory.
//
// Invariants: each block carries a 16-byte header naming the budget it was charged to, so a block freed on another
// thread or after the scope ended never corrupts another call's accounting. Blocks allocated here must be freed with
// panto_budget_free (never free()).
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void* panto_budget_malloc(size_t size);
void* panto_budget_realloc(void* ptr, size_t size);
void panto_budget_free(void* ptr);

#ifdef __cplusplus
}

namespace panto {

struct Budget {
  explicit Budget(uint64_t limit_bytes);
  uint64_t id;  // unique per Budget, so a block outliving its call is never uncharged from a later one
  uint64_t limit;
  uint64_t used = 0;
  uint64_t peak = 0;
  bool exceeded = false;  // an allocation was refused
};

/** Activates `budget` for the current thread until destroyed (scopes nest; the innermost one is charged). */
class BudgetScope {
 public:
  explicit BudgetScope(Budget* budget);
  ~BudgetScope();
  BudgetScope(const BudgetScope&) = delete;
  BudgetScope& operator=(const BudgetScope&) = delete;

 private:
  Budget* previous_;
};

/** The budget active on this thread, or nullptr. */
Budget* current_budget();

/** Releases a block from panto_budget_malloc (usable as OwnedBytes::release). */
void budget_release(uint8_t* p);

}  // namespace panto
#endif
