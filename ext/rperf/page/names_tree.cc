#include "page/names_tree.hh"

namespace rperf::page {

StackTree names_tree(const std::vector<NamesSample>& samples) {
  Profile p;
  std::vector<uint32_t> frames;
  for (const NamesSample& s : samples) {
    frames.clear();
    for (auto name = s.stack.rbegin(); name != s.stack.rend(); ++name) frames.push_back(p.frames.intern(std::string(), *name, 0));
    p.samples.push_back(Sample{p.stacks.intern(frames), 0, s.label_set, kRunning, s.weight, 0});
  }
  return build_stack_tree(p, p.samples, StackTreeOptions());
}

}  // namespace rperf::page
