#include "profile/timeline_bins.hh"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "profile/label_value.hh"

namespace rperf {

TimelineState timeline_state(const LabelSet& set) {
  bool gc = false;
  for (const Label& l : set) {
    std::string key = label_value::to_s(l.key);
    if (key == "%GVL") {
      std::string value = label_value::to_s(l.value);
      if (value == "blocked") return kTimelineBlocked;
      if (value == "wait") return kTimelineWait;
    } else if (key == "%GC") {
      gc = true;
    }
  }
  return gc ? kTimelineGc : kTimelineRunning;
}

TimelineState timeline_state(VmState state) {
  switch (state) {
    case kGvlBlocked: return kTimelineBlocked;
    case kGvlWait: return kTimelineWait;
    case kGcMark:
    case kGcSweep: return kTimelineGc;
    default: return kTimelineRunning;
  }
}

TimelineBins bin_timeline(const Profile& p, const SampleFilter& filter, uint32_t bins, int64_t min_end_ns) {
  TimelineBins out;
  out.bins = std::max<uint32_t>(bins, 1);
  out.end_ns = std::max<int64_t>(min_end_ns, 1);
  for (const Sample& s : p.samples) out.end_ns = std::max(out.end_ns, s.time_ns);
  out.bin_ns = static_cast<double>(out.end_ns) / out.bins;

  std::vector<int8_t> state_of(p.label_sets.size(), -1);  // by label set, read once
  std::vector<int32_t> thread_index;                     // by thread_seq: into out.threads, -1 none yet
  std::vector<uint32_t> name_of_frame(p.frames.size(), UINT32_MAX);
  std::unordered_map<std::string, uint32_t> name_index;
  uint32_t no_frames_name = UINT32_MAX;
  auto leaf_name = [&](FrameSpan stack) {
    uint32_t& known = stack.empty() ? no_frames_name : name_of_frame[stack[0]];
    if (known == UINT32_MAX) {
      const std::string& label = stack.empty() ? std::string(kNoRubyFrames) : p.frames[stack[0]].label;
      auto [it, added] = name_index.emplace(label, static_cast<uint32_t>(out.leaf_names.size()));
      if (added) out.leaf_names.push_back(label);
      known = it->second;
    }
    return known;
  };
  // (bin, leaf name) -> ns, for the hover's heaviest leaves
  std::unordered_map<uint64_t, double> leaf_weight;
  const double bin_ns = out.bin_ns;
  for (const Sample& s : p.samples) {
    int64_t kept;
    if (s.weight_ns <= 0 || !filter.keeps(p, s, kept)) continue;
    double from = static_cast<double>(std::max<int64_t>(0, s.time_ns - s.weight_ns));
    double to = static_cast<double>(s.time_ns);
    if (filter.by_range) {
      from = std::max(from, static_cast<double>(filter.from_ns));
      to = std::min(to, static_cast<double>(filter.to_ns));
    }
    if (to <= from) continue;
    out.kept_ns += kept;
    if (s.thread_seq >= thread_index.size()) thread_index.resize(s.thread_seq + 1, -1);
    int32_t& t = thread_index[s.thread_seq];
    if (t < 0) {
      t = static_cast<int32_t>(out.threads.size());
      out.threads.push_back(s.thread_seq);
      out.occupancy.resize(out.occupancy.size() + static_cast<size_t>(kTimelineStates) * out.bins, 0.0);
    }
    int8_t state = static_cast<int8_t>(timeline_state(s.vm_state));
    if (state == kTimelineRunning) {
      int8_t& of_set = state_of[s.label_set];
      if (of_set < 0) of_set = static_cast<int8_t>(timeline_state(p.label_sets[s.label_set]));
      state = of_set;
    }
    double* row = &out.occupancy[(static_cast<size_t>(t) * kTimelineStates + static_cast<size_t>(state)) * out.bins];
    uint64_t name = leaf_name(p.stacks[s.stack]);
    for (uint32_t b = static_cast<uint32_t>(std::floor(from / bin_ns)); b < out.bins && b * bin_ns < to; b++) {
      double overlap = std::min(to, (b + 1) * bin_ns) - std::max(from, b * bin_ns);
      if (overlap <= 0) continue;
      row[b] += overlap;
      leaf_weight[(static_cast<uint64_t>(b) << 32) | name] += overlap;
    }
  }

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
  for (const auto& [key, ns] : leaf_weight) per_bin[key >> 32].emplace_back(ns, static_cast<uint32_t>(key & 0xffffffffu));
  out.top.resize(out.bins);
  for (uint32_t b = 0; b < out.bins; b++) {
    auto& leaves = per_bin[b];
    size_t n = std::min(leaves.size(), TimelineBins::kTopLeaves);
    std::partial_sort(leaves.begin(), leaves.begin() + static_cast<std::ptrdiff_t>(n), leaves.end(),
                      [](const auto& a, const auto& b2) { return a.first != b2.first ? a.first > b2.first : a.second < b2.second; });
    for (size_t i = 0; i < n; i++) out.top[b].push_back(leaves[i].second);
  }
  return out;
}

}  // namespace rperf
