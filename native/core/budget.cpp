#include "budget.h"

#include <atomic>
#include <cstdlib>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#define PANTO_BUDGET_MMAP 1
#endif
#include <cstring>

namespace panto {
namespace {

thread_local Budget* tls_budget = nullptr;

std::atomic<uint64_t> next_id{1};

struct alignas(16) Header {
  uint64_t budget_id;  // 0 = not charged
  size_t size;         // payload bytes; the block is mmapped when size >= kMmapThreshold (Linux)
};

// Large and mid-size blocks (decoded images, codec intermediates, row buffers, encoder state) are mapped directly so
// that freeing them returns the memory to the OS at once. Through malloc they would land in the arena of the thread
// that runs the call (glibc gives each libuv worker its own) and stay resident after it: a host that has freed one
// malloc'ed block of N bytes (Node's Buffers are) has raised glibc's dynamic mmap threshold to N and its arena trim
// threshold to 2N, and the top of a thread's arena is only trimmed beyond that; malloc_trim never trims it. Measured
// (Node 20, glibc 2.36): a 250 KB libjpeg block or libdeflate's 650 KB compressor left 250-320 KB resident in EACH
// worker's arena that ran a call, ~1 MB after three calls. Blocks below 64 KiB stay with malloc (mapping each costs
// a syscall; what the arenas keep of them is small).
constexpr size_t kMmapThreshold = 64 * 1024;
// The pages of a block below 2 MiB are mapped in one go (MAP_POPULATE) instead of one page fault per 4 KiB page on
// first touch (larger blocks take huge pages instead, below): nearly every large block is written in full right away
// (decoded rows, resized pixels, filtered PNG rows), and
// on virtualised hosts a page fault costs microseconds — measured, a third of the time of a 2880x1800 PNG -> 2000 px
// call went to first-touch faults. Blocks stay zero-filled (panto_budget_zero_fresh still relies on that).
#ifdef MAP_POPULATE
constexpr int kPopulate = MAP_POPULATE;
#else
constexpr int kPopulate = 0;
#endif

#if PANTO_BUDGET_MMAP
// Blocks of 2 MiB and more are mapped 2 MiB-aligned and marked MADV_HUGEPAGE (transparent huge pages; Linux takes it
// in "madvise" or "always" mode and ignores it otherwise), and are NOT populated up front: a huge page faults in on
// first touch, once per 2 MiB, and pages never written (the tail of an encoder's worst-case output buffer) cost
// nothing. Measured on a virtualised 2-vCPU host (Firecracker), first write of a fresh 8 MiB block: 3.5 + 24 ms with
// 4 KiB pages and MAP_POPULATE (each page still traps into the hypervisor on first user access), 2.5 ms with lazy huge
// pages; in the pipeline, lazy huge pages took ~12% less CPU than populated ones on a 2880x1800 PNG -> 2000 px call.
// A large block's mapping is rounded up to whole huge pages when that wastes at most a quarter of it (the tail would
// otherwise stay on 4 KiB pages); the mapped length is a pure function of the size, so free and realloc recompute it.
constexpr size_t kHugePage = size_t(2) << 20;

size_t page_round(size_t n) { return (n + 4095) & ~size_t(4095); }

/** Bytes mapped for a block of `size` payload bytes (size >= kMmapThreshold). */
size_t mapped_length(size_t size) {
  const size_t total = sizeof(Header) + size;
  if (size < kHugePage) return page_round(total);
  const size_t huge = (total + kHugePage - 1) & ~(kHugePage - 1);
  return huge - total <= size / 4 ? huge : page_round(total);
}

/**
 * False when the environment has PANTO_HUGE_PAGES=0 (read once). Where the kernel's THP defrag mode compacts memory
 * synchronously on a huge-page fault ("madvise" or "always" defrag on a fragmented host), that fault can stall a call;
 * a host that would rather have steady latency than the speed turns the advice off.
 */
bool huge_pages_wanted() {
  static const bool wanted = [] {
    const char* v = std::getenv("PANTO_HUGE_PAGES");
    return !(v && v[0] == '0' && v[1] == '\0');
  }();
  return wanted;
}

/** `sparse`: the block is sized by a worst case and mostly never written (an encoder's output bound): no huge pages
 *  (advised MADV_NOHUGEPAGE, so one touched byte costs 4 KiB of RSS, not 2 MiB). */
Header* map_huge(size_t len, bool sparse) {
  void* p = mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  const uintptr_t base = reinterpret_cast<uintptr_t>(p);
  const uintptr_t start = (base + kHugePage - 1) & ~uintptr_t(kHugePage - 1);
  if (start > base) munmap(p, start - base);
  const uintptr_t end = base + len + kHugePage;
  if (end > start + len) munmap(reinterpret_cast<void*>(start + len), end - (start + len));
  void* s = reinterpret_cast<void*>(start);
#if defined(MADV_HUGEPAGE) && defined(MADV_NOHUGEPAGE)
  // Best effort: without it the block is an ordinary (zeroed, lazily faulted) mapping.
  if (sparse) madvise(s, len, MADV_NOHUGEPAGE);
  else if (huge_pages_wanted()) madvise(s, len, MADV_HUGEPAGE);
#else
  (void)sparse;
#endif
  return static_cast<Header*>(s);
}

/** An input block (panto_budget_malloc_input): 4 KiB pages only, so that any whole page of it can be discarded;
 *  mapped_length(size) bytes like every block, so free and realloc stay as they are. Prefaulted when the kernel can
 *  (MADV_POPULATE_WRITE, Linux 5.14): it is written in full at once. */
Header* map_input(size_t size) {
  const size_t len = mapped_length(size);
  void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
#ifdef MADV_NOHUGEPAGE
  madvise(p, len, MADV_NOHUGEPAGE);
#endif
#ifdef MADV_POPULATE_WRITE
  madvise(p, len, MADV_POPULATE_WRITE);  // best effort: without it, the copy faults its pages in
#endif
  return static_cast<Header*>(p);
}

/** `sparse` blocks (see map_huge) are never populated up front: only the pages written become resident. */
Header* raw_alloc(size_t size, bool sparse = false) {
  if (size < kMmapThreshold) return static_cast<Header*>(std::malloc(sizeof(Header) + size));
  if (size >= kHugePage) return map_huge(mapped_length(size), sparse);
  const int populate = sparse ? 0 : kPopulate;
  void* p = mmap(nullptr, sizeof(Header) + size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | populate, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<Header*>(p);
}
void raw_free(Header* h) {
  if (h->size < kMmapThreshold) std::free(h);
  else munmap(h, mapped_length(h->size));
}
Header* raw_realloc(Header* h, size_t size) {
  const size_t old = h->size;
  if (old < kMmapThreshold && size < kMmapThreshold) return static_cast<Header*>(std::realloc(h, sizeof(Header) + size));
  if (old >= kMmapThreshold && size >= kMmapThreshold) {
    void* p = mremap(h, mapped_length(old), mapped_length(size), MREMAP_MAYMOVE);
    return p == MAP_FAILED ? nullptr : static_cast<Header*>(p);
  }
  Header* n = raw_alloc(size);
  if (!n) return nullptr;
  std::memcpy(n, h, sizeof(Header) + (old < size ? old : size));
  raw_free(h);
  return n;
}

size_t page_size() {
  static const size_t n = [] {
    const long v = sysconf(_SC_PAGESIZE);
    return v > 0 ? size_t(v) : size_t(4096);
  }();
  return n;
}
#else
Header* raw_alloc(size_t size, bool = false) { return static_cast<Header*>(std::malloc(sizeof(Header) + size)); }
void raw_free(Header* h) { std::free(h); }
Header* raw_realloc(Header* h, size_t size) { return static_cast<Header*>(std::realloc(h, sizeof(Header) + size)); }
#endif
static_assert(sizeof(Header) == 16, "header keeps 16-byte alignment");

bool charge(Budget* b, size_t size) {
  if (!b) return true;
  uint64_t used = b->used.load(std::memory_order_relaxed);
  do {
    if (size > b->limit || used > b->limit - size) {
      b->exceeded.store(true, std::memory_order_relaxed);
      return false;
    }
  } while (!b->used.compare_exchange_weak(used, used + size, std::memory_order_relaxed));
  uint64_t now = used + size, peak = b->peak.load(std::memory_order_relaxed);
  while (now > peak && !b->peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  return true;
}

void undo_charge(Budget* b, size_t size) {
  if (b) b->used.fetch_sub(size, std::memory_order_relaxed);
}

void uncharge(uint64_t budget_id, size_t size) {
  Budget* b = tls_budget;
  if (!b || budget_id == 0 || b->id != budget_id) return;
  uint64_t used = b->used.load(std::memory_order_relaxed);
  while (!b->used.compare_exchange_weak(used, size < used ? used - size : 0, std::memory_order_relaxed)) {
  }
}

std::atomic<uint64_t> g_cap{kDefaultMemoryCap};
std::atomic<uint64_t> g_in_flight{0};

}  // namespace

Budget::Budget(uint64_t limit_bytes, const std::atomic<int>* abort)
    : id(next_id.fetch_add(1)), limit(limit_bytes), abort_flag(abort) {}
#if PANTO_HOST_MEMORY_POOL
// The host (the WebAssembly build: native/wasm/panto-wasm.cpp) keeps the pool and the abort flag outside this
// instance's memory, so one pool spans every instance of the process (see budget.h, panto_host_*).
bool should_abort() {
  const Budget* b = tls_budget;
  return b && b->abort_flag && (b->abort_flag->load(std::memory_order_relaxed) != 0 || panto_host_should_abort());
}
uint64_t set_memory_cap(uint64_t bytes) { return static_cast<uint64_t>(panto_host_set_memory_cap(double(bytes))); }
uint64_t memory_cap() { return static_cast<uint64_t>(panto_host_memory_cap()); }
uint64_t memory_in_flight() { return static_cast<uint64_t>(panto_host_memory_in_flight()); }

bool MemoryReservation::try_reserve(uint64_t bytes) {
  release();
  if (!panto_host_try_reserve(double(bytes))) return false;
  bytes_ = bytes;
  return true;
}

void MemoryReservation::release() {
  if (bytes_) panto_host_release(double(bytes_));
  bytes_ = 0;
}
#else
bool should_abort() {
  const Budget* b = tls_budget;
  return b && b->abort_flag && b->abort_flag->load(std::memory_order_relaxed) != 0;
}
uint64_t set_memory_cap(uint64_t bytes) { return g_cap.exchange(bytes); }
uint64_t memory_cap() { return g_cap.load(); }
uint64_t memory_in_flight() { return g_in_flight.load(); }

bool MemoryReservation::try_reserve(uint64_t bytes) {
  release();
  const uint64_t cap = g_cap.load();
  uint64_t cur = g_in_flight.load();
  do {
    if (bytes > cap || cur > cap - bytes) return false;
  } while (!g_in_flight.compare_exchange_weak(cur, cur + bytes));
  bytes_ = bytes;
  return true;
}

void MemoryReservation::release() {
  if (bytes_) g_in_flight.fetch_sub(bytes_);
  bytes_ = 0;
}
#endif
InputDiscardScope::InputDiscardScope(Budget* budget, const uint8_t* data, size_t len) : budget_(data ? budget : nullptr) {
  if (!budget_) return;
  budget_->discardable = data;
  budget_->discardable_len = len;
}
InputDiscardScope::~InputDiscardScope() {
  if (!budget_) return;
  budget_->discardable = nullptr;
  budget_->discardable_len = 0;
}

size_t release_pages(const uint8_t* begin, const uint8_t* end) {
#if PANTO_BUDGET_MMAP && defined(MADV_DONTNEED)
  if (!(begin < end)) return 0;
  const uintptr_t page = page_size();
  const uintptr_t from = (reinterpret_cast<uintptr_t>(begin) + page - 1) & ~(page - 1);
  const uintptr_t to = reinterpret_cast<uintptr_t>(end) & ~(page - 1);
  if (from >= to) return 0;
  // Private anonymous memory: the pages are freed now and read back as zeros.
  if (madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED) != 0) return 0;
  return to - from;
#else
  (void)begin;
  (void)end;
  return 0;
#endif
}

size_t discard_input(const uint8_t* begin, const uint8_t* end) {
  const Budget* b = tls_budget;
  if (!b || !b->discardable || b->discardable_len < kMmapThreshold) return 0;
  const uint8_t* lo = b->discardable;
  const uint8_t* hi = lo + b->discardable_len;
  return release_pages(begin < lo ? lo : begin, end > hi ? hi : end);
}

BudgetScope::BudgetScope(Budget* budget) : previous_(tls_budget) { tls_budget = budget; }
BudgetScope::~BudgetScope() { tls_budget = previous_; }
Budget* current_budget() { return tls_budget; }
void budget_release(uint8_t* p) { panto_budget_free(p); }

}  // namespace panto

using panto::Header;

namespace {
/** Charges `size` bytes to the thread's budget, then takes a block from `alloc()` (a Header* followed by `size` bytes,
 *  or nullptr): on failure the charge is undone and nullptr returned; else the header records the budget and size and
 *  the caller gets the bytes after it. */
template <class Alloc>
void* charged_block(size_t size, Alloc alloc) {
  panto::Budget* b = panto::tls_budget;
  if (!panto::charge(b, size)) return nullptr;
  Header* h = alloc();
  if (!h) {
    panto::undo_charge(b, size);
    return nullptr;
  }
  h->budget_id = b ? b->id : 0;
  h->size = size;
  return h + 1;
}

void* budget_malloc(size_t size, bool sparse) {
  if (size > SIZE_MAX - sizeof(Header)) return nullptr;
  return charged_block(size, [size, sparse] { return panto::raw_alloc(size, sparse); });
}
}  // namespace

extern "C" void* panto_budget_malloc(size_t size) { return budget_malloc(size, false); }

extern "C" void* panto_budget_malloc_sparse(size_t size) { return budget_malloc(size, true); }

extern "C" void* panto_budget_malloc_input(size_t size) {
#if PANTO_BUDGET_MMAP
  if (size >= panto::kMmapThreshold && size <= SIZE_MAX - sizeof(Header) - panto::kHugePage)
    return charged_block(size, [size] { return panto::map_input(size); });
#endif
  return budget_malloc(size, false);
}

extern "C" void panto_budget_free(void* ptr) {
  if (!ptr) return;
  Header* h = static_cast<Header*>(ptr) - 1;
  panto::uncharge(h->budget_id, h->size);
  panto::raw_free(h);
}

extern "C" void* panto_budget_realloc(void* ptr, size_t size) {
  if (!ptr) return panto_budget_malloc(size);
  if (size > SIZE_MAX - sizeof(Header)) return nullptr;
  Header* h = static_cast<Header*>(ptr) - 1;
  panto::Budget* b = panto::tls_budget;
  // Charge the new size to the active budget before releasing the old charge, so peak reflects the copy.
  if (!panto::charge(b, size)) return nullptr;
  Header old = *h;
  Header* nh = panto::raw_realloc(h, size);
  if (!nh) {
    panto::undo_charge(b, size);
    return nullptr;
  }
  panto::uncharge(old.budget_id, old.size);
  nh->budget_id = b ? b->id : 0;
  nh->size = size;
  return nh + 1;
}

extern "C" void panto_budget_zero_fresh(void* ptr, size_t n) {
  if (!ptr || n == 0) return;
#if PANTO_BUDGET_MMAP
  const Header* h = static_cast<const Header*>(ptr) - 1;
  if (h->size >= panto::kMmapThreshold && n <= h->size) return;  // fresh anonymous mapping: already zero
#endif
  std::memset(ptr, 0, n);
}

extern "C" int panto_should_abort(void) { return panto::should_abort() ? 1 : 0; }
