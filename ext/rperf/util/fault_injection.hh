// Test-only allocation failures at named places of the native core, so tests can prove that an
// out-of-memory there loses one record or raises NoMemoryError, and never ends the process or
// leaves a lock held. Armed only by tests (Native.inject_allocation_failures); one relaxed load
// when disarmed.
#pragma once
#include <atomic>
#include <cstdint>
#include <new>

namespace rperf {

enum class FaultSite : uint8_t { kDrain = 0, kTakeSamples = 1 };
constexpr int kFaultSiteCount = 2;

inline std::atomic<uint32_t>& fault_budget(FaultSite site) {
  static std::atomic<uint32_t> budgets[kFaultSiteCount];
  return budgets[static_cast<int>(site)];
}

// Throws std::bad_alloc while the site's budget of injected failures lasts.
inline void maybe_inject_bad_alloc(FaultSite site) {
  std::atomic<uint32_t>& budget = fault_budget(site);
  uint32_t left = budget.load(std::memory_order_relaxed);
  while (left > 0) {
    if (budget.compare_exchange_weak(left, left - 1, std::memory_order_relaxed)) throw std::bad_alloc();
  }
}

}  // namespace rperf
