// The "summary" object of a profile file (rperf 0.11's fields): wall and CPU time, GC counts
// and time, allocations, peak RSS, samples, and the top methods by self time; with allocation
// profiling, the estimated objects allocated and retained (allocation_estimate, retained_estimate
// when retained was measured).
#pragma once
#include "profile/profile.hh"

namespace rperf {

constexpr size_t kSummaryTopMethods = 50;

JsonValue summarize(const Profile& p);

}  // namespace rperf
