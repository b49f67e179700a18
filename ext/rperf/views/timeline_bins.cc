#include "views/timeline_bins.hh"

#include <algorithm>

#include "profile/label_value.hh"

namespace rperf {

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
