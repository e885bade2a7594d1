// The budget maps blocks of 2 MiB and more 2 MiB-aligned and advises MADV_HUGEPAGE on them, unless the environment
// has PANTO_HUGE_PAGES=0 (budget.cpp, read once per process; docs/images-and-pdfs.md). These tests look at what the
// kernel actually recorded for such a block, in /proc/self/smaps:
//   - VmFlags has `hg` (VM_HUGEPAGE, set by the madvise call whatever THP pages are free) exactly when the advice is
//     wanted, i.e. unless PANTO_HUGE_PAGES=0;
//   - the opt-out is checked in a fresh process (this binary re-executed with PANTO_HUGE_PAGES=0), since the variable
//     is read once, on the first large allocation;
//   - AnonHugePages of the touched block is printed, never asserted: even with THP enabled the kernel may fall back to
//     4 KiB pages (no free huge page, defrag policy), so no value of it is guaranteed.
// Linux only; elsewhere (and on a kernel without THP or without /proc/self/smaps) the tests print why they skipped.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "budget.h"
#include "test-util.h"

#ifdef __linux__
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;
#endif

using namespace panto_test;

namespace {

void skipped(const char* why) { std::fprintf(stderr, "    skipped: %s\n", why); }

#ifdef __linux__
constexpr uintptr_t kHugePage = uintptr_t(2) << 20;

/** The advice budget.cpp applies given this process's environment (same rule: only the exact value "0" opts out). */
bool advice_wanted() {
  const char* v = std::getenv("PANTO_HUGE_PAGES");
  return !(v && std::strcmp(v, "0") == 0);
}

/** The bracketed mode of /sys/kernel/mm/transparent_hugepage/enabled ("always", "madvise", "never"), or "" when the
 *  kernel has no THP support. */
std::string thp_mode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  const size_t a = line.find('['), b = line.find(']');
  return a == std::string::npos || b == std::string::npos || b < a ? "" : line.substr(a + 1, b - a - 1);
}

struct Vma {
  bool found = false;
  uintptr_t start = 0, end = 0;
  std::string vm_flags;       // the VmFlags line's value, e.g. " rd wr mr mw me ac hg"
  long anon_huge_kb = -1;     // AnonHugePages
  long rss_kb = -1;
};

/** The /proc/self/smaps entry of the mapping that contains `addr` (found == false when there is none or smaps is
 *  unreadable). */
Vma vma_of(uintptr_t addr) {
  Vma v;
  std::ifstream in("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    unsigned long long s = 0, e = 0;
    // A mapping's header line: "start-end perms offset dev inode [path]" (hex addresses); field lines are "Name: ..."
    const size_t dash = line.find('-');
    const size_t space = line.find(' ');
    if (dash != std::string::npos && space != std::string::npos && dash < space && line.find(':') > space &&
        std::sscanf(line.c_str(), "%llx-%llx", &s, &e) == 2) {
      if (inside) break;  // the entry we wanted has ended
      inside = addr >= s && addr < e;
      if (inside) {
        v.found = true;
        v.start = uintptr_t(s);
        v.end = uintptr_t(e);
      }
      continue;
    }
    if (!inside) continue;
    if (line.rfind("VmFlags:", 0) == 0) v.vm_flags = line.substr(8) + " ";
    else if (line.rfind("AnonHugePages:", 0) == 0) v.anon_huge_kb = std::strtol(line.c_str() + 14, nullptr, 10);
    else if (line.rfind("Rss:", 0) == 0) v.rss_kb = std::strtol(line.c_str() + 4, nullptr, 10);
  }
  return v;
}
#endif

}  // namespace

PANTO_TEST(hugepages, large_block_advice_follows_the_environment) {
#ifndef __linux__
  skipped("transparent huge pages are Linux-only (the budget uses malloc elsewhere)");
#else
  const std::string mode = thp_mode();
  if (mode.empty()) {
    skipped("this kernel has no transparent huge pages (/sys/kernel/mm/transparent_hugepage/enabled missing)");
    return;
  }
  const bool wanted = advice_wanted();
  const size_t size = size_t(16) << 20;  // 16 MiB: eight huge pages
  panto::Budget budget(1ull << 30);
  panto::BudgetScope scope(&budget);
  auto* p = static_cast<uint8_t*>(panto_budget_malloc(size));
  PANTO_REQUIRE(p != nullptr);
  std::memset(p, 0xA5, size);  // touch every page: faults them in (as huge pages where the kernel can)
  const uintptr_t block = reinterpret_cast<uintptr_t>(p) - 16;  // the block starts with its 16-byte header
  PANTO_CHECK_EQ(block % kHugePage, uintptr_t(0));
  const Vma v = vma_of(reinterpret_cast<uintptr_t>(p) + size / 2);
  if (!v.found) {
    panto_budget_free(p);
    skipped("/proc/self/smaps is unreadable or lists no mapping for the block");
    return;
  }
  PANTO_CHECK(v.start <= block && v.end >= reinterpret_cast<uintptr_t>(p) + size);
  const bool hg = v.vm_flags.find(" hg ") != std::string::npos;
  std::fprintf(stderr, "    PANTO_HUGE_PAGES=%s, THP enabled [%s]: VmFlags%s| AnonHugePages %ld kB of Rss %ld kB\n",
               std::getenv("PANTO_HUGE_PAGES") ? std::getenv("PANTO_HUGE_PAGES") : "(unset)", mode.c_str(),
               v.vm_flags.c_str(), v.anon_huge_kb, v.rss_kb);
  if (wanted && !hg) record_failure(__FILE__, __LINE__, "no 'hg' in VmFlags of a 16 MiB block:" + v.vm_flags);
  if (!wanted && hg) record_failure(__FILE__, __LINE__, "'hg' in VmFlags despite PANTO_HUGE_PAGES=0:" + v.vm_flags);
  // Without the advice, only "always" mode may back the block with huge pages ("madvise" mode then never does).
  if (!wanted && mode != "always") PANTO_CHECK_EQ(v.anon_huge_kb, 0L);
  panto_budget_free(p);
#endif
}

PANTO_TEST(hugepages, opt_out_in_a_fresh_process_drops_the_advice) {
#ifndef __linux__
  skipped("transparent huge pages are Linux-only");
#else
  if (!advice_wanted()) {
    skipped("PANTO_HUGE_PAGES=0 is already set: the test above checked the opt-out in this process");
    return;
  }
  // The variable is read once per process, so the opt-out runs in a fresh copy of this binary.
  std::string env_kv = "PANTO_HUGE_PAGES=0";
  std::vector<char*> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "PANTO_HUGE_PAGES=", 17) != 0) env.push_back(*e);
  env.push_back(&env_kv[0]);
  env.push_back(nullptr);
  std::string self = "/proc/self/exe", filter = "hugepages.large_block_advice_follows_the_environment";
  char* argv[] = {&self[0], &filter[0], nullptr};
  pid_t pid = 0;
  PANTO_REQUIRE(posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv, env.data()) == 0);
  int status = 0;
  PANTO_REQUIRE(waitpid(pid, &status, 0) == pid);
  PANTO_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
#endif
}

PANTO_TEST(hugepages, sparse_block_is_resident_only_where_written) {
#ifndef __linux__
  skipped("the budget maps blocks only on Linux (malloc elsewhere)");
#else
  // An encoder's output buffer is sized by a worst case (libdeflate's bound for PNG, a guess for JPEG) and mostly
  // never written: a sparse block takes no huge pages and is not populated, so writing 100 KiB of a 16 MiB block
  // (or of a 1 MiB one, below the huge-page size) costs about 100 KiB of RSS, not 2 MiB pages or the whole block.
  panto::Budget budget(1ull << 30);
  panto::BudgetScope scope(&budget);
  for (size_t size : {size_t(16) << 20, size_t(1) << 20}) {
    auto* p = static_cast<uint8_t*>(panto_budget_malloc_sparse(size));
    PANTO_REQUIRE(p != nullptr);
    PANTO_CHECK_EQ(budget.used.load(), uint64_t(size));  // charged like any block
    const size_t written = 100 * 1024;
    std::memset(p, 0x5A, written);
    const Vma v = vma_of(reinterpret_cast<uintptr_t>(p));
    if (!v.found) {
      panto_budget_free(p);
      skipped("/proc/self/smaps is unreadable or lists no mapping for the block");
      return;
    }
    std::fprintf(stderr, "    sparse %zu KiB block, %zu KiB written: VmFlags%s| AnonHugePages %ld kB of Rss %ld kB\n",
                 size >> 10, written >> 10, v.vm_flags.c_str(), v.anon_huge_kb, v.rss_kb);
    PANTO_CHECK(v.vm_flags.find(" hg ") == std::string::npos);
    PANTO_CHECK_EQ(v.anon_huge_kb, 0L);
    // Resident: the written pages (the mapping may be merged with a neighbour that has a few resident pages of its
    // own), never the whole block (populated: >= 1024 kB) nor a huge page (2048 kB).
    PANTO_CHECK(v.rss_kb >= long(written >> 10) && v.rss_kb < 512);
    // A realloc (how the JPEG writer grows its buffer) keeps it sparse.
    auto* q = static_cast<uint8_t*>(panto_budget_realloc(p, size * 2));
    PANTO_REQUIRE(q != nullptr);
    PANTO_CHECK_EQ(q[written - 1], uint8_t(0x5A));
    const Vma w = vma_of(reinterpret_cast<uintptr_t>(q));
    if (w.found) PANTO_CHECK(w.rss_kb < 512);
    panto_budget_free(q);
    PANTO_CHECK_EQ(budget.used.load(), uint64_t(0));
  }
#endif
}
