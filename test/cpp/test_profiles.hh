// Profiles for the C++ tests, written compactly: frames, then samples as (leaf-first frame
// indexes, weight, thread, label set).
#pragma once
#include <string>
#include <vector>

#include "profile/profile.hh"

namespace rperf::fixtures {

struct FrameSpec {
  std::string path, label;
  int32_t line = 0;
};
struct SampleSpec {
  std::vector<uint32_t> frames;  // indexes into the FrameSpec list, leaf first
  int64_t weight;
  uint32_t thread_seq = 1;
  uint32_t label_set = 0;
  VmState state = kRunning;
  int64_t time_ns = 0;
};

inline Profile make_profile(const std::vector<FrameSpec>& frames, const std::vector<SampleSpec>& samples,
                            const std::vector<LabelSet>& label_sets = {}, bool lines = true) {
  Profile p;
  p.has_lines = lines;
  p.attributes.set("mode", JsonValue::symbol("wall"));
  p.attributes.set("frequency", JsonValue::integer(1000));
  std::vector<uint32_t> ids;
  for (const FrameSpec& f : frames) ids.push_back(p.frames.intern(f.path, f.label, f.line));
  for (const LabelSet& set : label_sets) p.label_sets.intern(set);
  for (const SampleSpec& s : samples) {
    std::vector<uint32_t> stack;
    for (uint32_t f : s.frames) stack.push_back(ids[f]);
    p.samples.push_back(Sample{p.stacks.intern(stack), s.thread_seq, s.label_set, s.state, s.weight, s.time_ns});
  }
  return p;
}

// Frames of `stack` as "label:line" joined by ';', root first (easy to compare).
inline std::string stack_text(const Profile& p, uint32_t stack) {
  std::string out;
  FrameSpan span = p.stacks[stack];
  for (size_t i = span.size(); i-- > 0;) {
    const Frame& f = p.frames[span[i]];
    if (!out.empty()) out += ';';
    out += f.label + ":" + std::to_string(f.line);
  }
  return out;
}

}  // namespace rperf::fixtures
