#include "profile/frame_methods.hh"

#include <string>

namespace rperf {

FrameMethods frame_methods(const Profile& p, bool by_label) {
  FrameMethods m;
  m.of_frame.resize(p.frames.size());
  FrameTable methods;  // (path, label) at line 0: one entry per method
  std::vector<int32_t> start, lowest;
  for (uint32_t i = 0; i < p.frames.size(); i++) {
    const Frame& f = p.frames[i];
    uint32_t id = methods.intern(by_label ? std::string() : f.path, f.label, 0);
    if (id == m.first_frame.size()) {
      m.first_frame.push_back(i);
      start.push_back(0);
      lowest.push_back(0);
    }
    m.of_frame[i] = id;
    if (f.start_line > 0) start[id] = f.start_line;
    if (f.line > 0 && (lowest[id] == 0 || f.line < lowest[id])) lowest[id] = f.line;
  }
  m.lines.resize(start.size());
  for (size_t id = 0; id < start.size(); id++) m.lines[id] = start[id] ? start[id] : lowest[id];
  return m;
}

}  // namespace rperf
