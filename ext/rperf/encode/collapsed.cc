// Collapsed stacks (FlameGraph, speedscope): "root;...;leaf weight\n", one line per unique
// stack. A ';' or line break inside a name would split a frame or a line, so they become ':'
// and ' '.
#include <unordered_map>
#include <utility>
#include <vector>

#include "profile.hh"

namespace rperf {

namespace {
std::string escape_frame(const std::string& name) {
  std::string out = valid_utf8(name);
  for (char& c : out) {
    if (c == ';') c = ':';
    else if (c == '\n' || c == '\r') c = ' ';
  }
  return out;
}
}  // namespace

std::string encode_collapsed(const Profile& p) {
  std::vector<std::string> names(p.frames.size());
  for (size_t i = 0; i < p.frames.size(); i++) names[i] = escape_frame(p.frames[i].label);
  // Samples that differ only by thread, labels or line numbers collapse into one line, in
  // order of first appearance (hashing beats ordered compares of long shared prefixes).
  std::unordered_map<std::string, size_t> index;
  std::vector<std::pair<const std::string*, int64_t>> stacks;
  std::string line;
  for (const ProfileSample& s : p.samples) {
    line.clear();
    if (s.frames.empty()) line = kNoRubyFrames;
    for (size_t i = s.frames.size(); i-- > 0;) {
      line += names[s.frames[i]];
      if (i) line += ';';
    }
    auto [it, inserted] = index.emplace(line, stacks.size());
    if (inserted) stacks.emplace_back(&it->first, 0);
    stacks[it->second].second += s.weight_ns;
  }
  std::string out;
  for (const auto& [stack, weight] : stacks) {
    out += *stack;
    out += ' ';
    out += std::to_string(weight);
    out += '\n';
  }
  return out;
}

}  // namespace rperf
