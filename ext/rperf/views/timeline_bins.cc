#include "views/timeline_bins.hh"

#include <algorithm>
#include <cmath>

#include "profile/label_value.hh"

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

void TimelineBinner::add_interval(uint32_t thread_seq, TimelineState state, double from, double to, int64_t kept, uint32_t name) {
  out_.kept_ns += kept;
  std::vector<double>& rows = occupancy_[thread_seq];
  if (rows.empty()) rows.resize(static_cast<size_t>(kTimelineStates) * out_.bins, 0.0);
  double* row = &rows[static_cast<size_t>(state) * out_.bins];
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
  for (const auto& [thread, rows] : occupancy_) {  // threads ascending
    out.threads.push_back(thread);
    out.occupancy.insert(out.occupancy.end(), rows.begin(), rows.end());
  }

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
  occupancy_.clear();
  leaf_weight_.clear();
  name_index_.clear();
  return out;
}

TimelineState timeline_state(const LabelSet& set) {
  std::vector<std::pair<std::string, std::string>> texts;
  texts.reserve(set.size());
  for (const Label& l : set) texts.emplace_back(label_value::to_s(l.key), label_value::to_s(l.value));
  return timeline_state(texts);
}

TimelineBins bin_timeline(const Profile& p, const SampleFilter& filter, uint32_t bins, int64_t min_end_ns) {
  int64_t end_ns = min_end_ns;
  for (const Sample& s : p.samples) end_ns = std::max(end_ns, s.time_ns);
  TimelineBinner binner(bins, end_ns);
  TimelineStates states(p);
  std::vector<uint32_t> name_of_frame(p.frames.size(), UINT32_MAX);
  uint32_t no_frames_name = UINT32_MAX;
  auto leaf_name = [&](FrameSpan stack) {
    uint32_t& known = stack.empty() ? no_frames_name : name_of_frame[stack[0]];
    if (known == UINT32_MAX) known = binner.leaf_name(stack.empty() ? std::string(kNoRubyFrames) : p.frames[stack[0]].label);
    return known;
  };
  for (const Sample& s : p.samples) {
    int64_t kept;
    if (s.weight_ns <= 0 || !filter.keeps(p, s, kept)) continue;
    binner.add(s.thread_seq, states.of(s), s.time_ns, s.weight_ns, kept, filter, [&] { return leaf_name(p.stacks[s.stack]); });
  }
  return binner.finish();
}

}  // namespace rperf
