// The replacement operator new that heap_allocations() counts (see heap_allocations.hh).
#include "heap_allocations.hh"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>

// The unaligned forms of new and delete, all over malloc and free (sanitizers pair each form of
// new with a form of delete: every one of a pair must be replaced, or none). Not inlined: GCC
// would otherwise see free() of what a new-expression returned and warn.
namespace {
std::atomic<size_t> g_heap_allocations{0};
__attribute__((noinline)) void* counted_malloc(std::size_t n) noexcept {
  g_heap_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n != 0 ? n : 1);
}
__attribute__((noinline)) void* counted_new(std::size_t n) {
  if (void* p = counted_malloc(n)) return p;
  throw std::bad_alloc();
}
}  // namespace
__attribute__((noinline)) void* operator new(std::size_t n) { return counted_new(n); }
__attribute__((noinline)) void* operator new[](std::size_t n) { return counted_new(n); }
__attribute__((noinline)) void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counted_malloc(n); }
__attribute__((noinline)) void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return counted_malloc(n); }
__attribute__((noinline)) void operator delete(void* p) noexcept { std::free(p); }
__attribute__((noinline)) void operator delete[](void* p) noexcept { std::free(p); }
__attribute__((noinline)) void operator delete(void* p, std::size_t) noexcept { std::free(p); }
__attribute__((noinline)) void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
__attribute__((noinline)) void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
__attribute__((noinline)) void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

size_t rperf_test::heap_allocations() { return g_heap_allocations.load(std::memory_order_relaxed); }

TEST(HeapAllocations, CountsEveryNew) {
  const size_t before = rperf_test::heap_allocations();
  auto one = std::make_unique<int>(1);
  auto many = std::make_unique<int[]>(3);
  EXPECT_EQ(rperf_test::heap_allocations(), before + 2);
}
