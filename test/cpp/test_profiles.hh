// Profiles for the C++ tests, written compactly: frames, then samples as (leaf-first frame
// indexes, weight, thread, label set).
#pragma once
#include <string>
#include <vector>

#include "profile/label_value.hh"
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

// A label as rperf sets them: a Symbol key, a String (or, `integer`, an Integer) value.
struct LabelSpec {
  std::string key;
  std::string value;
  bool integer = false;
};

inline LabelSet labels(const std::vector<LabelSpec>& specs) {
  LabelSet set;
  for (const LabelSpec& l : specs) {
    set.push_back(Label{label_value::symbol(l.key), l.integer ? label_value::integer(std::stoll(l.value)) : label_value::string(l.value)});
  }
  return set;
}

// A label's key or value as text (its to_s).
inline std::string text(const std::string& encoded) { return label_value::to_s(encoded); }

inline Profile make_profile(const std::vector<FrameSpec>& frames, const std::vector<SampleSpec>& samples,
                            const std::vector<std::vector<LabelSpec>>& label_sets = {}, bool lines = true) {
  Profile p;
  p.has_lines = lines;
  p.header.set("mode", JsonValue::symbol("wall"));
  p.header.set("frequency", JsonValue::integer(1000));
  std::vector<uint32_t> ids;
  for (const FrameSpec& f : frames) ids.push_back(p.frames.intern(f.path, f.label, f.line));
  for (const std::vector<LabelSpec>& set : label_sets) p.label_sets.intern(labels(set));
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
