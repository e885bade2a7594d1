#include "harness.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>

#ifndef PANTO_FIXTURES_DIR
#error "PANTO_FIXTURES_DIR must name test/fixtures/media"
#endif

namespace panto_test {
namespace {
int g_failures = 0;
}

std::vector<TestCase>& registry() {
  static std::vector<TestCase> r;
  return r;
}

void record_failure(const char* file, int line, const std::string& what) {
  ++g_failures;
  std::fprintf(stderr, "    %s:%d: %s\n", file, line, what.c_str());
}

std::vector<uint8_t> fixture(const std::string& name) {
  const std::string path = std::string(PANTO_FIXTURES_DIR) + "/" + name;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "missing fixture %s\n", path.c_str());
    std::abort();
  }
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace panto_test

static int check_suites(int argc, char** argv) {
  std::set<std::string> listed(argv + 2, argv + argc);
  std::set<std::string> seen;
  int bad = 0;
  for (const auto& t : panto_test::registry()) {
    seen.insert(t.suite);
    if (!listed.count(t.suite)) {
      std::fprintf(stderr, "test %s.%s belongs to suite '%s', which CMakeLists.txt does not run\n", t.suite, t.name,
                   t.suite);
      ++bad;
    }
  }
  for (const auto& s : listed) {
    if (!seen.count(s)) {
      std::fprintf(stderr, "suite '%s' has no tests\n", s.c_str());
      ++bad;
    }
  }
  return bad ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "--check-suites") == 0) return check_suites(argc, argv);
  int ran = 0;
  int failed_tests = 0;
  for (const auto& t : panto_test::registry()) {
    const std::string full = std::string(t.suite) + "." + t.name;
    bool selected = argc < 2;
    for (int i = 1; i < argc && !selected; ++i) selected = full.rfind(argv[i], 0) == 0;
    if (!selected) continue;
    ++ran;
    const int before = panto_test::g_failures;
    std::fprintf(stderr, "[ RUN  ] %s\n", full.c_str());
    t.fn();
    const bool ok = panto_test::g_failures == before;
    if (!ok) ++failed_tests;
    std::fprintf(stderr, "[ %s ] %s\n", ok ? " OK " : "FAIL", full.c_str());
  }
  std::fprintf(stderr, "%d test(s) run, %d failed\n", ran, failed_tests);
  if (ran == 0) {
    std::fprintf(stderr, "no test matched\n");
    return 1;
  }
  return failed_tests ? 1 : 0;
}
