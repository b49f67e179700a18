// Random gaps between sampled events: geometric with mean `interval`, so that on average one
// event in `interval` is sampled and every event has the same chance, whatever the pattern of
// the events (a fixed period would alias with periodic allocation patterns: always the 3rd
// string of a loop that allocates 4 objects per iteration, say). A sample weighs `interval`.
// No allocation, no system call: drawn on the allocation hook's path.
#pragma once
#include <cmath>
#include <cstdint>

#include "util/hash_index.hh"

namespace rperf {

class GeometricGaps {
 public:
  GeometricGaps(uint32_t interval, uint64_t seed)
      : interval_(interval), state_(seed ? seed : 0x9e3779b97f4a7c15ULL),
        log_keep_(interval > 1 ? std::log1p(-1.0 / interval) : 0.0) {}

  // The number of events up to and including the next sampled one (>= 1).
  uint64_t next() {
    if (interval_ <= 1) return 1;
    // U uniform in (0, 1]: 53 random bits, never 0.
    double u = (static_cast<double>(random() >> 11) + 1.0) * 0x1.0p-53;
    // P(gap = k) = p (1 - p)^(k - 1) with p = 1 / interval: inverse transform of U.
    double gap = std::floor(std::log(u) / log_keep_) + 1.0;
    return gap < 1e18 ? static_cast<uint64_t>(gap) : 1000000000000000000ULL;
  }

  uint32_t interval() const { return interval_; }

 private:
  uint64_t random() {  // splitmix64
    state_ += 0x9e3779b97f4a7c15ULL;
    return mix64(state_);
  }

  uint32_t interval_;
  uint64_t state_;
  double log_keep_;  // log(1 - 1/interval) (< 0)
};

}  // namespace rperf
