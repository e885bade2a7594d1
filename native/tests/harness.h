// A minimal self-contained test harness for the native core (no third-party framework).
//
//   PANTO_TEST(suite, name) { PANTO_CHECK(cond); PANTO_CHECK_EQ(a, b); PANTO_REQUIRE(cond); }
//
// Tests register themselves at static-init time. `panto_native_tests [prefix ...]` runs every test whose
// "suite.name" starts with one of the prefixes (all tests without arguments); exit status 0 only if each selected
// test passed and at least one ran. `--check-suites s1 s2 ...` fails when a registered test belongs to no listed suite
// or a listed suite has no test (so CMake's per-suite ctest entries cannot silently miss tests).
// A failed PANTO_CHECK records the failure and continues; PANTO_REQUIRE returns from the test.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace panto_test {

struct TestCase {
  const char* suite;
  const char* name;
  void (*fn)();
};

std::vector<TestCase>& registry();
void record_failure(const char* file, int line, const std::string& what);

struct Registrar {
  Registrar(const char* suite, const char* name, void (*fn)()) { registry().push_back({suite, name, fn}); }
};

/** Reads test/fixtures/media/<name> (PANTO_FIXTURES_DIR); aborts the process when missing. */
std::vector<uint8_t> fixture(const std::string& name);

template <typename T>
std::string show(const T& v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

}  // namespace panto_test

#define PANTO_TEST(suite, name)                                                           \
  static void panto_test_##suite##_##name();                                              \
  static panto_test::Registrar panto_reg_##suite##_##name(#suite, #name, &panto_test_##suite##_##name); \
  static void panto_test_##suite##_##name()

#define PANTO_CHECK(cond)                                                          \
  do {                                                                             \
    if (!(cond)) panto_test::record_failure(__FILE__, __LINE__, "CHECK(" #cond ")"); \
  } while (0)

#define PANTO_REQUIRE(cond)                                                          \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      panto_test::record_failure(__FILE__, __LINE__, "REQUIRE(" #cond ")");          \
      return;                                                                        \
    }                                                                                \
  } while (0)

#define PANTO_CHECK_EQ(a, b)                                                                                 \
  do {                                                                                                       \
    const auto& panto_a_ = (a);                                                                              \
    const auto& panto_b_ = (b);                                                                              \
    if (!(panto_a_ == panto_b_))                                                                             \
      panto_test::record_failure(__FILE__, __LINE__,                                                         \
                                 "CHECK_EQ(" #a ", " #b "): " + panto_test::show(panto_a_) + " != " +        \
                                     panto_test::show(panto_b_));                                            \
  } while (0)
