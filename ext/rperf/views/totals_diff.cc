#include "views/totals_diff.hh"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace rperf {

std::vector<TotalsDiffRow> diff_totals(const std::vector<FunctionRow>& base, const std::vector<FunctionRow>& target,
                                       double base_scale) {
  std::vector<TotalsDiffRow> rows;
  std::map<std::pair<std::string, std::string>, size_t> row_of;  // (label, path) -> into rows
  auto row_for = [&](const FunctionRow& f) -> TotalsDiffRow& {
    auto [it, added] = row_of.emplace(std::make_pair(f.label, f.path), rows.size());
    if (added) rows.emplace_back();
    return rows[it->second];
  };
  for (size_t i = 0; i < base.size(); i++) {
    TotalsDiffRow& r = row_for(base[i]);
    r.base = static_cast<int64_t>(i);
    r.base_self = base[i].self * base_scale;
    r.base_total = base[i].total * base_scale;
  }
  for (size_t i = 0; i < target.size(); i++) {
    TotalsDiffRow& r = row_for(target[i]);
    r.target = static_cast<int64_t>(i);
    r.target_self = target[i].self;
    r.target_total = target[i].total;
  }
  auto key_of = [&](const TotalsDiffRow& r) -> const FunctionRow& { return r.target >= 0 ? target[r.target] : base[r.base]; };
  std::sort(rows.begin(), rows.end(), [&](const TotalsDiffRow& a, const TotalsDiffRow& b) {
    double sa = std::fabs(a.self_change()), sb = std::fabs(b.self_change());
    if (sa != sb) return sa > sb;
    double ta = std::fabs(a.total_change()), tb = std::fabs(b.total_change());
    if (ta != tb) return ta > tb;
    const FunctionRow& ka = key_of(a);
    const FunctionRow& kb = key_of(b);
    return ka.label != kb.label ? ka.label < kb.label : ka.path < kb.path;
  });
  return rows;
}

std::vector<FunctionRow> function_rows(const Profile& p, const FunctionTotals& t) {
  std::vector<FunctionRow> rows;
  for (size_t fn = 0; fn < t.first_frame.size(); fn++) {
    if (t.total_ns[fn] == 0 && t.self_ns[fn] == 0) continue;
    const Frame& f = p.frames[t.first_frame[fn]];
    rows.push_back(FunctionRow{f.label, f.path, static_cast<double>(t.self_ns[fn]), static_cast<double>(t.total_ns[fn])});
  }
  return rows;
}

}  // namespace rperf
