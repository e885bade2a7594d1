// libwebp's allocator (cdeps/patches/libwebp/0002 routes WebPSafeMalloc/Calloc/Free here; PANTO_WEBP_MALLOC & co.
// in scripts/native-sources.cjs).
//
// Blocks come from the budget allocator (budget.h) WITHOUT charging any call's budget (as before: the cost estimate,
// not the per-call limit, covers libwebp's working memory), so a large block is its own mapping, returned to the OS
// when freed, on whichever thread. That matters since libwebp runs a helper thread per call (WEBP_USE_THREAD): with
// the C allocator, every thread that allocates gets its own glibc arena, and an arena keeps tens of MB of freed
// blocks resident (glibc raises its mmap and trim thresholds up to 32/64 MiB after large frees), so each WebP call
// left the helper's arena holding the alpha encoder's buffers: measured +30-60 MB peak RSS over repeated calls.
// Mapped blocks of 2 MiB and more take transparent huge pages and smaller ones are populated up front (budget.cpp),
// so the fresh mappings do not pay a 4 KiB page fault per page (plain glibc mmap for these blocks doubled the time).
//
// Contract: the three functions have malloc's, calloc's and free's semantics (NULL on failure; free(NULL) is a no-op)
// and may be called on any thread, with or without a BudgetScope. They throw nothing.
#include <cstddef>
#include <cstdint>

#include "budget.h"

extern "C" void* panto_webp_malloc(size_t size) {
  panto::BudgetScope uncharged(nullptr);  // charge no call: budget_id 0, so the free is never uncharged either
  return panto_budget_malloc(size);
}

extern "C" void* panto_webp_calloc(size_t nmemb, size_t size) {
  if (size != 0 && nmemb > SIZE_MAX / size) return nullptr;
  void* p = panto_webp_malloc(nmemb * size);
  panto_budget_zero_fresh(p, nmemb * size);  // a fresh mapping is already zero; a malloc'ed block is cleared
  return p;
}

extern "C" void panto_webp_free(void* ptr) { panto_budget_free(ptr); }
