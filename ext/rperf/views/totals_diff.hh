// Two profiles' per-function totals side by side, ranked by what changed: `rperf diff`'s rows
// (lib/rperf/reports/diff.rb, through Native.diff_totals) and the Viewer's Diff table (the page
// model, page/wasm_exports.cc). A function counts its own (self) and its total weight; those of
// one profile only count 0 in the other. Rows rank by the largest absolute change of self, then
// of total (callers of a slowed function change in total as much as it does: ranking by total
// first would put <main> on top of every diff), then by label and path (bytes).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "profile/profile.hh"
#include "views/functions.hh"

namespace rperf {

// One function's weights (views/functions.hh's, or a method table's entry in a page).
struct FunctionRow {
  std::string label, path;
  double self = 0, total = 0;  // ns, or objects (allocations); JavaScript's numbers in a page
};

struct TotalsDiffRow {
  int64_t base = -1, target = -1;  // the function's index in each input, -1: not in it
  double base_self = 0, target_self = 0, base_total = 0, target_total = 0;
  double self_change() const { return target_self - base_self; }
  double total_change() const { return target_total - base_total; }
};

// The rows of every function in either input, ranked; the base's weights times `base_scale`
// (the Viewer's "normalize": the base scaled to the target's total). A function given twice in
// one input counts its last entry.
std::vector<TotalsDiffRow> diff_totals(const std::vector<FunctionRow>& base, const std::vector<FunctionRow>& target,
                                       double base_scale = 1.0);

// The functions of `totals` (function_totals or allocation_totals of `p`) with weight, as rows.
std::vector<FunctionRow> function_rows(const Profile& p, const FunctionTotals& totals);

}  // namespace rperf
