#include "views/source_lines.hh"

#include <algorithm>
#include <map>

#include "views/functions.hh"

namespace rperf {

bool has_frame_path(const Profile& p, const std::string& path) {
  const std::vector<Frame>& frames = p.frames.all();
  return std::any_of(frames.begin(), frames.end(), [&](const Frame& f) { return f.path == path; });
}

SourceLines source_lines(const Profile& p, const SampleFilter& filter, const std::string& path) {
  SourceLines out;
  // An entry per line of the file's frames, by line, and one for the leaves elsewhere.
  std::map<int32_t, uint32_t> entry_of_line;
  std::vector<uint32_t> entry_of_frame(p.frames.size(), UINT32_MAX);
  for (uint32_t id = 0; id < p.frames.size(); id++) {
    if (!p.has_lines || p.frames[id].path != path) continue;
    entry_of_frame[id] = entry_of_line.emplace(p.frames[id].line, static_cast<uint32_t>(entry_of_line.size())).first->second;
  }
  const uint32_t elsewhere = static_cast<uint32_t>(entry_of_line.size());
  SelfTotals totals(elsewhere + 1);
  std::vector<bool> on_a_stack(elsewhere, false);
  for (const Sample& s : p.samples) {
    int64_t weight;
    if (!filter.keeps(p, s, weight)) continue;
    out.kept_ns += weight;
    FrameSpan stack = p.stacks[s.stack];
    const uint32_t leaf = stack.empty() ? UINT32_MAX : entry_of_frame[stack[0]];
    totals.add(leaf == UINT32_MAX ? elsewhere : leaf, weight, [&](auto&& visit) {
      for (uint32_t frame : stack) {
        if (entry_of_frame[frame] == UINT32_MAX) continue;
        on_a_stack[entry_of_frame[frame]] = true;
        visit(entry_of_frame[frame]);
      }
    });
  }
  for (const auto& [line, e] : entry_of_line) {
    if (on_a_stack[e]) out.lines.push_back(LineWeight{line, totals.self_ns[e], totals.total_ns[e]});
  }
  return out;
}

}  // namespace rperf
