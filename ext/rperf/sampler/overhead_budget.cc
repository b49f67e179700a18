#include "sampler/overhead_budget.hh"

#include <algorithm>

namespace rperf {

OverheadBudget::OverheadBudget(double target, int64_t fastest_interval_ns)
    : target_(target), fastest_interval_ns_(std::clamp<int64_t>(fastest_interval_ns, 1, kSlowestIntervalNs)) {}

int64_t OverheadBudget::first_interval_ns() const {
  if (!(target_ > 0)) return fastest_interval_ns_;
  const double fitting = static_cast<double>(kAssumedTickCostNs) / target_;
  if (fitting >= static_cast<double>(kSlowestIntervalNs)) return kSlowestIntervalNs;
  return std::max(fastest_interval_ns_, static_cast<int64_t>(fitting));
}

int64_t OverheadBudget::next_interval_ns(int64_t interval_ns, int64_t own_ns, int64_t process_ns) const {
  interval_ns = std::clamp(interval_ns, fastest_interval_ns_, kSlowestIntervalNs);
  if (process_ns <= 0 || own_ns < 0 || !(target_ > 0)) return interval_ns;
  // own is part of process: a share above 1 is a measurement's skew (clocks read apart).
  const double share = std::min(1.0, static_cast<double>(own_ns) / static_cast<double>(process_ns));
  const double factor = std::clamp(share / target_, 1.0 / kMaxSpeedup, kMaxSlowdown);
  const double next = static_cast<double>(interval_ns) * factor;
  if (next >= static_cast<double>(kSlowestIntervalNs)) return kSlowestIntervalNs;
  return std::clamp(static_cast<int64_t>(next), fastest_interval_ns_, kSlowestIntervalNs);
}

}  // namespace rperf
