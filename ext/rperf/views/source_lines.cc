#include "views/source_lines.hh"

#include <algorithm>
#include <unordered_map>

namespace rperf {

bool has_frame_path(const Profile& p, const std::string& path) {
  const std::vector<Frame>& frames = p.frames.all();
  return std::any_of(frames.begin(), frames.end(), [&](const Frame& f) { return f.path == path; });
}

SourceLines source_lines(const Profile& p, const SampleFilter& filter, const std::string& path) {
  SourceLines out;
  std::vector<bool> in_file(p.frames.size());
  for (uint32_t id = 0; id < p.frames.size(); id++) in_file[id] = p.has_lines && p.frames[id].path == path;
  std::unordered_map<int32_t, uint32_t> index;  // line -> its entry in out.lines
  std::vector<size_t> last_sample;              // per entry: the sample that last added to its total
  for (size_t i = 0; i < p.samples.size(); i++) {
    const Sample& s = p.samples[i];
    int64_t weight;
    if (!filter.keeps(p, s, weight)) continue;
    out.kept_ns += weight;
    FrameSpan stack = p.stacks[s.stack];
    for (size_t depth = 0; depth < stack.size(); depth++) {
      if (!in_file[stack[depth]]) continue;
      auto [it, added] = index.emplace(p.frames[stack[depth]].line, static_cast<uint32_t>(out.lines.size()));
      if (added) {
        out.lines.push_back(LineWeight{it->first, 0, 0});
        last_sample.push_back(SIZE_MAX);
      }
      LineWeight& lw = out.lines[it->second];
      if (depth == 0) lw.self_ns += weight;
      if (last_sample[it->second] != i) {
        last_sample[it->second] = i;
        lw.total_ns += weight;
      }
    }
  }
  std::sort(out.lines.begin(), out.lines.end(), [](const LineWeight& a, const LineWeight& b) { return a.line < b.line; });
  return out;
}

}  // namespace rperf
