#include "views/label_state_totals.hh"

#include <algorithm>
#include <map>

#include "profile/label_value.hh"

namespace rperf {

std::vector<LabelStateTotal> label_state_totals(const Profile& p, const std::vector<std::string>& keys) {
  std::vector<LabelStateTotal> rows;
  std::map<std::vector<std::string>, uint32_t> row_of_values;
  std::vector<uint32_t> row_of_set(p.label_sets.size(), UINT32_MAX);
  for (const Sample& s : p.samples) {
    if (s.label_set >= row_of_set.size() || s.vm_state >= kVmStateCount) continue;
    uint32_t& row = row_of_set[s.label_set];
    if (row == UINT32_MAX) {
      std::vector<std::string> values(keys.size());
      for (const Label& label : p.label_sets[s.label_set]) {
        const std::string key = label_value::to_s(label.key);
        for (size_t k = 0; k < keys.size(); k++) {
          if (keys[k] == key) values[k] = label_value::to_s(label.value);
        }
      }
      auto [it, added] = row_of_values.emplace(values, static_cast<uint32_t>(rows.size()));
      if (added) rows.push_back(LabelStateTotal{std::move(values), {}});
      row = it->second;
    }
    rows[row].weight_ns[s.vm_state] += s.weight_ns;
  }
  return rows;
}

std::vector<LabelKeyTotal> label_key_totals(const std::vector<LabelTexts>& sets, const std::vector<uint32_t>& row_sets,
                                            const std::vector<int64_t>& row_weights) {
  // Each set's weight first: sets are few, rows many.
  std::vector<int64_t> set_weight(sets.size(), 0);
  std::vector<bool> used(sets.size(), false);
  int64_t total = 0;
  for (size_t i = 0; i < row_sets.size() && i < row_weights.size(); i++) {
    if (row_sets[i] >= sets.size()) continue;
    set_weight[row_sets[i]] += row_weights[i];
    used[row_sets[i]] = true;
    total += row_weights[i];
  }
  std::map<std::string, std::map<std::string, int64_t>> by_key;
  for (size_t s = 0; s < sets.size(); s++) {
    if (!used[s]) continue;
    for (const auto& [key, value] : sets[s]) by_key[key][value] += set_weight[s];
  }
  std::vector<LabelKeyTotal> out;
  for (auto& [key, values] : by_key) {
    LabelKeyTotal k{key, {values.begin(), values.end()}, total};
    for (const auto& v : k.values) k.unset -= v.second;
    std::stable_sort(k.values.begin(), k.values.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    out.push_back(std::move(k));
  }
  return out;
}

}  // namespace rperf
