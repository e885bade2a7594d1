// Memory and cancellation control for one call into the core, and the process-wide cap on decoded bytes in flight.
//
// Per call: every STBI_/STBIW_/STBIR_ allocation (and the core's own pixel buffers) goes through panto_budget_*;
// while a BudgetScope is active on a thread, allocations that would push that call's live bytes past its limit fail
// (return NULL), which the decoders report as out-of-memory (ERR_MEDIA_TOO_LARGE). A Budget may be shared by the
// threads of one call (run_parts' helper threads, parallel.h, install the same Budget): its counters are atomic.
//
// Process-wide: a call reserves its whole budget from one pool (MemoryReservation) before it allocates anything, so
// the decoded bytes of all calls in flight — across every worker_thread that loaded the addon — never exceed the cap
// (default 1 GiB, set_memory_cap). A reservation that does not fit now fails without blocking; the caller queues.
//
// Cancellation: a Budget may carry an abort flag (set from another thread); should_abort() polls it. The decoders
// poll it between rows/scans (STBI_SHOULD_ABORT, see cdeps/patches/stb), the pipeline between stages.
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
/** Like panto_budget_malloc (same charge, same free/realloc) for a block sized by a worst case of which only a part
 *  is ever written (an encoder's output bound): its pages are neither populated up front nor huge, so its resident
 *  size is what was written. A realloc of it keeps that. */
void* panto_budget_malloc_sparse(size_t size);
/** Like panto_budget_malloc (same charge, same free/realloc) for a block written once in full and then read front
 *  to back by a decoder: the copy of a caller's input. From 64 KiB (Linux) it is its own mapping on 4 KiB pages
 *  (advised MADV_NOHUGEPAGE, prefaulted where the kernel can), so that discard_input (below) can return any whole
 *  pages of it to the OS. */
void* panto_budget_malloc_input(size_t size);
void* panto_budget_realloc(void* ptr, size_t size);
void panto_budget_free(void* ptr);
/** Zeroes `n` bytes of a block JUST returned by panto_budget_malloc, skipping the work (and the resident pages) when
 *  the block was freshly mapped and therefore already zero. Never use on a block that has been written. */
void panto_budget_zero_fresh(void* ptr, size_t n);
/** 1 when the active budget's abort flag is set (polled by the decoders between rows), else 0. */
int panto_should_abort(void);

#if PANTO_HOST_MEMORY_POOL
/* Defined by the host when the core is built with PANTO_HOST_MEMORY_POOL=1 (the WebAssembly build, whose instances
 * share no memory): the process-wide pool and the abort flag live with the host. Byte counts are integers <= 2^53
 * carried as doubles. try_reserve: all or nothing, never blocks, 0 when `bytes` does not fit next to the calls in
 * flight; should_abort: 1 when the running call's token was aborted (consulted only when the call carries a token,
 * i.e. ProcessOptions::abort_flag is set). */
int panto_host_try_reserve(double bytes);
void panto_host_release(double bytes);
double panto_host_set_memory_cap(double bytes);
double panto_host_memory_cap(void);
double panto_host_memory_in_flight(void);
int panto_host_should_abort(void);
#endif

#ifdef __cplusplus
}

#include <atomic>

namespace panto {

struct Budget {
  explicit Budget(uint64_t limit_bytes, const std::atomic<int>* abort_flag = nullptr);
  uint64_t id;  // unique per Budget, so a block outliving its call is never uncharged from a later one
  uint64_t limit;
  std::atomic<uint64_t> used{0};
  std::atomic<uint64_t> peak{0};
  std::atomic<bool> exceeded{false};  // an allocation was refused
  const std::atomic<int>* abort_flag;  // owned by the caller; outlives the Budget
  // The input range discard_input may release (InputDiscardScope): set and cleared by the call's thread while no
  // helper thread of the call runs (before they start, after they are joined).
  const uint8_t* discardable = nullptr;
  size_t discardable_len = 0;
};

/**
 * Declares that the call of `budget` will never read [data, data + len) again except the parts a decoder has not
 * consumed yet, until this scope ends: discard_input() may then return consumed pages to the OS. `data` must be a
 * block from panto_budget_malloc_input (the caller's input copy, owned by the call: nothing else maps or reads it) or
 * other private memory the call owns outright (an input handed over by transfer, ProcessOptions::input_discardable;
 * only whole pages inside it are ever released, so neighbours sharing its first or last page are untouched), or the
 * scope does nothing (`data` null). A pass that may read the input again (a re-decode) must not run inside
 * such a scope.
 */
class InputDiscardScope {
 public:
  InputDiscardScope(Budget* budget, const uint8_t* data, size_t len);
  ~InputDiscardScope();
  InputDiscardScope(const InputDiscardScope&) = delete;
  InputDiscardScope& operator=(const InputDiscardScope&) = delete;

 private:
  Budget* budget_;
};

/**
 * Returns to the OS the whole pages of [begin, end) that lie inside the input the active budget declared
 * discardable (InputDiscardScope); they read as zeros afterwards. For a decoder that has consumed [begin, end) of
 * its input for good. A no-op without such a scope, outside that range, for a block below 64 KiB, and off Linux.
 * Returns the bytes released (whole pages).
 */
size_t discard_input(const uint8_t* begin, const uint8_t* end);

/**
 * Returns to the OS the whole pages inside [begin, end) (never a page that also holds bytes outside it); they read as
 * zeros afterwards. Only for memory the caller owns outright and will not read again (a block of its own that
 * nothing else shares a page with, besides its ends). Linux only; elsewhere a no-op. Returns the bytes released.
 */
size_t release_pages(const uint8_t* begin, const uint8_t* end);

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

/** True when the active budget's abort flag is set. */
bool should_abort();

/** Releases a block from panto_budget_malloc (usable as OwnedBytes::release). */
void budget_release(uint8_t* p);

/** The process-wide cap until set_memory_cap changes it: 1 GiB. */
constexpr uint64_t kDefaultMemoryCap = 1ull << 30;
/** Sets the process-wide cap on reserved (decoded) bytes in flight; returns the previous cap. */
uint64_t set_memory_cap(uint64_t bytes);
/** The process-wide cap. */
uint64_t memory_cap();
/** Bytes currently reserved by calls in flight (all threads). */
uint64_t memory_in_flight();

/** A reservation of `bytes` from the process-wide pool, released on destruction. */
class MemoryReservation {
 public:
  MemoryReservation() = default;
  ~MemoryReservation() { release(); }
  MemoryReservation(const MemoryReservation&) = delete;
  MemoryReservation& operator=(const MemoryReservation&) = delete;
  /** Tries to reserve `bytes` (all or nothing, never blocks). False when the pool cannot fit them now. */
  bool try_reserve(uint64_t bytes);
  void release();
  uint64_t bytes() const { return bytes_; }

 private:
  uint64_t bytes_ = 0;
};

}  // namespace panto
#endif
