// OwnedBytes (owning, move-only, fields read-only) versus ByteView / PixelView (borrowed): the ownership rules are in
// the types, and each release runs exactly once.
#include <type_traits>
#include <utility>

#include "budget.h"
#include "internal.h"
#include "test-util.h"

using panto::ByteView;
using panto::OwnedBytes;

// Reading works like a plain field; writing the pointer or the size by hand does not compile.
static_assert(!std::is_assignable_v<decltype((std::declval<OwnedBytes&>().data)), uint8_t*>);
static_assert(!std::is_assignable_v<decltype((std::declval<OwnedBytes&>().size)), size_t>);
static_assert(!std::is_copy_constructible_v<OwnedBytes> && !std::is_copy_assignable_v<OwnedBytes>);
static_assert(std::is_nothrow_move_constructible_v<OwnedBytes> && std::is_nothrow_move_assignable_v<OwnedBytes>);
// The borrowed views cannot free: they hold only const pointers and have no release.
static_assert(std::is_trivially_destructible_v<ByteView> && std::is_trivially_destructible_v<panto::PixelView>);
static_assert(std::is_same_v<decltype(ByteView::data), const uint8_t*>);

namespace {
int g_released = 0;
uint8_t g_block[16];
void count_release(uint8_t* p) {
  if (p == g_block) g_released++;
}
}  // namespace

PANTO_TEST(process, owned_bytes_release_exactly_once_across_moves) {
  g_released = 0;
  {
    OwnedBytes a = OwnedBytes::adopt(g_block, sizeof g_block, count_release);
    PANTO_CHECK(a.data == g_block);
    PANTO_CHECK_EQ(a.size, sizeof g_block);
    OwnedBytes b(std::move(a));
    PANTO_CHECK(a.data == nullptr);
    PANTO_CHECK_EQ(a.size, size_t(0));
    PANTO_CHECK(b.data == g_block);  // the references follow the object they belong to, not the source of the move
    OwnedBytes c;
    c = std::move(b);
    b = std::move(c);  // back again
    b.shrink_to(4);
    PANTO_CHECK_EQ(b.size, size_t(4));
    b.shrink_to(100);  // never grows
    PANTO_CHECK_EQ(b.size, size_t(4));
    const ByteView v = b.view();
    PANTO_CHECK(v.data == g_block && v.size == 4);
    PANTO_CHECK_EQ(g_released, 0);
  }
  PANTO_CHECK_EQ(g_released, 1);
  PANTO_CHECK(OwnedBytes::adopt(nullptr, 10, count_release).size == 0);  // nothing adopted, nothing released
  PANTO_CHECK_EQ(g_released, 1);
}

PANTO_TEST(process, owned_bytes_budget_realloc_keeps_bytes_and_charges_the_budget) {
  panto::Budget budget(1 << 20);
  panto::BudgetScope scope(&budget);
  OwnedBytes b;
  PANTO_REQUIRE(panto::alloc_owned(1000, &b));
  for (size_t i = 0; i < 1000; i++) b.data[i] = uint8_t(i);
  PANTO_REQUIRE(b.realloc_owned(200000));
  PANTO_CHECK_EQ(b.size, size_t(200000));
  bool same = true;
  for (size_t i = 0; i < 1000; i++) same = same && b.data[i] == uint8_t(i);
  PANTO_CHECK(same);
  PANTO_CHECK(budget.used.load() >= 200000);
  PANTO_CHECK(!b.realloc_owned(2 << 20));  // past the budget: refused, unchanged
  PANTO_CHECK_EQ(b.size, size_t(200000));
  b.reset();
  PANTO_CHECK_EQ(budget.used.load(), uint64_t(0));
  OwnedBytes foreign = OwnedBytes::adopt(g_block, sizeof g_block, count_release);
  PANTO_CHECK(!foreign.realloc_owned(64));  // not budget memory: never handed to panto_budget_realloc
}
