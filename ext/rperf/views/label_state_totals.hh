// A profile's time in each VM state per value of some label keys: the series of Rperf::Metrics
// (rperf_cpu_seconds_total{endpoint="GET /a"} and its siblings); and the time per value of every
// key: the Viewer's label filter and tag menus (label_key_totals). Ruby-independent.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "profile/label_set_match.hh"
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

// One key's time per value, and that of the rows whose set has not the key.
struct LabelKeyTotal {
  std::string key;
  std::vector<std::pair<std::string, int64_t>> values;  // heaviest first, then by text (bytes)
  int64_t unset = 0;
};

// Per key of the rows' label sets (sets spelled as texts, the Viewer page's), by key (bytes): the
// weight of each value. A row is its label set's index and its weight; a set no row has counts
// nowhere.
std::vector<LabelKeyTotal> label_key_totals(const std::vector<LabelTexts>& sets, const std::vector<uint32_t>& row_sets,
                                            const std::vector<int64_t>& row_weights);

}  // namespace rperf
