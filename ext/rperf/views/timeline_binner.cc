#include "views/timeline_binner.hh"

#include <algorithm>
#include <cmath>

namespace rperf {

TimelineBinner::TimelineBinner(uint32_t bins, int64_t end_ns) {
  out_.bins = std::max<uint32_t>(bins, 1);
  out_.end_ns = std::max<int64_t>(end_ns, 1);
  out_.bin_ns = static_cast<double>(out_.end_ns) / out_.bins;
}

uint32_t TimelineBinner::leaf_name(const std::string& label) {
  auto [it, added] = name_index_.emplace(label, static_cast<uint32_t>(out_.leaf_names.size()));
  if (added) out_.leaf_names.push_back(label);
  return it->second;
}

bool TimelineBinner::covers(int64_t time_ns, int64_t weight_ns, const SampleFilter& filter, double& from, double& to) {
  int64_t kept_from, kept_to;
  if (weight_ns <= 0 || !filter.covered(time_ns, weight_ns, kept_from, kept_to)) return false;
  kept_from = std::max<int64_t>(kept_from, 0);  // the axis starts at 0
  from = static_cast<double>(kept_from);
  to = static_cast<double>(kept_to);
  return to > from;
}

void TimelineBinner::add_interval(uint32_t thread_seq, TimelineState state, double from, double to, int64_t kept, uint32_t name) {
  out_.kept_ns += kept;
  bool added;
  uint32_t t = thread_index_.find_or_add(thread_seq, added);
  if (added) {
    out_.threads.push_back(thread_seq);
    out_.occupancy.resize(out_.occupancy.size() + static_cast<size_t>(kTimelineStates) * out_.bins, 0.0);
  }
  double* row = &out_.occupancy[(static_cast<size_t>(t) * kTimelineStates + static_cast<size_t>(state)) * out_.bins];
  const double bin_ns = out_.bin_ns;
  for (uint32_t b = static_cast<uint32_t>(std::floor(from / bin_ns)); b < out_.bins && b * bin_ns < to; b++) {
    double overlap = std::min(to, (b + 1) * bin_ns) - std::max(from, b * bin_ns);
    if (overlap <= 0) continue;
    row[b] += overlap;
    leaf_weight_[(static_cast<uint64_t>(b) << 32) | name] += overlap;
  }
}

TimelineBins TimelineBinner::finish() {
  TimelineBins out = std::move(out_);
  // Threads ascending, their rows moved with them.
  std::vector<uint32_t> order(out.threads.size());
  for (uint32_t i = 0; i < order.size(); i++) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return out.threads[a] < out.threads[b]; });
  std::vector<uint32_t> threads;
  std::vector<double> occupancy;
  threads.reserve(order.size());
  occupancy.reserve(out.occupancy.size());
  const size_t per_thread = static_cast<size_t>(kTimelineStates) * out.bins;
  for (uint32_t i : order) {
    threads.push_back(out.threads[i]);
    occupancy.insert(occupancy.end(), out.occupancy.begin() + static_cast<std::ptrdiff_t>(i * per_thread),
                     out.occupancy.begin() + static_cast<std::ptrdiff_t>((i + 1) * per_thread));
  }
  out.threads = std::move(threads);
  out.occupancy = std::move(occupancy);

  // Per bin, the heaviest leaves (ties: the name first seen first).
  std::vector<std::vector<std::pair<double, uint32_t>>> per_bin(out.bins);
  for (const auto& [key, ns] : leaf_weight_) per_bin[key >> 32].emplace_back(ns, static_cast<uint32_t>(key & 0xffffffffu));
  out.top.resize(out.bins);
  for (uint32_t b = 0; b < out.bins; b++) {
    auto& leaves = per_bin[b];
    size_t n = std::min(leaves.size(), TimelineBins::kTopLeaves);
    std::partial_sort(leaves.begin(), leaves.begin() + static_cast<std::ptrdiff_t>(n), leaves.end(),
                      [](const auto& a, const auto& b2) { return a.first != b2.first ? a.first > b2.first : a.second < b2.second; });
    for (size_t i = 0; i < n; i++) out.top[b].push_back(leaves[i].second);
  }
  leaf_weight_.clear();
  name_index_.clear();
  return out;
}

}  // namespace rperf
