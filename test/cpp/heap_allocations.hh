// How many times the test binary has called operator new (counted by the replacement in
// heap_allocations_test.cc): lets tests check that an operation meant for an allocation-free path
// (the sampling hot path, GC hooks) allocates nothing.
#pragma once
#include <cstddef>

namespace rperf_test {
size_t heap_allocations();
}  // namespace rperf_test
