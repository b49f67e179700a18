// Clock reads used for sample weights. CLOCK_MONOTONIC is a vDSO call (~24 ns here);
// CLOCK_THREAD_CPUTIME_ID is a system call (~0.5 us), so the sampler reads it once per event.
#pragma once
#include <cstdint>
#include <ctime>

namespace rperf {

inline int64_t clock_ns(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}
inline int64_t monotonic_ns() { return clock_ns(CLOCK_MONOTONIC); }
inline int64_t realtime_ns() { return clock_ns(CLOCK_REALTIME); }
inline int64_t thread_cpu_ns() { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }

}  // namespace rperf
