// A profile's time in each VM state per value of some label keys: the series of Rperf::Metrics
// (rperf_cpu_seconds_total{endpoint="GET /a"} and its siblings). Ruby-independent.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "profile/profile.hh"
#include "profile/vm_state.hh"

namespace rperf {

struct LabelStateTotal {
  // One per key asked for: the text of the set's value (label_value::to_s), "" when the set
  // has no such key.
  std::vector<std::string> values;
  int64_t weight_ns[kVmStateCount] = {};
};

// One row per distinct combination of values, in order of first appearance. Keys are matched
// by their text (:endpoint and "endpoint" alike), as the label filters match them.
std::vector<LabelStateTotal> label_state_totals(const Profile& p, const std::vector<std::string>& keys);

}  // namespace rperf
