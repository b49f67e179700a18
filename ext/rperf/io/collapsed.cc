// Collapsed stacks (FlameGraph, speedscope): "root;...;leaf weight\n", one line per unique
// stack. A ';' or line break inside a name would split a frame or a line, so they become ','
// (as rperf 0.11 does) and ' '. The allocation view (`allocations`) weighs allocation samples
// by estimated objects, with the class as an extra leaf frame ("...;Foo#bar;String#+;String").
#include <unordered_map>
#include <utility>
#include <vector>

#include "io/encoders.hh"
#include "io/output.hh"

namespace rperf {

namespace {
std::string escape_frame(const std::string& name) {
  std::string out = valid_utf8(name);
  for (char& c : out) {
    if (c == ';') c = ',';
    else if (c == '\n' || c == '\r') c = ' ';
  }
  return out;
}

// A stack as the ids of its frame names, root first (frames that differ only by line share
// a name): hashing 40 ids is far cheaper than hashing the 1 KB line they print as.
struct NameStackHash {
  size_t operator()(const std::vector<uint32_t>& ids) const {
    uint64_t h = 1469598103934665603ull;
    for (uint32_t id : ids) h = (h ^ id) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};
}  // namespace

void encode_collapsed(const Profile& p, Output& out, bool allocations) {
  std::vector<std::string> names;
  std::vector<uint32_t> name_of_frame(p.frames.size());
  std::unordered_map<std::string, uint32_t> name_ids;
  for (size_t i = 0; i < p.frames.size(); i++) {
    auto [it, inserted] = name_ids.emplace(escape_frame(p.frames[static_cast<uint32_t>(i)].label), static_cast<uint32_t>(names.size()));
    if (inserted) names.push_back(it->first);
    name_of_frame[i] = it->second;
  }
  // Samples that differ only by thread, labels or line numbers collapse into one line, in
  // order of first appearance.
  std::unordered_map<std::vector<uint32_t>, size_t, NameStackHash> index;
  std::vector<std::pair<const std::vector<uint32_t>*, int64_t>> stacks;
  std::vector<uint32_t> key;
  auto add = [&](uint32_t stack, int64_t weight, const std::string* leaf) {
    key.clear();
    FrameSpan frames = p.stacks[stack];
    for (size_t i = frames.size(); i-- > 0;) key.push_back(name_of_frame[frames[i]]);
    if (leaf) {
      auto [name, inserted] = name_ids.emplace(escape_frame(*leaf), static_cast<uint32_t>(names.size()));
      if (inserted) names.push_back(name->first);
      key.push_back(name->second);
    }
    auto [it, inserted] = index.emplace(key, stacks.size());
    if (inserted) stacks.emplace_back(&it->first, 0);
    stacks[it->second].second += weight;
  };
  if (allocations) {
    for (const AllocationSample& a : p.allocations) add(a.stack, a.count, &p.class_names[static_cast<uint32_t>(a.type)]);
  } else {
    for (const Sample& s : p.samples) add(s.stack, s.weight_ns, nullptr);
  }
  for (const auto& [stack, weight] : stacks) {
    if (out.failed()) break;
    if (stack->empty()) out.append(kNoRubyFrames, std::char_traits<char>::length(kNoRubyFrames));
    for (size_t i = 0; i < stack->size(); i++) {
      if (i) out.append(';');
      out.append(names[(*stack)[i]]);
    }
    out.append(' ');
    out.append_int(weight);
    out.append('\n');
  }
}

}  // namespace rperf
